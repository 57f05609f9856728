/** The {@code stoker} command: demo, bench, inspect, ls, prepare, stage, estimate and the Python bridge's serve. */
module dev.stoker.cli {
    requires com.fasterxml.jackson.core;
    requires com.fasterxml.jackson.databind;
    requires dev.stoker.bridge;
    requires dev.stoker.core;
    requires dev.stoker.formats;
    requires dev.stoker.hdf5;
    requires dev.stoker.parquet;
    requires dev.stoker.root;
    requires dev.stoker.sources;
    requires dev.stoker.storage;
    requires info.picocli;
    requires java.desktop;
    requires java.logging;
    requires java.management;
    requires me.tongfei.progressbar;
    requires xchart;

    opens dev.stoker.cli to info.picocli;
}
