package dev.stoker.formats;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.stoker.Loader;
import dev.stoker.LoaderException;
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

    /** Reads a damaged file completely with the format's reader. */
    private interface Reader {
        void readAll(Path p) throws IOException;
    }

    /** {@code n} mutants of {@code good}, each read by {@code reader}; returns how many were refused. */
    private int fuzz(String what, byte[] good, String suffix, int n, Reader reader) throws IOException {
        SplittableRandom r = new SplittableRandom(what.hashCode());
        int refused = 0;
        for (int i = 0; i < n; i++) {
            byte[] b = mutate(good, r);
            Path p = tmp.resolve(what + "-" + i + suffix);
            Files.write(p, b);
            try {
                reader.readAll(p);
            } catch (IOException e) {
                refused++;
                assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), what + " mutant " + i + ": an error without words");
            } catch (LoaderException e) {
                refused++;
                assertTrue(e.getCause() instanceof IOException, what + " mutant " + i + ": " + e);
            } catch (RuntimeException | OutOfMemoryError | StackOverflowError e) {
                fail(what + " mutant " + i + " (" + describe(good, b) + "): " + e, e);
            } finally {
                Files.deleteIfExists(p);
            }
        }
        // the mutants are damaged enough to be refused often: a fuzz that only ever reads good files tests nothing
        assertTrue(refused > n / 10, what + ": only " + refused + " of " + n + " mutants refused");
        return refused;
    }

    private static String describe(byte[] good, byte[] b) {
        if (b.length != good.length) {
            return "cut to " + b.length + " of " + good.length + " bytes";
        }
        for (int i = 0; i < b.length; i++) {
            if (b[i] != good[i]) {
                return "first change at byte " + i;
            }
        }
        return "unchanged";
    }

    /** A truncation, a few bit flips, or a 4- or 8-byte field overwritten with an extreme value. */
    static byte[] mutate(byte[] good, SplittableRandom r) {
        byte[] b = good.clone();
        switch (r.nextInt(4)) {
            case 0 -> {
                return java.util.Arrays.copyOf(b, r.nextInt(b.length));
            }
            case 1 -> {
                for (int k = 1 + r.nextInt(4); k > 0; k--) {
                    int at = r.nextInt(b.length);
                    b[at] ^= (byte) (1 << r.nextInt(8));
                }
            }
            default -> {
                // in the first kilobyte, where headers, lengths and offsets live
                int width = r.nextBoolean() ? 4 : 8;
                int at = r.nextInt(Math.max(1, Math.min(b.length, 1024) - width));
                long[] extremes = {0, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 40, 7};
                long v = extremes[r.nextInt(extremes.length)];
                for (int k = 0; k < width && at + k < b.length; k++) {
                    b[at + k] = (byte) (v >>> (8 * k));
                }
            }
        }
        return b;
    }

    private static Path fixture(String name) {
        return Fixtures.dir().resolve(name);
    }

    @Test
    void npyFiles() throws IOException {
        for (String f : List.of("i4_le.npy", "f8_be.npy", "fortran_i4.npy", "padded_u4.npy", "b1_na.npy")) {
            fuzz("npy-" + f, Files.readAllBytes(fixture("npy/" + f)), ".npy", 150, p -> {
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
                Files.write(Path.of(prefix + ".idx"), damageIndex ? mutate(idx, r) : idx);
                Files.write(Path.of(prefix + ".bin"), damageIndex ? bin : mutate(bin, r));
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
    void hdf5Files() throws IOException {
        for (String f : List.of("default.h5", "latest.h5")) {
            fuzz("h5-" + f, Files.readAllBytes(fixture("hdf5/" + f)), ".h5", 150, p -> {
                try (Hdf5Dataset d = new Hdf5Dataset(p, List.of("/x"));
                     Loader l = Loader.builder(d).batchSize(16).workers(0).build()) {
                    l.forEach(b -> { });
                }
            });
        }
    }

    @Test
    void jsonLines() throws IOException {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            text.append("{\"text\": \"line ").append(i).append(" with \\\"quotes\\\" and \\u00e9\", \"n\": ").append(i).append("}\n");
        }
        byte[] good = text.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        fuzz("jsonl", good, ".jsonl", 200, p -> {
            try (JsonlDataset d = new JsonlDataset(p);
                 Loader l = Loader.builder(d, d.text("text"), dev.stoker.Collator.bytes("text", 64)).batchSize(16).workers(0).build()) {
                l.forEach(b -> { });
            }
        });
        fuzz("jsonl-tokens", good, ".jsonl", 200, p -> {
            JsonlTokens t = new JsonlTokens(List.of(p), Tokenizer.named("bytes"), "text", 16, 1 << 20, false);
            try (Loader l = Loader.builder(t, t.collator(dev.stoker.DType.INT64)).batchSize(4).workers(0).build()) {
                l.forEach(b -> { });
            }
        });
    }
}
