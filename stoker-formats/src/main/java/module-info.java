/**
 * The formats Stoker reads and writes, a package each: WebDataset tar shards
 * ({@code dev.stoker.formats.tar}), JSON lines and text ({@code .text}), token data for language
 * models ({@code .tokens}), numpy arrays ({@code .npy}), the tensors of {@code torch.save} and
 * safetensors files and arrays as dataset columns ({@code .tensors}), images ({@code .image}), and the record
 * formats of other loaders, read as they are: MosaicML's MDS ({@code .mds}), TFRecord
 * ({@code .tfrecord}), ArrayRecord ({@code .riegeli}), LitData's chunks ({@code .litdata}) and Arrow
 * IPC files as Hugging Face's {@code datasets} saves them ({@code .arrow}), through {@code .records}; and
 * SQLite databases of event tables ({@code .sqlite}), read without SQLite. The I/O
 * plumbing they share ({@code .io}) is Stoker's own, open to its other modules only.
 */
module dev.stoker.formats {
    requires transitive dev.stoker.core;
    requires transitive dev.stoker.storage;
    requires com.fasterxml.jackson.core;
    requires com.fasterxml.jackson.databind;
    requires com.github.luben.zstd_jni;
    requires java.desktop;
    requires java.management;
    requires jdk.management;
    requires jdk.incubator.vector;
    requires jtokkit;
    requires org.lz4.java;
    requires org.apache.arrow.format;

    exports dev.stoker.formats.arrow;
    exports dev.stoker.formats.image;
    exports dev.stoker.formats.litdata;
    exports dev.stoker.formats.mds;
    exports dev.stoker.formats.npy;
    exports dev.stoker.formats.records;
    exports dev.stoker.formats.riegeli;
    exports dev.stoker.formats.sqlite;
    exports dev.stoker.formats.tar;
    exports dev.stoker.formats.tensors;
    exports dev.stoker.formats.text;
    exports dev.stoker.formats.tfrecord;
    exports dev.stoker.formats.tokens;
    exports dev.stoker.formats.io to dev.stoker.hdf5, dev.stoker.sources, dev.stoker.cli;
}
