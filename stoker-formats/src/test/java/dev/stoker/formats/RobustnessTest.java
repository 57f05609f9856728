package dev.stoker.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.Loader;
import dev.stoker.formats.image.ImagePipeline;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.tar.TarDataset;
import dev.stoker.formats.tar.TarShards;
import dev.stoker.formats.io.TarWriter;
import dev.stoker.formats.tokens.Megatron;
import dev.stoker.formats.tokens.MegatronWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input fails with the documented exceptions; writers never leave or publish damaged files. */
class RobustnessTest {
    @TempDir
    Path tmp;

    /** A one-member tar whose header we then damage. */
    byte[] tar() throws IOException {
        Path p = tmp.resolve("one.tar");
        try (TarWriter w = new TarWriter(p)) {
            w.write("a", Map.of("txt", "hello".getBytes()));
        }
        return Files.readAllBytes(p);
    }

    static void checksum(byte[] t, int at) {
        for (int i = 148; i < 156; i++) {
            t[at + i] = ' ';
        }
        long sum = 0;
        for (int i = 0; i < 512; i++) {
            sum += t[at + i] & 0xFF;
        }
        byte[] c = String.format("%06o\0 ", sum).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(c, 0, t, at + 148, 8);
    }

    CorruptShardException readFails(byte[] t) throws IOException {
        Path p = tmp.resolve("bad.tar");
        Files.write(p, t);
        return assertThrows(CorruptShardException.class, () -> {
            try (var r = new TarShards(List.of(p)).open(0)) {
                while (r.next() != null) {
                    // read on
                }
            }
        });
    }

    @Test
    void damagedSizesInTarHeadersFailCleanly() throws IOException {
        byte[] t = tar();
        t[124] = (byte) 0xFF; // base-256, negative
        checksum(t, 0);
        String m = readFails(t).getMessage();
        assertTrue(m.contains("negative base-256 size"), m);

        t = tar();
        byte[] huge = String.format("%011o", 1_500_000_000L).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(huge, 0, t, 124, 11); // 1.5 GB claimed by a file of 10 KB: no 1.5 GB array
        checksum(t, 0);
        m = readFails(t).getMessage();
        assertTrue(m.contains("cut short"), m);
    }

    @Test
    void aMalformedPaxRecordFailsCleanly() throws IOException {
        byte[] t = tar();
        t[156] = 'x'; // the member becomes a PAX header whose records are "hello"
        checksum(t, 0);
        CorruptShardException e = readFails(t);
        assertTrue(e.getMessage().contains("PAX"), e.getMessage());
    }

