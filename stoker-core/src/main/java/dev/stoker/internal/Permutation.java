package dev.stoker.internal;

/**
 * A keyed pseudo-random permutation of {@code [0, n)}: position {@code p} maps to
 * {@code apply(p)} in O(1) time and O(1) memory, for any {@code n} up to 2^62.
 *
 * <p>NOTE [Permutation]: a Feistel network over {@code b = ceil(log2 n)} bits, split into a left
 * half of {@code ceil(b/2)} bits and a right half of {@code floor(b/2)}, is a bijection on
 * {@code [0, 2^b)} whatever its round function: each round replaces one half by itself XOR a
 * function of the other, which the same round undoes. Walking the cycle (applying it again while
 * the result is {@code >= n}) restricts it to a bijection on {@code [0, n)}; the domain is less than
 * {@code 2n}, so a walk takes fewer than two steps on average. Rounds alternate halves and use the
 * splitmix64 finaliser keyed per round; six rounds (three per half) are enough for the position
 * distribution of every element to pass a chi-square test (see PermutationTest).
 */
public final class Permutation {
    private static final int ROUNDS = 6;

    private final long n;
    private final int rightBits;
    private final long leftMask;
    private final long rightMask;
    private final long[] keys = new long[ROUNDS];

    /** A permutation of {@code [0, n)} chosen by {@code key}. */
    public Permutation(long n, long key) {
        if (n <= 0 || n > (1L << 62)) {
            throw new IllegalArgumentException("permutation size must be in [1, 2^62], got " + n);
        }
        this.n = n;
        int bits = Math.max(2, 64 - Long.numberOfLeadingZeros(n - 1));
        this.rightBits = bits / 2;
        this.rightMask = (1L << rightBits) - 1;
        this.leftMask = (1L << (bits - rightBits)) - 1;
        long k = key;
        for (int i = 0; i < ROUNDS; i++) {
            k = mix64(k + 0x9e3779b97f4a7c15L);
            keys[i] = k;
        }
    }

    public long size() {
        return n;
    }

    /** The element at position {@code p}; {@code p} in {@code [0, n)}. */
    public long apply(long p) {
        if (p < 0 || p >= n) {
            throw new IndexOutOfBoundsException("position " + p + " of a permutation of " + n);
        }
        long x = p;
        do {
            x = round(x);
        } while (x >= n);
        return x;
    }

    /**
     * {@link #apply} of each of {@code xs[from, from + count)}, in place. The first step of each
     * walk is made for all of them together, one half-round at a time: each half-round a loop
     * small enough for the compiler to unroll and turn into vector instructions (eight lanes with
     * AVX-512; one loop of all six rounds is too large for that). Then the few that left
     * {@code [0, n)} walk on one by one.
     */
    public void applyAll(long[] xs, int from, int count) {
        java.util.Objects.checkFromIndexSize(from, count, xs.length);
        int to = from + count;
        long bad = 0;
        for (int i = from; i < to; i++) {
            bad |= xs[i] | (n - 1 - xs[i]); // negative iff some position is outside [0, n)
        }
        if (bad < 0) {
            for (int i = from; i < to; i++) {
                apply(xs[i]); // throws for the first outside
            }
        }
        int rb = rightBits;
        long lm = leftMask << rb;
        long rm = rightMask;
        for (int k = 0; k < ROUNDS; k += 2) {
            long kl = keys[k];
            long kr = keys[k + 1];
            for (int i = from; i < to; i++) { // the left half ^= f(right half)
                long x = xs[i];
                xs[i] = x ^ ((mix64((x & rm) ^ kl) << rb) & lm);
            }
            for (int i = from; i < to; i++) { // the right half ^= f(left half)
                long x = xs[i];
                xs[i] = x ^ (mix64((x >>> rb) ^ kr) & rm);
            }
        }
        for (int i = from; i < to; i++) {
            long x = xs[i];
            while (x >= n) {
                x = round(x);
            }
            xs[i] = x;
        }
    }

    private long round(long x) {
        long l = x >>> rightBits;
        long r = x & rightMask;
        for (int i = 0; i < ROUNDS; i += 2) {
            l = (l ^ mix64(r ^ keys[i])) & leftMask;
            r = (r ^ mix64(l ^ keys[i + 1])) & rightMask;
        }
        return (l << rightBits) | r;
    }

    /** The splitmix64 finaliser, as every keyed choice of Stoker's uses it: the rounds' function. */
    private static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
