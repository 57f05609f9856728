package dev.stoker;

/** Stateless 64-bit mixing: every random choice in Stoker is a pure function of its inputs. */
final class Keys {
    private Keys() {
    }

    /** The splitmix64 finaliser: a bijection on 64-bit values with full avalanche. */
    static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** A key for (a, b): order-sensitive, well mixed. */
    static long key(long a, long b) {
        return mix64(mix64(a + 0x9e3779b97f4a7c15L) ^ (b * 0xc2b2ae3d27d4eb4fL + 0x165667b19e3779f9L));
    }

    static long key(long a, long b, long c) {
        return key(key(a, b), c);
    }

    /** A uniform double in [0, 1) from 53 bits of {@code h}. */
    static double unit(long h) {
        return (h >>> 11) * 0x1.0p-53;
    }
}
