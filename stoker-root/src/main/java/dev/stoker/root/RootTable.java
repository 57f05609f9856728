package dev.stoker.root;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * A tree of a ROOT file seen as a table of numeric columns: a TTree's branches or an RNTuple's
 * fields. Entries are numbered from 0; reads are safe from several threads at once.
 */
public interface RootTable extends AutoCloseable {
    /** The tree's name. */
    String name();

    /** Its number of entries. */
    long entries();

    /** The columns Stoker reads, in the tree's order. */
    List<RootColumn> columns();

    /**
     * The branches (fields) Stoker does not read, each with its type: strings, objects, nested
     * containers. A user who selects one is told its name and type.
     */
    Map<String, String> refused();

    /**
     * Entry numbers, ascending and starting with 0, where reading can start without decoding
     * earlier data: the union of a TTree's basket starts, an RNTuple's cluster starts.
     */
    long[] clusterStarts();

    /** The values of {@code c} over entries {@code [from, to)}. */
    ColumnData read(RootColumn c, long from, long to) throws IOException;

    @Override
    void close() throws IOException;
}