    @Test
    void aTokenThatDoesNotFitLeavesTheMegatronFileIntact() throws IOException {
        Path prefix = tmp.resolve("m");
        try (MegatronWriter w = new MegatronWriter(prefix, DType.UINT16)) {
            w.add(new int[] {1, 2}, 2);
            assertThrows(IllegalArgumentException.class, () -> w.add(new int[] {3, 70_000}, 2));
            w.add(new int[] {4, 5, 6}, 3);
        }
        try (Megatron m = Megatron.open(prefix)) {
            assertEquals(2, m.sequences());
            assertEquals(4, m.token(m.sequenceStart(1)), "nothing of the refused document was written");
        }
        Set<java.nio.file.attribute.PosixFilePermission> perms = Files.getPosixFilePermissions(Path.of(prefix + ".bin"));
        assertTrue(perms.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ), "written files are readable: " + perms);
    }

    @Test
    void anImpossibleNpyShapeIsCorruptNotAnArithmeticError() throws IOException {
        byte[] h = Npy.header(DType.UINT8, new long[] {1L << 40, 1L << 40});
        Path p = tmp.resolve("huge.npy");
        Files.write(p, h);
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> Npy.read(p));
        assertTrue(e.getMessage().contains("larger than any file"), e.getMessage());
    }

    @Test
    void streamedImagesAreTheSameAsRandomAccessOnes() throws Exception {
        Path p = tmp.resolve("img.tar");
        try (TarWriter w = new TarWriter(p)) {
            for (int i = 0; i < 24; i++) {
                w.write(String.format("s%03d", i), Map.of("jpg", dev.stoker.formats.image.ImagePipelineTest.jpeg(40 + i, 30 + i, i),
                        "cls", Integer.toString(i % 10).getBytes()));
            }
        }
        ImagePipeline eval = ImagePipeline.eval(32);
        List<String> random;
        try (TarDataset d = new TarDataset(List.of(p));
             Loader l = Loader.builder(d, eval.transform(), eval.collator()).batchSize(6).workers(2).build()) {
            random = dev.stoker.formats.image.ImagePipelineTest.digests(l);
        }
        // streamed: workers decode ahead, the consumer collates later; every sample keeps its own image
        try (Loader l = Loader.builder(new TarShards(List.of(p)), eval.transform(), eval.collator()).batchSize(6).workers(2)
                .shardBuffer(32).build()) {
            List<String> streamed = new java.util.ArrayList<>();
            for (dev.stoker.Batch b : l) {
                java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
                b.digest(md);
                streamed.add(java.util.HexFormat.of().formatHex(md.digest()));
            }
            assertEquals(random, streamed);
        }
    }

    /** Reads a whole tar shard as a stream. */
    static void readShard(Path p) throws IOException {
        try (var r = new TarShards(List.of(p)).open(0)) {
            while (r.next() != null) {
                // read on
            }
        }
    }

    @Test
    void aCutZstdShardIsAnEofNamingTheShardAndWhereItEnds() throws IOException {
        java.io.ByteArrayOutputStream zst = new java.io.ByteArrayOutputStream();
        try (var out = new com.github.luben.zstd.ZstdOutputStream(zst)) {
            out.write(tar());
        }
        Path p = tmp.resolve("cut.tar.zst");
        Files.write(p, java.util.Arrays.copyOf(zst.toByteArray(), zst.size() / 2));
        java.io.EOFException e = assertThrows(java.io.EOFException.class, () -> readShard(p));
        assertTrue(e.getMessage().startsWith(p + ": the header at byte 0 of the archive: the zstd data is cut short")
                && e.getMessage().endsWith("(at byte " + zst.size() / 2 + ")"), e.getMessage());
    }

    @Test
    void aCutGzipShardNamesTheMemberItCutShort() throws IOException {
        Path plain = tmp.resolve("two.tar");
        byte[] big = new byte[200_000];
        new java.util.Random(1).nextBytes(big); // incompressible: the cut falls in it
        try (TarWriter w = new TarWriter(plain)) {
            w.write("a", Map.of("txt", "hello".getBytes()));
            w.write("b", Map.of("bin", big));
        }
        java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
        try (var out = new java.util.zip.GZIPOutputStream(gz)) {
            out.write(Files.readAllBytes(plain));
        }
        Path p = tmp.resolve("cut.tar.gz");
        Files.write(p, java.util.Arrays.copyOf(gz.toByteArray(), gz.size() / 2));
        java.io.EOFException e = assertThrows(java.io.EOFException.class, () -> readShard(p));
        assertTrue(e.getMessage().startsWith(p + ": member 'b.bin' (its header at byte 1024 of the archive): the gzip data is "
                + "cut short"), e.getMessage());
    }

    @Test
    void bzip2AndXzShardsAreRefusedByNameNotReadAsTar() throws IOException {
        Map<String, byte[]> magics = Map.of("bzip2", "BZh91AY&SY".getBytes(StandardCharsets.US_ASCII),
                "xz", new byte[] {(byte) 0xFD, '7', 'z', 'X', 'Z', 0, 0, 4});
        for (Map.Entry<String, byte[]> m : magics.entrySet()) {
            Path p = tmp.resolve("a.tar." + m.getKey());
            byte[] b = java.util.Arrays.copyOf(m.getValue(), 1024);
            Files.write(p, b);
            CorruptShardException e = assertThrows(CorruptShardException.class, () -> readShard(p));
            assertTrue(e.getMessage().startsWith(p + ": compressed with " + m.getKey() + ", which Stoker does not read"),
                    e.getMessage());
        }
    }

    @Test
    void aCorruptZstdLitDataChunkNamesTheChunk() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("lit"));
        try (var files = Files.list(Path.of("src/test/resources/interop/litdata/zstd"))) {
            for (Path f : files.toList()) {
                Files.copy(f, dir.resolve(f.getFileName()));
            }
        }
        Path chunk = dir.resolve("chunk-0-0.zstd.bin");
        byte[] b = Files.readAllBytes(chunk);
        b[b.length / 2] ^= (byte) 0xFF;
        Files.write(chunk, b);
        try (var d = dev.stoker.formats.litdata.LitDataset.open(dir, 0, null)) {
            CorruptShardException e = assertThrows(CorruptShardException.class, () -> d.get(0));
            assertTrue(e.getMessage().startsWith(chunk + ": ") && e.getMessage().contains("zstd data is corrupt"), e.getMessage());
        }
    }
}
