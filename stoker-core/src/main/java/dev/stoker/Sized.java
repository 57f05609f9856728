package dev.stoker;

/**
 * A sample that tells how many bytes it holds, for a shuffle window bounded in bytes
 * ({@link LoaderBuilder#shuffleWindowBytes}). Arrays of primitives and memory segments are
 * measured without it.
 */
public interface Sized {
    /** The bytes this sample keeps in memory (its payload; a few bytes either way do not matter). */
    long byteSize();

    /**
     * The bytes a sample that does not tell its size counts for in the default shuffle window
     * (NOTE [Default shuffle window]): 64 KiB, so that the window holds about a thousand of them.
     */
    long UNSIZED = 64 << 10;

    /** The size of a sample: {@link Sized}, a primitive array or a {@link java.lang.foreign.MemorySegment}. */
    static long of(Object sample) {
        long n = orUnknown(sample);
        if (n < 0) {
            throw new IllegalStateException("a shuffle window bounded in bytes needs the size of each sample, "
                    + "and a " + sample.getClass().getName() + " does not tell it: implement dev.stoker.Sized");
        }
        return n;
    }

    /** {@link #of}, or {@link #UNSIZED} for a sample that does not tell its size. */
    static long orUnsized(Object sample) {
        long n = orUnknown(sample);
        return n < 0 ? UNSIZED : n;
    }

    private static long orUnknown(Object sample) {
        return switch (sample) {
            case null -> 0;
            case Sized s -> s.byteSize();
            case byte[] a -> a.length;
            case short[] a -> 2L * a.length;
            case char[] a -> 2L * a.length;
            case int[] a -> 4L * a.length;
            case float[] a -> 4L * a.length;
            case long[] a -> 8L * a.length;
            case double[] a -> 8L * a.length;
            case java.lang.foreign.MemorySegment m -> m.byteSize();
            default -> -1;
        };
    }
}
