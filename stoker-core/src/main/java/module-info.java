/**
 * Stoker's engine and its API: datasets, samplers, transforms, collators and the
 * {@link dev.stoker.Loader} that runs them into batches. One package: its public types are the
 * API, and the engine behind them (the passes, the shard ring, the hand-offs) is package-private.
 */
module dev.stoker.core {
    requires com.fasterxml.jackson.core;
    requires dev.stoker.storage;
    requires java.management;
    requires jdk.management;

    exports dev.stoker;
    exports dev.stoker.internal to dev.stoker.formats, dev.stoker.parquet, dev.stoker.hdf5, dev.stoker.root;
}
