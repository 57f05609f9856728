package dev.stoker;

/**
 * A place in this rank's stream of shards: sample {@code offset} of the shard at position
 * {@code shard}. The position after the last sample of a shard may be written either as
 * {@code (m, size)} or {@code (m + 1, 0)}; resuming reads the same samples from both.
 */
record StreamPosition(long shard, long offset) {
}
