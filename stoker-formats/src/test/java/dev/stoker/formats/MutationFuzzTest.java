package dev.stoker.formats;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.stoker.Loader;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.npy.NpyArray;
import dev.stoker.formats.text.JsonlDataset;
import dev.stoker.formats.tokens.Megatron;
import dev.stoker.formats.tokens.TokenStagesTest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every parser, fed damaged copies of files real tools wrote (truncations, bit flips, length and
 * offset fields overwritten with extreme values), either reads them or fails with an
 * {@link IOException} (the documented kind: it names the file and where): never another
 * exception (an index out of bounds, a negative array size, an arithmetic error), never an
 * OutOfMemoryError, never a hang.
 */
@Timeout(120)
class MutationFuzzTest {
    @TempDir
    Path tmp;

    private static Path fixture(String name) {
        return Fixtures.dir().resolve(name);
    }

    @Test
    void npyFiles() throws IOException {
        for (String f : List.of("i4_le.npy", "f8_be.npy", "fortran_i4.npy", "padded_u4.npy", "b1_na.npy")) {
            Mutants.fuzz(tmp, "npy-" + f, Files.readAllBytes(fixture("npy/" + f)), ".npy", 150, p -> {
                try (NpyArray a = Npy.read(p)) {
                    a.elements();
                }
            });
        }
    }

    @Test
    void megatronIndexesAndData() throws IOException {
        byte[] idx = Files.readAllBytes(fixture("megatron/docs.idx"));
        byte[] bin = Files.readAllBytes(fixture("megatron/docs.bin"));
        for (boolean damageIndex : new boolean[] {true, false}) {
            SplittableRandom r = new SplittableRandom(damageIndex ? 1 : 2);
            for (int i = 0; i < 300; i++) {
                Path prefix = tmp.resolve("m" + i);
                Files.write(Path.of(prefix + ".idx"), damageIndex ? Mutants.mutate(idx, r) : idx);
                Files.write(Path.of(prefix + ".bin"), damageIndex ? bin : Mutants.mutate(bin, r));
                try (Megatron m = Megatron.open(Path.of(prefix + ".idx"))) {
                    for (long s = 0; s < m.sequences(); s++) {
                        m.sequenceLength(s);
                        m.sequenceStart(s);
                    }
                } catch (IOException e) {
                    assertTrue(e.getMessage() != null, "an error without words");
                } catch (RuntimeException | OutOfMemoryError e) {
                    fail("megatron mutant " + i + " (" + (damageIndex ? "index" : "data") + "): " + e, e);
                } finally {
                    Files.deleteIfExists(Path.of(prefix + ".idx"));
                    Files.deleteIfExists(Path.of(prefix + ".bin"));
                }
            }
        }
    }

    @Test
    void jsonLines() throws IOException {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            text.append("{\"text\": \"line ").append(i).append(" with \\\"quotes\\\" and \\u00e9\", \"n\": ").append(i).append("}\n");
        }
        byte[] good = text.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Mutants.fuzz(tmp, "jsonl", good, ".jsonl", 200, p -> {
            try (JsonlDataset d = new JsonlDataset(p);
                 Loader l = Loader.builder(d, d.text("text"), dev.stoker.Collator.bytes("text", 64)).batchSize(16).workers(0).build()) {
                l.forEach(b -> { });
            }
        });
        Mutants.fuzz(tmp, "jsonl-tokens", good, ".jsonl", 200, p -> {
            try (Loader l = TokenStagesTest.Packed.bytes(p, 16, 1 << 20).builder(dev.stoker.DType.INT64).batchSize(4).workers(0).build()) {
                l.forEach(b -> { });
            }
        });
    }
}
