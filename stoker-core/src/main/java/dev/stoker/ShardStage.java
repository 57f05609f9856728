package dev.stoker;

import dev.stoker.StreamingDataset.ShardReader;
import java.io.IOException;

/**
 * A stage over the samples of one shard, in order: any number in, any number out. Packing
 * documents into fixed-length windows is one (many short documents make a window, one long
 * document makes many); grouping and filtering are others. {@link StreamingDataset#through} puts a
 * stage between a dataset's shards and the loader, and stages compose with {@link #andThen}:
 * {@code text.through(tokenize.andThen(pack))}.
 *
 * <p>A stage runs on the thread reading its shard, before the loader's {@link Transform}, which
 * runs per sample on any worker. Its contract:
 * <ul>
 *   <li>Its output depends only on the shard's samples from the shard's start. A resumed loader
 *       reopens the shard and skips the samples it had delivered, so the stage must give the same
 *       output again for the same input.</li>
 *   <li>A {@link CorruptRecordException} from upstream (a malformed record, thrown once upstream is
 *       past it) passes through the stage, which keeps its state across it (a partly filled
 *       window), so the loader's {@link ErrorPolicy} decides as it would without the stage and a
 *       skipped record loses nothing around it.</li>
 *   <li>It reads its upstream with {@link ShardReader#nextBorrowed()} when it is done with each
 *       sample before asking for the next (as packing is), so that upstream may lend a view of
 *       its buffer instead of a copy.</li>
 *   <li>Its own output from {@code next()} is the loader's to hold until collated, as any shard
 *       reader's is.</li>
 * </ul>
 */
@FunctionalInterface
public interface ShardStage<T, R> {

    /**
     * This stage over one shard, read by {@code upstream}. The returned reader owns
     * {@code upstream} and closes it when closed; if this method throws, it has closed
     * {@code upstream} first.
     */
    ShardReader<R> open(ShardReader<? extends T> upstream) throws IOException;

    /**
     * What shapes this stage's output (its settings: a window length, a tokenizer), mixed into the
     * fingerprint of a dataset read through it ({@link StreamingDataset#through}). 0: nothing but
     * the stage's presence.
     */
    default long fingerprint() {
        return 0;
    }

    /** This stage, then {@code next} over its output, on the same thread. */
    default <V> ShardStage<T, V> andThen(ShardStage<? super R, V> next) {
        java.util.Objects.requireNonNull(next, "next");
        ShardStage<T, R> first = this;
        return new ShardStage<>() {
            @Override
            public ShardReader<V> open(ShardReader<? extends T> upstream) throws IOException {
                return next.open(first.open(upstream));
            }

            @Override
            public long fingerprint() {
                return Keys.key(first.fingerprint(), next.fingerprint());
            }
        };
    }
}
