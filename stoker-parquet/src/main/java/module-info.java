/** Parquet datasets: row groups read from any store, column chunks decoded straight into batches. */
module dev.stoker.parquet {
    requires transitive dev.stoker.core;
    requires transitive dev.stoker.storage;
    requires com.github.luben.zstd_jni;
    requires dev.hardwood.core;
    requires java.logging;
    requires org.lz4.java;
    requires snappy.java;

    exports dev.stoker.parquet;
}
