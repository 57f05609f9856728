package dev.stoker.root;

import java.io.IOException;

/** An RNTuple (ROOT's columnar successor of the TTree) as a {@link RootTable}. */
final class RNTupleTable {
    private RNTupleTable() {
    }

    /** The RNTuple whose anchor is {@code key}'s payload. */
    static RootTable open(RootFile file, Key key) throws IOException {
        throw new IOException(file.path() + ": " + key + ": RNTuple not yet read");
    }
}
