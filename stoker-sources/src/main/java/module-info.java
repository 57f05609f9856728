/**
 * Sources as values: one spec per source (plain data that serializes to JSON) and its opener,
 * which returns a {@link dev.stoker.sources.Recipe}; and the loader's options as a spec. The CLI
 * maps its flags to these specs, the Python bridge sends them as JSON, and a Java user opens
 * "these shard URLs, decoded with this image pipeline" in one call.
 */
module dev.stoker.sources {
    requires transitive dev.stoker.core;
    requires transitive dev.stoker.storage;
    requires dev.stoker.formats;
    requires dev.stoker.hdf5;
    requires dev.stoker.parquet;
    requires dev.stoker.root;
    requires com.fasterxml.jackson.databind;

    exports dev.stoker.sources;
    opens dev.stoker.sources to com.fasterxml.jackson.databind;
}
