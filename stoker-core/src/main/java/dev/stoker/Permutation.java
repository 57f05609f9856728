package dev.stoker;

/**
 * A keyed pseudo-random permutation of {@code [0, n)}: position {@code p} maps to
 * {@code apply(p)} in O(1) time and O(1) memory, for any {@code n} up to 2^62.
 *
 * <p>NOTE [Permutation]: a balanced Feistel network over the smallest domain of {@code 2k} bits
 * that holds {@code n} is a bijection on {@code [0, 2^2k)} whatever its round function; walking the
 * cycle (applying it again while the result is {@code >= n}) restricts it to a bijection on
 * {@code [0, n)}. The domain is less than {@code 4n}, so a walk takes fewer than four steps on
 * average. Rounds use the splitmix64 finaliser keyed per round; six rounds are enough for the
 * position distribution of every element to pass a chi-square test (see PermutationTest).
 */
public final class Permutation {
    private static final int ROUNDS = 6;

    private final long n;
    private final int half;
    private final long mask;
    private final long[] keys = new long[ROUNDS];

    /** A permutation of {@code [0, n)} chosen by {@code key}. */
    public Permutation(long n, long key) {
        if (n <= 0 || n > (1L << 62)) {
            throw new IllegalArgumentException("permutation size must be in [1, 2^62], got " + n);
        }
        this.n = n;
        int bits = Math.max(2, 64 - Long.numberOfLeadingZeros(n - 1));
        if ((bits & 1) == 1) {
            bits++;
        }
        this.half = bits / 2;
        this.mask = (1L << half) - 1;
        long k = key;
        for (int i = 0; i < ROUNDS; i++) {
            k = Mix.mix64(k + 0x9e3779b97f4a7c15L);
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

    private long round(long x) {
        long l = x >>> half;
        long r = x & mask;
        for (int i = 0; i < ROUNDS; i++) {
            long t = l ^ (Mix.mix64(r ^ keys[i]) & mask);
            l = r;
            r = t;
        }
        return (l << half) | r;
    }
}
