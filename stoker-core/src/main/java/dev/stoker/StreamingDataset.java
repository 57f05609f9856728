package dev.stoker;

import java.io.IOException;

/**
 * A dataset read as a stream: an ordered list of shards, each read front to back (a gzipped tar
 * over HTTP, a JSONL file). The loader orders the shards with its {@link Sampler}, gives each rank
 * its share of shards with a {@link Partition}, reads several shards ahead in parallel, and makes
 * batches from the rank's shards in order, so batches still depend only on
 * {@code (seed, epoch, rank, worldSize)}. Resuming reopens the current shard and skips the samples
 * already delivered; at a different world size, from the {@link LoaderState#merge} of every old
 * rank's states (NOTE [Elastic streams]).
 */
public interface StreamingDataset<T> {

    /** Number of shards. */
    int shards();

    /** Opens shard {@code shard} at its first sample. Called from worker threads. */
    ShardReader<T> open(int shard) throws IOException;

    /**
     * The shards this rank will open from now on in this pass, in the order it will open them (the
     * first 65,536 of an endless stream); called as each epoch (or resumed run) starts, before any
     * {@link #open}. A remote dataset
     * uses it to download ahead and to keep what comes soonest; the default ignores it.
     */
    default void plan(int[] shards) {
    }

    /** A name for shard {@code shard} in errors, e.g. its file or URL. */
    default String shardName(int shard) {
        return name() + "[" + shard + "]";
    }

    /**
     * A fingerprint of this dataset's content (0: none given), recorded in a {@link LoaderState}
     * and checked when a loader resumes from it, so that a state saved from other data is refused
     * rather than continued at positions that mean other samples. It depends on the content only,
     * never on where the bytes live: a state saved reading from S3 resumes on the staged copy.
     */
    default long fingerprint() {
        return 0;
    }

    /**
     * A check of shard {@code shard}'s content (0: none given), taken when a state is saved inside
     * the shard and compared when a loader resumes there, so that a resume does not skip samples
     * of another shard of the same name (NOTE [Shard check]). Like {@link #fingerprint()} it
     * depends on the content only, never on where the bytes live. Called outside the hot path: as
     * a state is taken and as a loader resumes.
     */
    default long shardCheck(int shard) throws IOException {
        return 0;
    }

    default String name() {
        return getClass().getSimpleName();
    }

    /**
     * This dataset's shards read through {@code stage}: the same shards, names and plan, each
     * shard's samples made by the stage from this dataset's ({@link ShardStage}). Its fingerprint
     * is this one's with the stage's mixed in (0 if this one gives none).
     */
    default <R> StreamingDataset<R> through(ShardStage<? super T, R> stage) {
        return new Staged<>(this, stage);
    }

    /**
     * The samples of one shard, in order. A loader closes a reader only once every sample it
     * returned is done with (collated into a batch, or dropped), possibly on another thread than
     * the one that read it; so a sample may borrow the reader's memory (a slice of a mapped file)
     * until then.
     */
    interface ShardReader<T> extends AutoCloseable {

        /** The next sample, or {@code null} at the end of the shard. */
        T next() throws IOException;

        /**
         * The next sample as {@link #next()} gives it, but borrowed: valid only until the next
         * call on this reader, so that a reader may hand out a view of its own buffer (a line of
         * text) instead of a copy. A {@link ShardStage} that is done with each sample before it
         * asks for the next one reads its upstream this way; the loader, which keeps samples,
         * calls {@link #next()}. The default is {@link #next()}.
         */
        default T nextBorrowed() throws IOException {
            return next();
        }

        /**
         * Skips {@code n} samples; returns how many there were to skip. Malformed records
         * ({@link CorruptRecordException}) are passed over: they are no samples.
         */
        default long skip(long n) throws IOException {
            long k = 0;
            while (k < n) {
                try {
                    if (nextBorrowed() == null) {
                        break;
                    }
                } catch (CorruptRecordException e) {
                    continue;
                }
                k++;
            }
            return k;
        }

        @Override
        void close() throws IOException;
    }
}
