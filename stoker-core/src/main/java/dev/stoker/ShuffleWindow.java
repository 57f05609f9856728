package dev.stoker;

import dev.stoker.internal.Permutation;

/**
 * The second tier of a two-tier shuffle: the stream taken in blocks, each handed out in a keyed
 * random order. Kept by the one thread that collates.
 *
 * <p>NOTE [Two-tier shuffle]: with a shuffle window, the collating thread takes the stream
 * (already in the epoch's shuffled shard order: tier one) in blocks of {@code window} samples (or
 * fewer: a block also ends at the sample that brings it to {@code bytes}) and hands each block out
 * in a keyed random order (tier two). A block is a pure function of where it starts in the
 * stream, and its order of (seed, epoch, stream, that start), so a state holding the block's start
 * and how many of it were delivered resumes exactly.
 */
final class ShuffleWindow {
    /** Where the samples come from. */
    interface Stream {
        /**
         * The next sample of the stream into {@code item}; false at its end. {@code needed}: the
         * samples the block still wants (how long the caller may sleep for them).
         */
        boolean take(StreamItem item, long t0, int needed);

        /** Every sample of the blocks so far went out: their shards' readers may close (NOTE [Spent readers]). */
        void blocksDone();
    }

    private final int window;
    private final long bytes;
    private final boolean defaultWindow;
    private final long key;
    private final StreamItem taken = new StreamItem();
    private Object[] values = new Object[0];
    private int[] shard = new int[0];
    private long[] offset = new long[0];
    private long[] position = new long[0];
    private int size;
    private int emitted;
    private boolean filled;
    private Permutation order;
    /** Where the current block starts in the stream, and where the next one will. */
    private StreamPosition start;
    private StreamPosition after;
    /** Samples of the first block the saved pass delivered (resuming inside it). */
    private long skipInFirst;
    /** Sum of |place handed out - place in the stream| of the samples handed out, for the stats. */
    long displacement;

    /** Added to a pass's shard position to give the stream's own, which keys a block's order. */
    private final long shift;

    /**
     * @param key   the block orders' key: a function of (seed, epoch, stream)
     * @param shift the stream's shard position less the pass's (resumed passes number from 0)
     * @param at    where the first block starts
     * @param skip  how many of the first block's order the saved pass delivered
     */
    ShuffleWindow(int window, long bytes, boolean defaultWindow, long key, long shift, StreamPosition at, long skip) {
        this.window = window;
        this.bytes = bytes;
        this.defaultWindow = defaultWindow;
        this.key = key;
        this.shift = shift;
        this.after = at;
        this.start = at;
        this.skipInFirst = skip;
    }

    /** The next sample to hand out into {@code out}; false when the stream has none left. */
    boolean next(StreamItem out, Stream stream, long t0) {
        if (!filled || emitted >= size) {
            if (!fill(stream, t0)) {
                return false;
            }
        }
        int k = (int) order.apply(emitted);
        out.value = values[k];
        out.shard = shard[k];
        out.offset = offset[k];
        out.shardPosition = position[k];
        values[k] = null;
        displacement += Math.abs(emitted - k);
        emitted++;
        return true;
    }

    /** The block's start, if some of it is still to go out, else the next block's. */
    StreamPosition resumeAt() {
        return emitted == size ? after : start;
    }

    /** How many of the block at {@link #resumeAt} went out. */
    long resumeEmitted() {
        return emitted == size ? 0 : emitted;
    }

    /** Takes the next block of up to {@code window} samples (and {@code bytes}) from the stream; false if none is left. */
    private boolean fill(Stream stream, long t0) {
        stream.blocksDone(); // every sample of the blocks before this one went out
        start = after;
        int n = 0;
        long sum = 0;
        StreamItem t = taken;
        long lastShard = after.shard();
        long lastOffset = after.offset();
        while (n < window && (bytes == 0 || sum < bytes)) {
            if (!stream.take(t, t0, window - n)) {
                break;
            }
            if (n == values.length) {
                // grown as filled: a window bounded in bytes has no sample count to size it by
                int cap = (int) Math.min(window, Math.max(16, 2L * n));
                values = java.util.Arrays.copyOf(values, cap);
                shard = java.util.Arrays.copyOf(shard, cap);
                offset = java.util.Arrays.copyOf(offset, cap);
                position = java.util.Arrays.copyOf(position, cap);
            }
            if (bytes > 0) {
                sum += defaultWindow ? Sized.orUnsized(t.value) : Sized.of(t.value);
            }
            values[n] = t.value;
            shard[n] = t.shard;
            offset[n] = t.offset;
            position[n] = t.shardPosition;
            lastShard = t.shardPosition;
            lastOffset = t.offset + 1;
            n++;
        }
        t.value = null;
        after = new StreamPosition(lastShard, lastOffset);
        size = n;
        emitted = 0;
        filled = true;
        if (n == 0) {
            return false;
        }
        order = new Permutation(n, Keys.key(key, start.shard() + shift, start.offset()));
        // resuming inside the first block: the first `skipInFirst` of its order were delivered
        for (; emitted < Math.min(n, skipInFirst); emitted++) {
            values[(int) order.apply(emitted)] = null;
        }
        skipInFirst = 0;
        return true;
    }
}
