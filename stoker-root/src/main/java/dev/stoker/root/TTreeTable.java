package dev.stoker.root;

import java.io.IOException;

/** A TTree's numeric branches as a {@link RootTable}. */
final class TTreeTable {
    private TTreeTable() {
    }

    static RootTable open(RootFile file, Key key, String name) throws IOException {
        throw new IOException(file.path() + ": " + key + ": TTree not yet read");
    }
}
