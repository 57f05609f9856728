package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.internal.Permutation;
import java.util.BitSet;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PermutationTest {

    @Test
    void isABijectionForEverySmallSize() {
        for (int n = 1; n <= 600; n++) {
            for (long key = 0; key < 4; key++) {
                Permutation p = new Permutation(n, key * 7919 + n);
                BitSet seen = new BitSet(n);
                for (int i = 0; i < n; i++) {
                    long x = p.apply(i);
                    assertTrue(x >= 0 && x < n, "out of range at n=" + n);
                    assertTrue(!seen.get((int) x), "repeated element at n=" + n + " key=" + key);
                    seen.set((int) x);
                }
                assertEquals(n, seen.cardinality());
            }
        }
    }

    @Test
    void isABijectionAtAPowerOfFourBoundary() {
        for (int n : new int[] {1 << 16, (1 << 16) + 1, (1 << 18) - 1}) {
            Permutation p = new Permutation(n, 42);
            BitSet seen = new BitSet(n);
            for (int i = 0; i < n; i++) {
                seen.set((int) p.apply(i));
            }
            assertEquals(n, seen.cardinality(), "n=" + n);
        }
    }

    /**
     * For a mid-size n, each element's position over many keys is uniform: a chi-square test per
     * element with n - 1 degrees of freedom, at a threshold no fair permutation exceeds by chance
     * more than rarely (p ~ 1e-4), and the mean statistic close to its expectation.
     */
    @Test
    void positionsOfEachElementAreUniform() {
        int n = 16;
        int keys = 32_000;
        long[][] counts = new long[n][n];
        for (int k = 0; k < keys; k++) {
            Permutation p = new Permutation(n, Keys.key(k, 99));
            for (int pos = 0; pos < n; pos++) {
                counts[(int) p.apply(pos)][pos]++;
            }
        }
        double expected = (double) keys / n;
        double sum = 0;
        for (int e = 0; e < n; e++) {
            double chi = 0;
            for (int pos = 0; pos < n; pos++) {
                double d = counts[e][pos] - expected;
                chi += d * d / expected;
            }
            assertTrue(chi < 45, "element " + e + " chi-square " + chi + " (df 15)");
            sum += chi;
        }
        double mean = sum / n;
        assertTrue(mean > 8 && mean < 24, "mean chi-square " + mean + " should be near 15");
    }

    @Test
    void midSizeIsUniformToo() {
        int n = 1000;
        int keys = 2000;
        // where does element 0 land? bucket positions into 20 bins of 50
        long[] bins = new long[20];
        for (int k = 0; k < keys; k++) {
            Permutation p = new Permutation(n, Keys.key(k, 7));
            for (int pos = 0; pos < n; pos++) {
                if (p.apply(pos) == 0) {
                    bins[pos / 50]++;
                    break;
                }
            }
        }
        double expected = keys / 20.0;
        double chi = 0;
        for (long b : bins) {
            chi += (b - expected) * (b - expected) / expected;
        }
        assertTrue(chi < 50, "chi-square " + chi + " (df 19)");
    }

    @Test
    void worksForTenBillionSamples() {
        long n = 10_000_000_000L;
        Permutation p = new Permutation(n, 3);
        Set<Long> seen = new HashSet<>();
        for (long pos = n - 100_000; pos < n; pos++) {
            long x = p.apply(pos);
            assertTrue(x >= 0 && x < n);
            assertTrue(seen.add(x), "repeat at position " + pos);
        }
        assertTrue(p.apply(0) != 0 || p.apply(1) != 1, "not the identity");
    }

    @Test
    void differentKeysGiveDifferentOrdersAndTheSameKeyTheSameOrder() {
        Permutation a = new Permutation(1000, 1);
        Permutation b = new Permutation(1000, 2);
        Permutation a2 = new Permutation(1000, 1);
        int same = 0;
        for (int i = 0; i < 1000; i++) {
            assertEquals(a.apply(i), a2.apply(i));
            if (a.apply(i) == b.apply(i)) {
                same++;
            }
        }
        assertTrue(same < 20, "two keys agree on " + same + " positions");
        assertNotEquals(a.apply(0), b.apply(0) + 0.5);
    }

    @Test
    void applyAllEqualsApplyForEachPosition() {
        java.util.Random random = new java.util.Random(3);
        for (long n : new long[] {1, 2, 3, 4, 5, 17, 1000, 1 << 16, (1 << 16) + 1, 491_520, (1L << 40) + 3, 1L << 62}) {
            Permutation p = new Permutation(n, n * 31 + 7);
            long[] xs = new long[700];
            for (int i = 0; i < xs.length; i++) {
                xs[i] = Math.floorMod(random.nextLong(), n);
            }
            long[] ys = xs.clone();
            p.applyAll(ys, 5, 690); // a slice: the ends stay as they were
            for (int i = 0; i < xs.length; i++) {
                assertEquals(i < 5 || i >= 695 ? xs[i] : p.apply(xs[i]), ys[i], "n " + n + ", position " + xs[i]);
            }
        }
        Permutation p = new Permutation(10, 1);
        assertThrows(IndexOutOfBoundsException.class, () -> p.applyAll(new long[] {3, 10, 4}, 0, 3));
        assertThrows(IndexOutOfBoundsException.class, () -> p.applyAll(new long[] {-1}, 0, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> p.applyAll(new long[] {1, 2}, 1, 2));
    }

    @Test
    void rejectsBadSizesAndPositions() {
        assertThrows(IllegalArgumentException.class, () -> new Permutation(0, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> new Permutation(10, 1).apply(10));
        assertThrows(IndexOutOfBoundsException.class, () -> new Permutation(10, 1).apply(-1));
    }
}
