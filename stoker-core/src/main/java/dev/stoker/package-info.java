/**
 * Stoker's core: the path from a dataset to batches in off-heap memory.
 *
 * <p>A tour. A {@link dev.stoker.Dataset} ({@code size()}, {@code get(long)}) or a
 * {@link dev.stoker.DirectDataset} (writes samples straight into batch rows) is the source. A
 * {@link dev.stoker.Sampler} turns {@code (dataset size, seed, epoch)} into an
 * {@link dev.stoker.Order}: sequential, a keyed {@link dev.stoker.Permutation} in O(1) memory, or
 * weighted draws. A {@link dev.stoker.Partition} gives each rank its share. The
 * {@link dev.stoker.Loader} runs fetch, {@link dev.stoker.Transform} and
 * {@link dev.stoker.Collator} on worker threads, writes each sample once into a pooled
 * {@link dev.stoker.Batch} (memory from an {@link dev.stoker.Allocator}), and hands batches to the
 * consumer in order, a bounded number ahead. {@link dev.stoker.LoaderState} is where it stands
 * (exact and elastic resume); {@link dev.stoker.LoaderStats} is what it measured.
 */
package dev.stoker;
