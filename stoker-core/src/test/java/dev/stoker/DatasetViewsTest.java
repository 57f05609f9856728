package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class DatasetViewsTest {

    static Dataset<Long> range(long n) {
        return new Dataset<>() {
            @Override
            public long size() {
                return n;
            }

            @Override
            public Long get(long index) {
                return Checks.checkIndex(index, n, this);
            }

            @Override
            public String name() {
                return "range(" + n + ")";
            }
        };
    }

    @Test
    void subsetsMapIndices() throws IOException {
        Dataset<Long> d = range(10);
        assertEquals(3, d.subset(3, 6).size());
        assertEquals(5L, d.subset(3, 6).get(2));
        assertEquals(9L, d.subset(new long[] {4, 9, 1}).get(1));
        assertThrows(IllegalArgumentException.class, () -> d.subset(5, 11));
        assertThrows(IllegalArgumentException.class, () -> d.subset(new long[] {10}));
        assertThrows(IndexOutOfBoundsException.class, () -> d.subset(3, 6).get(3));
    }

    @Test
    void concatChainsDatasets() throws IOException {
        Dataset<Long> c = Dataset.concat(range(3), range(0), range(4));
        assertEquals(7, c.size());
        List<Long> all = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            all.add(c.get(i));
        }
        assertEquals(List.of(0L, 1L, 2L, 0L, 1L, 2L, 3L), all);
    }

    @Test
    void randomSplitIsDisjointCompleteAndSeeded() throws IOException {
        Dataset<Long> d = range(1001);
        List<Dataset<Long>> parts = d.randomSplit(7, 0.8, 0.1, 0.1);
        assertEquals(List.of(801L, 100L, 100L), parts.stream().map(Dataset::size).toList());
        Set<Long> seen = new HashSet<>();
        for (Dataset<Long> p : parts) {
            for (long i = 0; i < p.size(); i++) {
                assertTrue(seen.add(p.get(i)));
            }
        }
        assertEquals(1001, seen.size());
        assertEquals(parts.get(1).get(5), d.randomSplit(7, 0.8, 0.1, 0.1).get(1).get(5));
        assertThrows(IllegalArgumentException.class, () -> d.randomSplit(1, 500L, 500L));
    }

    @Test
    void mixIsWithinOneSampleOfEveryShareAtEveryPrefix() throws IOException {
        SplittableRandom r = new SplittableRandom(11);
        for (int trial = 0; trial < 60; trial++) {
            int k = r.nextInt(1, 12);
            double[] w = new double[k];
            double sum = 0;
            List<Dataset<Long>> parts = new ArrayList<>();
            for (int i = 0; i < k; i++) {
                w[i] = r.nextDouble(0.01, 1);
                sum += w[i];
                parts.add(tagged(i, r.nextInt(1, 50)));
            }
            long length = r.nextInt(1, 5000);
            Dataset<Long> mix = Dataset.mix(length, w, parts);
            long[] counts = new long[k];
            for (long p = 0; p < length; p++) {
                long v = mix.get(p);
                int part = (int) (v >>> 32);
                long local = v & 0xffffffffL;
                assertEquals(counts[part] % parts.get(part).size(), local, "parts are read in order, wrapping");
                counts[part]++;
                for (int i = 0; i < k; i++) {
                    double share = w[i] / sum * (p + 1);
                    assertTrue(Math.abs(counts[i] - share) <= 1.0 + 1e-9,
                            "part " + i + " has " + counts[i] + " of " + (p + 1) + ", share " + share);
                }
            }
        }
    }

    @Test
    void mixIsPositionAddressableInAnyOrderAndFromAnyThread() throws Exception {
        double[] w = {0.5, 0.3, 0.2};
        List<Dataset<Long>> parts = List.of(tagged(0, 1000), tagged(1, 1000), tagged(2, 1000));
        long length = 20_000;
        Dataset<Long> sequential = Dataset.mix(length, w, parts);
        long[] expected = new long[(int) length];
        for (int p = 0; p < length; p++) {
            expected[p] = sequential.get(p);
        }
        Dataset<Long> fresh = Dataset.mix(length, w, parts);
        Order shuffled = Sampler.shuffle().order(length, 3, 0);
        Thread[] ts = new Thread[3];
        List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < ts.length; t++) {
            int off = t;
            ts[t] = new Thread(() -> {
                try {
                    for (long i = off; i < length; i += ts.length) {
                        long p = shuffled.index(i);
                        assertEquals(expected[(int) p], fresh.get(p), "position " + p);
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        assertTrue(errors.isEmpty(), errors.toString());
    }

    /** Part {@code tag}: sample i is {@code tag << 32 | i}. */
    private static Dataset<Long> tagged(int tag, long n) {
        return new Dataset<>() {
            @Override
            public long size() {
                return n;
            }

            @Override
            public Long get(long index) {
                return ((long) tag << 32) | index;
            }
        };
    }
}
