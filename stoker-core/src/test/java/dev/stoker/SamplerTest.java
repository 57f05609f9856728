package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SamplerTest {

    @Test
    void sequentialIsTheIdentity() {
        Order o = Sampler.sequential().order(5, 1, 2);
        assertEquals(5, o.length());
        for (int i = 0; i < 5; i++) {
            assertEquals(i, o.index(i));
        }
    }

    @Test
    void shuffleIsAPureFunctionOfSeedAndEpoch() {
        Order a = Sampler.shuffle().order(100, 7, 3);
        Order b = Sampler.shuffle().order(100, 7, 3);
        Order c = Sampler.shuffle().order(100, 7, 4);
        Order d = Sampler.shuffle().order(100, 8, 3);
        boolean differsC = false;
        boolean differsD = false;
        for (int i = 0; i < 100; i++) {
            assertEquals(a.index(i), b.index(i));
            differsC |= a.index(i) != c.index(i);
            differsD |= a.index(i) != d.index(i);
        }
        assertTrue(differsC && differsD);
    }

    @Test
    void weightedWithReplacementFollowsTheWeights() {
        double[] w = {1, 0, 3, 6};
        int draws = 200_000;
        Order o = Sampler.weighted(w, draws, true).order(4, 5, 0);
        long[] counts = new long[4];
        for (int i = 0; i < draws; i++) {
            counts[(int) o.index(i)]++;
        }
        assertEquals(0, counts[1], "a zero weight is never drawn");
        double chi = 0;
        for (int k = 0; k < 4; k++) {
            if (w[k] > 0) {
                double e = draws * w[k] / 10;
                chi += (counts[k] - e) * (counts[k] - e) / e;
            }
        }
        assertTrue(chi < 20, "chi-square " + chi + " (df 2)");
    }

    @Test
    void weightedWithoutReplacementNeverRepeatsAndFavoursHeavyItems() {
        double[] w = new double[50];
        for (int i = 0; i < w.length; i++) {
            w[i] = i < 10 ? 10 : 1;
        }
        long heavyFirst = 0;
        int epochs = 4000;
        for (int e = 0; e < epochs; e++) {
            Order o = Sampler.weighted(w, 20, false).order(50, 1, e);
            Set<Long> seen = new HashSet<>();
            for (int i = 0; i < 20; i++) {
                assertTrue(seen.add(o.index(i)), "repeat without replacement");
            }
            if (o.index(0) < 10) {
                heavyFirst++;
            }
        }
        // P(first draw is heavy) = 100 / 140
        double p = heavyFirst / (double) epochs;
        assertTrue(Math.abs(p - 100.0 / 140) < 0.03, "first draw heavy with frequency " + p);
    }

    @Test
    void weightedWithoutReplacementRefusesMoreThanThePositiveWeights() {
        assertThrows(IllegalArgumentException.class, () -> Sampler.weighted(new double[] {1, 0, 1}, 3, false));
        assertThrows(IllegalArgumentException.class, () -> Sampler.weighted(new double[] {0, 0}, 1, true));
        assertThrows(IllegalArgumentException.class, () -> Sampler.weighted(new double[] {1, -1}, 1, true));
        assertThrows(IllegalArgumentException.class, () -> Sampler.weighted(new double[] {1, 2}, 5, true).order(3, 0, 0));
    }

    @Test
    void partitionPadsLikePyTorchDistributedSampler() {
        // torch: indices = list(range(10)); pad with indices[:2] -> 12; rank r takes indices[r:12:4]
        long[][] expected = {{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}};
        for (int r = 0; r < 4; r++) {
            Partition p = new Partition(0, 10, 4, r, Tail.PAD);
            assertEquals(3, p.length());
            for (int m = 0; m < 3; m++) {
                assertEquals(expected[r][m], p.position(m), "rank " + r + " sample " + m);
            }
        }
    }

    @Test
    void partitionPadsByRepeatingMoreThanOnceWhenNeeded() {
        // 2 samples over 5 ranks: [0, 1, 0, 1, 0]
        long[] got = new long[5];
        for (int r = 0; r < 5; r++) {
            Partition p = new Partition(0, 2, 5, r, Tail.PAD);
            assertEquals(1, p.length());
            got[r] = p.position(0);
        }
        assertEquals("[0, 1, 0, 1, 0]", java.util.Arrays.toString(got));
    }

    @Test
    void partitionDropsTheTailLikeDropLastTrue() {
        for (int r = 0; r < 4; r++) {
            Partition p = new Partition(0, 10, 4, r, Tail.DROP);
            assertEquals(2, p.length());
            assertEquals(r, p.position(0));
            assertEquals(r + 4, p.position(1));
        }
    }

    @Test
    void blockShuffleVisitsEverySampleOnceAndReadsFromAWindowOfBlocksAtATime() {
        // blocks of uneven sizes, some empty, a last window that is not full
        long[] starts = {0, 7, 7, 20, 21, 40, 40, 41, 60, 75, 90, 90, 103};
        int blocks = starts.length - 1;
        for (int window : new int[] {1, 2, 3, 5, blocks, blocks + 4}) {
            Sampler s = Sampler.blockShuffle(starts, window);
            Order o = s.order(103, 11, 2);
            assertEquals(103, o.length());
            Set<Long> seen = new HashSet<>();
            long[] order = new long[103];
            for (int p = 0; p < 103; p++) {
                order[p] = o.index(p);
                assertTrue(seen.add(order[p]), "window " + window + ": index " + order[p] + " twice");
            }
            assertEquals(103, seen.size());
            // the positions of each window of blocks hold the samples of `window` blocks only, in full
            int p = 0;
            while (p < 103) {
                Set<Integer> from = new HashSet<>();
                int taken = 0;
                int q = p;
                for (; q < 103; q++) {
                    int b = block(starts, order[q]);
                    if (!from.contains(b) && from.size() == Math.min(window, blocks)) {
                        break;
                    }
                    from.add(b);
                    taken++;
                }
                long held = from.stream().mapToLong(b -> starts[b + 1] - starts[b]).sum();
                assertEquals(held, taken, "window " + window + " at position " + p + ": whole blocks " + from);
                p = q;
            }
            assertEquals(o.index(17), s.order(103, 11, 2).index(17));
            boolean differs = false;
            Order other = s.order(103, 11, 3);
            for (int k = 0; k < 103; k++) {
                differs |= other.index(k) != o.index(k);
            }
            assertTrue(differs, "another epoch, another order");
        }
        assertThrows(IllegalArgumentException.class, () -> Sampler.blockShuffle(starts, 2).order(102, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> Sampler.blockShuffle(new long[] {0, 5, 3}, 2));
    }

    @Test
    void aBatchOfIndicesAtOnceEqualsEachIndexAlone() {
        // Order.indices may find a batch's indices together (a shuffle vectorizes its permutation,
        // a block shuffle permutes a window's run of positions at once); the result must not differ
        long[] starts = {0, 7, 7, 20, 21, 40, 40, 41, 60, 75, 90, 90, 103};
        java.util.Random random = new java.util.Random(5);
        for (Sampler s : new Sampler[] {Sampler.sequential(), Sampler.shuffle(), Sampler.blockShuffle(starts, 1),
                Sampler.blockShuffle(starts, 3), Sampler.blockShuffle(starts, 20)}) {
            Order o = s.order(103, 9, 1);
            for (int trial = 0; trial < 200; trial++) {
                int n = 1 + random.nextInt(40);
                long[] positions = new long[n];
                long first = random.nextInt(103);
                for (int i = 0; i < n; i++) { // a run (across windows) or, every third trial, scattered positions
                    positions[i] = trial % 3 == 0 ? random.nextInt(103) : (first + i) % 103;
                }
                long[] batch = positions.clone();
                o.indices(batch, n);
                for (int i = 0; i < n; i++) {
                    assertEquals(o.index(positions[i]), batch[i], s + ": position " + positions[i]);
                }
            }
        }
    }

    private static int block(long[] starts, long index) {
        int b = 0;
        while (starts[b + 1] <= index) {
            b++;
        }
        return b;
    }

    /**
     * Blocks: every sample once an epoch, each block of the order a contiguous run (modulo the
     * dataset's end) of the block size (the short one r), in a random order that changes with
     * the epoch, and the grid shifted between epochs.
     */
    @Test
    void blocksVisitEverySampleOnceInContiguousRunsWhoseGridMovesWithTheEpoch() {
        for (long size : new long[] {1, 7, 64, 1000, 1003}) {
            for (long block : new long[] {1, 8, 64, 2000}) {
                Sampler s = Sampler.blocks(block);
                java.util.Set<java.util.List<Long>> grids = new HashSet<>();
                for (long epoch = 0; epoch < 4; epoch++) {
                    Order o = s.order(size, 11, epoch);
                    assertEquals(size, o.length());
                    boolean[] seen = new boolean[(int) size];
                    java.util.List<Long> starts = new java.util.ArrayList<>();
                    long p = 0;
                    while (p < size) {
                        long first = o.index(p);
                        starts.add(first);
                        long run = 0;
                        while (p < size && (run == 0 || o.index(p) == (first + run) % size) && run < block) {
                            long i = o.index(p);
                            assertTrue(i >= 0 && i < size && !seen[(int) i], "size " + size + " block " + block + " index " + i);
                            seen[(int) i] = true;
                            run++;
                            p++;
                        }
                        assertTrue(run == Math.min(block, size) || run == size % block, "a run of " + run);
                    }
                    java.util.Collections.sort(starts);
                    grids.add(starts);
                    assertEquals(o.index(size / 2), s.order(size, 11, epoch).index(size / 2), "a pure function");
                }
                if (size >= 64 && block == 8) {
                    assertTrue(grids.size() > 1, "the grid moves between epochs");
                }
            }
        }
    }

    /** Offsets: chunk c read at c * stride + an offset below stride, each chunk once, the offsets varying. */
    @Test
    void offsetsReadEveryChunkOnceAtAnOffsetBelowTheStride() {
        long size = 10_000;
        int stride = 64;
        for (boolean shuffle : new boolean[] {false, true}) {
            Sampler s = Sampler.offsets(stride, shuffle);
            assertEquals(size / stride, s.length(size));
            Order o = s.order(size, 3, 1);
            Set<Long> chunks = new HashSet<>();
            Set<Long> offsets = new HashSet<>();
            boolean inOrder = true;
            for (long p = 0; p < o.length(); p++) {
                long i = o.index(p);
                assertTrue(i < size);
                assertTrue(chunks.add(i / stride), "chunk " + i / stride + " twice");
                offsets.add(i % stride);
                inOrder &= i / stride == p;
            }
            assertEquals(size / stride, chunks.size());
            assertTrue(offsets.size() > stride / 2, "offsets spread: " + offsets.size());
            assertEquals(!shuffle, inOrder);
            assertTrue(o.index(5) != s.order(size, 3, 2).index(5) || o.index(6) != s.order(size, 3, 2).index(6),
                    "another epoch, other offsets");
        }
    }
}
