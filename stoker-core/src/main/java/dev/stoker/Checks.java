package dev.stoker;

/** Small checks shared by the datasets and the loader. */
final class Checks {
    private Checks() {
    }

    static long checkIndex(long index, long size, Object source) {
        if (index < 0 || index >= size) {
            String name = source instanceof Dataset<?> d ? d.name() : String.valueOf(source);
            throw new IndexOutOfBoundsException(name + ": index " + index + " is not within [0, " + size + ")");
        }
        return index;
    }

    /** {@code a × b} for non-negative numbers, or Long.MAX_VALUE where it would overflow. */
    static long product(long a, long b) {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
