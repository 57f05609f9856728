package dev.stoker;

import java.io.IOException;
import java.util.Objects;

/** A streaming dataset read through a {@link ShardStage}: {@link StreamingDataset#through}. */
final class Staged<T, R> implements StreamingDataset<R> {
    private final StreamingDataset<T> upstream;
    private final ShardStage<? super T, R> stage;

    Staged(StreamingDataset<T> upstream, ShardStage<? super T, R> stage) {
        this.upstream = Objects.requireNonNull(upstream, "upstream");
        this.stage = Objects.requireNonNull(stage, "stage");
    }

    @Override
    public int shards() {
        return upstream.shards();
    }

    @Override
    public ShardReader<R> open(int shard) throws IOException {
        return stage.open(upstream.open(shard));
    }

    @Override
    public void plan(int[] shards) {
        upstream.plan(shards);
    }

    @Override
    public String shardName(int shard) {
        return upstream.shardName(shard);
    }

    @Override
    public long fingerprint() {
        long h = upstream.fingerprint();
        if (h == 0) {
            return 0;
        }
        long staged = Keys.key(h, stage.fingerprint());
        return staged == 0 ? 1 : staged;
    }

    /** The upstream shard's: a stage makes the same samples from the same bytes. */
    @Override
    public long shardCheck(int shard) throws IOException {
        return upstream.shardCheck(shard);
    }

    @Override
    public String name() {
        return upstream.name();
    }
}
