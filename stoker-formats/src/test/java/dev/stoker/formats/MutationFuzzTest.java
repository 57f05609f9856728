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

    /** A copy of an interop fixture's folder (the committed files stay as they are). */
    private Path copy(String folder) throws IOException {
        Path from = Path.of("src/test/resources/interop").resolve(folder);
        Path to = Files.createDirectories(tmp.resolve(folder.replace('/', '-')));
        try (var files = Files.list(from)) {
            for (Path f : files.toList()) {
                Files.copy(f, to.resolve(f.getFileName()));
            }
        }
        return to;
    }

    /** A small tar shard of a few samples, one of them larger than a block. */
    private byte[] tar() throws IOException {
        Path p = tmp.resolve("good.tar");
        try (dev.stoker.formats.io.TarWriter w = new dev.stoker.formats.io.TarWriter(p)) {
            java.util.Random r = new java.util.Random(5);
            for (int i = 0; i < 6; i++) {
                byte[] b = new byte[100 + 700 * i];
                r.nextBytes(b);
                w.write("s" + i, java.util.Map.of("bin", b, "cls", Integer.toString(i).getBytes()));
            }
        }
        return Files.readAllBytes(p);
    }

    private static void readShard(Path p) throws IOException {
        try (var r = new dev.stoker.formats.tar.TarShards(List.of(p)).open(0)) {
            while (r.next() != null) {
                // read on
            }
        }
    }

    @Test
    void compressedTarShardsNameTheShard() throws IOException {
        byte[] tar = tar();
        java.io.ByteArrayOutputStream zst = new java.io.ByteArrayOutputStream();
        try (var out = new com.github.luben.zstd.ZstdOutputStream(zst)) {
            out.write(tar);
        }
        java.io.ByteArrayOutputStream lz4 = new java.io.ByteArrayOutputStream();
        try (var out = new net.jpountz.lz4.LZ4FrameOutputStream(lz4)) {
            out.write(tar);
        }
        java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
        try (var out = new java.util.zip.GZIPOutputStream(gz)) {
            out.write(tar);
        }
        Mutants.fuzzNaming("tar.zst", zst.toByteArray(), tmp.resolve("shard.tar.zst"), 200, MutationFuzzTest::readShard);
        Mutants.fuzzNaming("tar.lz4", lz4.toByteArray(), tmp.resolve("shard.tar.lz4"), 200, MutationFuzzTest::readShard);
        Mutants.fuzzNaming("tar.gz", gz.toByteArray(), tmp.resolve("shard.tar.gz"), 200, MutationFuzzTest::readShard);
        Mutants.fuzzNaming("tar", tar, tmp.resolve("shard.tar"), 200, MutationFuzzTest::readShard);
    }

    private static void readRecords(dev.stoker.formats.records.RecordSource s) throws IOException {
        try (s) {
            for (long i = 0; i < s.size(); i++) {
                s.get(i);
            }
        }
    }

    @Test
    void litDataChunksPlainAndZstdNameTheChunk() throws IOException {
        for (String folder : List.of("litdata/zstd", "litdata/pytree")) {
            Path dir = copy(folder);
            Path chunk = dir.resolve(folder.endsWith("zstd") ? "chunk-0-1.zstd.bin" : "chunk-0-1.bin");
            Mutants.fuzzNaming(folder, Files.readAllBytes(chunk), chunk, 200,
                    p -> readRecords(dev.stoker.formats.litdata.LitDataset.open(dir, 0, null)));
        }
    }

    @Test
    void mdsShardsPlainAndZstdNameTheShard() throws IOException {
        for (String folder : List.of("mds/zstd", "mds/all")) {
            Path dir = copy(folder);
            Path shard = dir.resolve(folder.endsWith("zstd") ? "shard.00001.mds.zstd" : "shard.00001.mds");
            Mutants.fuzzNaming(folder, Files.readAllBytes(shard), shard, 200,
                    p -> readRecords(dev.stoker.formats.mds.MdsDataset.open(dir)));
        }
    }

    @Test
    void arrowFilesNameTheFile() throws IOException {
        for (String folder : List.of("arrow/file", "arrow/dict")) {
            Path data = copy(folder).resolve("data.arrow");
            Mutants.fuzzNaming(folder, Files.readAllBytes(data), data, 200,
                    p -> readRecords(dev.stoker.formats.arrow.ArrowFile.open(p)));
        }
    }

    @Test
    void tfRecordFilesPlainAndCompressedNameTheFile() throws IOException {
        Path dir = copy("tfrecord");
        for (String f : List.of("examples.tfrecord", "examples.tfrecord.gz", "examples.tfrecord.zlib")) {
            Path p = dir.resolve(f);
            Mutants.fuzzNaming(f, Files.readAllBytes(p), p, 200, q -> readRecords(dev.stoker.formats.tfrecord.TfRecordFile.open(q,
                    dev.stoker.formats.tfrecord.TfRecordFile.Compression.AUTO, dev.stoker.formats.tfrecord.TfRecordFile.Decode.EXAMPLE)));
        }
    }
}
