package dev.stoker;

/** A sample on its way from a shard to a batch: its value (or why it failed) and where it came from. */
final class StreamItem {
    Object value;
    Throwable error;
    int shard;
    /** The position of its shard in this rank's stream. */
    long shardPosition;
    /** Its offset in the shard. */
    long offset;

    void set(Object value, int shard, long offset) {
        this.value = value;
        this.shard = shard;
        this.offset = offset;
    }
}
