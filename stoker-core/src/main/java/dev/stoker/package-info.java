/**
 * Stoker's core: the path from a dataset to batches in off-heap memory.
 *
 * <p>A tour. A {@link dev.stoker.Dataset} ({@code size()}, {@code get(long)}) or a
 * {@link dev.stoker.DirectDataset} (writes samples straight into batch rows) is the source. A
 * {@link dev.stoker.Sampler} turns {@code (dataset size, seed, epoch)} into an
 * {@link dev.stoker.Order}: sequential, a keyed permutation in O(1) memory ({@code internal.Permutation}),
 * or weighted draws. A {@code Partition} gives each rank its share, and a {@link dev.stoker.Tail}
 * says what becomes of what does not divide among the ranks. The
 * {@link dev.stoker.Loader} runs fetch, {@link dev.stoker.Transform} and
 * {@link dev.stoker.Collator} on worker threads, writes each sample once into a pooled
 * {@link dev.stoker.Batch} (memory from an {@link dev.stoker.Allocator}), and hands batches to the
 * consumer in order, a bounded number ahead; a {@link dev.stoker.Padding} makes ragged fields (lists
 * of numbers) padded tensors as they are written. A {@link dev.stoker.StreamingDataset} is read shard
 * by shard, through any {@link dev.stoker.ShardStage}s (packing, grouping: any number of samples
 * in and out) before the per-sample transform. {@link dev.stoker.LoaderState} is where it stands
 * (exact and elastic resume); {@link dev.stoker.LoaderStats} is what it measured.
 *
 * <p>Behind the API, package-private (docs/design/index.md names the owner of each behaviour):
 * {@code LoaderBuilder#build()} resolves every option into one immutable {@code Options}. A pass
 * over a dataset read by index is a {@code IndexedPass} (its {@code PassWorker}s fill pooled batches, a
 * {@code FreeList} hands buffers back, a {@code Tuner} sizes the workers and the window); a pass
 * over a stream is a {@code StreamPass}, which orchestrates a {@code ShardRing} per shard being read
 * (a {@code ShardCursor} reading it, helpers transforming ahead of the taker), a
 * {@code ShuffleWindow} (the shuffle window) and a {@code FilledQueue} (the collator's hand-off),
 * over an immutable {@code StreamEpoch}. {@code StageTimes} is what each stage cost. A
 * {@code PadLayout} maps a dataset's fields to the padded batch's columns for its {@code Row}s.
 */
package dev.stoker;
