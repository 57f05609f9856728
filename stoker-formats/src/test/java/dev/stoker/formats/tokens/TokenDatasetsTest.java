package dev.stoker.formats.tokens;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Loader;
import dev.stoker.Sampler;
import dev.stoker.formats.Fixtures;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.npy.NpyArray;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenDatasetsTest {
    @TempDir
    Path tmp;

    /** A uint16 token file whose token i is (i * 7 + 3) mod 65536. */
    Path tokenFile(long n) throws IOException {
        Path p = tmp.resolve("train.bin");
        ByteBuffer b = ByteBuffer.allocate((int) (2 * n)).order(ByteOrder.LITTLE_ENDIAN);
        for (long i = 0; i < n; i++) {
            b.putShort((short) (i * 7 + 3));
        }
        Files.write(p, b.array());
        return p;
    }

    static long token(long i) {
        return (i * 7 + 3) & 0xFFFF;
    }

    static long get(Batch b, int field, int row, int j, DType out) {
        long seq = b.schema().field(field).shape()[0];
        return out == DType.INT64
                ? b.data(field).get(ValueLayout.JAVA_LONG_UNALIGNED, (row * seq + j) * 8)
                : b.data(field).get(ValueLayout.JAVA_INT_UNALIGNED, (row * seq + j) * 4);
    }

    @Test
    void anIdTheOutputTypeCannotHoldIsAnErrorNamingItNeverANegativeId() throws IOException {
        // uint32 ids of 2^31 and more into int32, uint64 ids of 2^63 and more into int64
        Path u32 = tmp.resolve("ids32.bin");
        ByteBuffer b32 = ByteBuffer.allocate(4 * 40).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 40; i++) {
            b32.putInt(i == 21 ? (int) 2_147_483_648L : i);
        }
        Files.write(u32, b32.array());
        Path u64 = tmp.resolve("ids64.bin");
        ByteBuffer b64 = ByteBuffer.allocate(8 * 40).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 40; i++) {
            b64.putLong(i == 30 ? Long.MIN_VALUE : i);
        }
        Files.write(u64, b64.array());
        Object[][] cases = {{u32, DType.UINT32, DType.INT32, "token 21 is 2147483648, which int32 cannot hold"},
                {u64, DType.UINT64, DType.INT64, "token 30 is 9223372036854775808, which int64 cannot hold"}};
        for (Object[] c : cases) {
            try (TokenFile f = TokenFile.open((Path) c[0], (DType) c[1]);
                 Loader l = Loader.builder(TokenWindows.disjoint(f, 8, (DType) c[2])).batchSize(2).build()) {
                RuntimeException e = assertThrows(RuntimeException.class, () -> {
                    for (Batch b : l) {
                        assertTrue(b.size() > 0);
                    }
                });
                assertTrue(e.getMessage().contains((String) c[3]) && e.getMessage().contains(c[0].toString()), e.getMessage());
            }
        }
        try (TokenFile f = TokenFile.open(u32, DType.UINT32);
             Loader l = Loader.builder(TokenWindows.disjoint(f, 8, DType.INT64)).batchSize(2).build()) {
            long max = 0;
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    for (int j = 0; j < 8; j++) {
                        max = Math.max(max, b.data(0).getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, r * 8L + j));
                    }
                }
            }
            assertEquals(2_147_483_648L, max, "int64 holds a uint32 id whole");
        }
    }

    @Test
    void disjointWindowsShuffledSeeEveryTokenOncePerEpoch() throws IOException {
        long n = 10_007;
        int seq = 64;
        for (DType out : new DType[] {DType.INT64, DType.INT32}) {
            try (TokenFile f = TokenFile.open(tokenFile(n), DType.UINT16);
                 Loader l = Loader.builder(TokenWindows.disjoint(f, seq, out)).batchSize(16).workers(2)
                         .shuffle().seed(3).build()) {
                long windows = (n - 1) / seq;
                assertEquals((windows + 15) / 16, l.batches(), "keep-last: a final short batch");
                Map<Long, Integer> starts = new HashMap<>();
                for (Batch b : l) {
                    for (int r = 0; r < b.size(); r++) {
                        long start = b.index(r) * seq;
                        starts.merge(start, 1, Integer::sum);
                        for (int j = 0; j < seq; j++) {
                            assertEquals(token(start + j), get(b, 0, r, j, out), "x");
                            assertEquals(token(start + j + 1), get(b, 1, r, j, out), "y is x shifted by one");
                        }
                    }
                }
                assertEquals((n - 1) / seq, starts.size());
                assertTrue(starts.values().stream().allMatch(c -> c == 1));
            }
        }
    }

    @Test
    void randomWindowsAreNanoGptsGetBatch() throws IOException {
        long n = 5000;
        int seq = 32;
        try (TokenFile f = TokenFile.open(tokenFile(n), DType.UINT16)) {
            TokenWindows w = TokenWindows.overlapping(f, seq, DType.INT64);
            assertEquals(n - seq, w.size(), "every start in [0, len - block_size), as torch.randint(len(data) - block_size)");
            try (Loader l = Loader.builder(w).batchSize(8).workers(2).sampler(Sampler.random(800)).seed(1).build()) {
                long max = 0;
                int batches = 0;
                for (Batch b : l) {
                    batches++;
                    for (int r = 0; r < b.size(); r++) {
                        max = Math.max(max, b.index(r));
                        assertEquals(token(b.index(r) + seq), get(b, 1, r, seq - 1, DType.INT64), "the last target");
                    }
                }
                assertEquals(100, batches);
                assertTrue(max > n - seq - 200, "offsets reach the end");
            }
        }
    }

    @Test
    void packsDocumentsAcrossBoundariesWithASeparator() throws IOException {
        Path prefix = tmp.resolve("docs");
        List<int[]> docs = new ArrayList<>();
        java.util.SplittableRandom r = new java.util.SplittableRandom(5);
        try (MegatronWriter w = new MegatronWriter(prefix, DType.UINT16)) {
            for (int d = 0; d < 200; d++) {
                int[] doc = new int[r.nextInt(0, 90)];
                for (int i = 0; i < doc.length; i++) {
                    doc[i] = r.nextInt(1, 50_000);
                }
                docs.add(doc);
                w.add(doc, doc.length);
            }
        }
        int seq = 50;
        for (long docSeed : new long[] {-1, 9}) {
            try (Megatron m = Megatron.open(prefix)) {
                PackedSequences p = new PackedSequences(m, seq, 50_256, docSeed, DType.INT64);
                // the expected stream: documents in the dataset's order, each followed by the separator
                List<Long> stream = new ArrayList<>();
                dev.stoker.internal.Permutation perm = docSeed >= 0 ? new dev.stoker.internal.Permutation(docs.size(), docSeed) : null;
                for (int k = 0; k < docs.size(); k++) {
                    for (int t : docs.get((int) (perm == null ? k : perm.apply(k)))) {
                        stream.add((long) t);
                    }
                    stream.add(50_256L);
                }
                assertEquals(stream.size(), p.packedTokens());
                assertEquals((stream.size() - 1) / seq, p.size());
                try (Loader l = Loader.builder(p).batchSize(7).workers(3).shuffle().build()) {
                    int samples = 0;
                    for (Batch b : l) {
                        for (int row = 0; row < b.size(); row++) {
                            long s = b.index(row) * seq;
                            for (int j = 0; j < seq; j++) {
                                assertEquals(stream.get((int) (s + j)), get(b, 0, row, j, DType.INT64), "x at " + (s + j));
                                assertEquals(stream.get((int) (s + j + 1)), get(b, 1, row, j, DType.INT64), "y at " + (s + j + 1));
                            }
                            samples++;
                        }
                    }
                    assertEquals(p.size(), samples);
                }
            }
        }
    }

    @Test
    void blendsTokenDatasetsInExactProportions() throws IOException {
        Path a = tokenFile(4000);
        Path b = tmp.resolve("b.bin");
        Files.write(b, new byte[2 * 3000]);
        try (TokenFile fa = TokenFile.open(a, DType.UINT16); TokenFile fb = TokenFile.open(b, DType.UINT16)) {
            DirectDataset mix = DirectDataset.mix(1000, new double[] {0.75, 0.25},
                    List.of(TokenWindows.disjoint(fa, 16, DType.INT64), TokenWindows.disjoint(fb, 16, DType.INT64)));
            try (Loader l = Loader.builder(mix).batchSize(100).workers(2).build()) {
                long zeros = 0;
                long seen = 0;
                for (Batch batch : l) {
                    for (int r = 0; r < batch.size(); r++) {
                        seen++;
                        if (get(batch, 0, r, 0, DType.INT64) == 0 && get(batch, 0, r, 1, DType.INT64) == 0) {
                            zeros++;
                        }
                        assertTrue(Math.abs(zeros - 0.25 * seen) <= 1.0, "within one sample at " + seen);
                    }
                }
                assertEquals(250, zeros);
            }
        }
    }

    @Test
    void readsTheFarEndOfAThreeGibibyteSparseFile() throws IOException {
        Path p = tmp.resolve("huge.bin");
        long tokens = (3L << 30) / 2 + 1000;
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
            f.setLength(tokens * 2);
            ByteBuffer tail = ByteBuffer.allocate(2 * 100).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < 100; i++) {
                tail.putShort((short) (60_000 + i));
            }
            f.seek((tokens - 100) * 2);
            f.write(tail.array());
        }
        try (TokenFile f = TokenFile.open(p, DType.UINT16)) {
            assertEquals(tokens, f.length());
            TokenWindows w = TokenWindows.disjoint(f, 99, DType.INT64);
            long last = w.size() - 1;
            try (Loader l = Loader.builder(w.subset(last, last + 1)).batchSize(1).build()) {
                Batch b = l.iterator().next();
                long start = w.start(last);
                for (int j = 0; j < 99; j++) {
                    long at = start + j;
                    long want = at >= tokens - 100 ? 60_000 + (at - (tokens - 100)) : 0;
                    assertEquals(want, get(b, 0, 0, j, DType.INT64), "token " + at);
                }
            }
            assertEquals(60_099, f.token(tokens - 1));
        } finally {
            Files.deleteIfExists(p);
        }
    }

    @Test
    void aTruncatedTokenFileIsNamed() throws IOException {
        Path p = tmp.resolve("odd.bin");
        Files.write(p, new byte[1001]);
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> TokenFile.open(p, DType.UINT16));
        assertTrue(e.getMessage().startsWith(p + ": file size 1001 is not a multiple of 2"), e.getMessage());
    }

    @Test
    void npyTokenArraysServeWindowsToo() throws IOException {
        try (NpyArray a = Npy.read(Fixtures.npy("tokens_u2.npy"))) {
            TokenWindows w = TokenWindows.disjoint(Tokens.of(a), 10, DType.INT64);
            assertEquals((a.elements() - 1) / 10, w.size());
            try (Loader l = Loader.builder(w).batchSize(4).build()) {
                Batch b = l.iterator().next();
                assertEquals(7, get(b, 0, 0, 1, DType.INT64));
                assertEquals(14, get(b, 1, 0, 1, DType.INT64));
            }
        }
    }
}
