/** CERN ROOT files read in pure Java from any store: the file layer (keys, directories, compressed blocks) and TTrees. */
module dev.stoker.root {
    requires transitive dev.stoker.core;
    requires transitive dev.stoker.storage;
    requires com.github.luben.zstd_jni;
    requires org.lz4.java;
    requires org.tukaani.xz;

    exports dev.stoker.root;
}
