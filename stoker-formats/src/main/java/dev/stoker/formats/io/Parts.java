package dev.stoker.formats.io;

/** Finding which of several consecutive parts (shards, chunks, record batches, files) holds an item. */
public final class Parts {
    private Parts() {
    }

    /**
     * The part holding item {@code index}, given each part's first item in {@code starts} (one more
     * entry than there are parts, the last the total): the last part whose start is at most
     * {@code index}, so an empty part never holds it.
     */
    public static int of(long[] starts, long index) {
        if (index < 0 || index >= starts[starts.length - 1]) {
            throw new IndexOutOfBoundsException("item " + index + " of " + starts[starts.length - 1]);
        }
        int lo = 0;
        int hi = starts.length - 2;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (starts[mid] <= index) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }
}
