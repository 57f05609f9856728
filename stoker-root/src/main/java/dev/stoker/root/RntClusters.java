package dev.stoker.root;

import dev.stoker.CorruptShardException;
import java.util.ArrayList;
import java.util.List;

/**
 * The footer's cluster groups and each group's page list: for every cluster its entry range and,
 * for every physical column, where its pages lie.
 */
final class RntClusters {
    private RntClusters() {
    }

    /** A cluster group: its entries and the link to its page list envelope. */
    record Group(long minEntry, long entrySpan, long clusters, long pageListLength, long pageListSize,
            long pageListOffset) {
    }

    /** A page: its element count, whether an XXH3 checksum follows it, and its bytes in the file. */
    record Page(long elements, boolean checksum, long size, long offset) {
    }

    /**
     * A column in a cluster: the index of its first element in the column, whether it is suppressed
     * (a secondary representation not used in this cluster), its compression settings and its pages.
     */
    record ColumnPages(long elementOffset, boolean suppressed, int compression, Page[] pages) {
        long elements() {
            long n = 0;
            for (Page p : pages) {
                n += p.elements();
            }
            return n;
        }
    }

    /** A cluster: its entries and its columns' pages (indexed by physical column id). */
    record Cluster(long firstEntry, long entries, ColumnPages[] columns) {
    }

    /** Parses the footer envelope's payload after its schema extension: the cluster groups. */
    static List<Group> groups(RntCursor c) throws CorruptShardException {
        RntCursor.Frame list = c.list();
        List<Group> out = new ArrayList<>();
        for (long i = 0; i < list.items(); i++) {
            RntCursor.Frame f = c.record();
            long min = c.i64();
            long span = c.i64();
            long clusters = c.u32();
            long[] link = c.envelopeLink();
            c.end(f);
            if (min < 0 || span < 0) {
                throw c.corrupt("cluster group " + i + " with first entry " + min + " and " + span + " entries");
            }
            out.add(new Group(min, span, clusters, link[0], link[1], link[2]));
        }
        c.end(list);
        return out;
    }

    /**
     * Parses a page list envelope's payload: {@code columns} physical columns a cluster; the
     * header checksum must be {@code headerChecksum}.
     */
    static List<Cluster> pageList(RntCursor c, long headerChecksum, int columns, long fileSize)
            throws CorruptShardException {
        long check = c.i64();
        if (check != headerChecksum) {
            throw c.corrupt("header checksum " + Long.toHexString(check) + " does not match the header's "
                    + Long.toHexString(headerChecksum));
        }
        RntCursor.Frame summaries = c.list();
        List<long[]> ranges = new ArrayList<>();
        for (long i = 0; i < summaries.items(); i++) {
            RntCursor.Frame f = c.record();
            long first = c.i64();
            long word = c.i64();
            c.end(f);
            long entries = word & 0x00FFFFFFFFFFFFFFL;
            int flags = (int) (word >>> 56);
            if ((flags & 0x01) != 0) {
                throw c.corrupt("cluster " + i + " is sharded (flag 0x01): not part of RNTuple 1.0");
            }
            if (first < 0) {
                throw c.corrupt("cluster " + i + " starts at entry " + first);
            }
            ranges.add(new long[] {first, entries});
        }
        c.end(summaries);
        RntCursor.Frame top = c.list();
        if (top.items() != ranges.size()) {
            throw c.corrupt("page locations for " + top.items() + " clusters, summaries for " + ranges.size());
        }
        List<Cluster> out = new ArrayList<>(ranges.size());
        for (int k = 0; k < ranges.size(); k++) {
            RntCursor.Frame outer = c.list();
            if (outer.items() != columns) {
                throw c.corrupt("cluster " + k + " lists " + outer.items() + " columns, the schema has " + columns);
            }
            ColumnPages[] cols = new ColumnPages[columns];
            for (int j = 0; j < columns; j++) {
                RntCursor.Frame inner = c.list();
                Page[] pages = new Page[(int) inner.items()];
                for (int p = 0; p < pages.length; p++) {
                    int n = c.i32();
                    long[] loc = c.locator();
                    boolean sum = n < 0;
                    long elements = sum ? -(long) n : n;
                    if (loc[0] < 0 || loc[1] < 0 || loc[1] > fileSize || loc[0] > fileSize - loc[1]) {
                        throw c.corrupt("cluster " + k + " column " + j + " page " + p + " (" + loc[0] + " bytes at byte "
                                + loc[1] + ") lies outside the file (" + fileSize + " bytes)");
                    }
                    pages[p] = new Page(elements, sum, loc[0], loc[1]);
                }
                long offset = c.i64();
                boolean suppressed = offset < 0;
                int compression = suppressed ? 0 : c.i32();
                c.end(inner);
                if (suppressed && pages.length > 0) {
                    throw c.corrupt("cluster " + k + " column " + j + " is suppressed but lists " + pages.length
                            + " pages");
                }
                cols[j] = new ColumnPages(suppressed ? 0 : offset, suppressed, compression, pages);
            }
            c.end(outer);
            out.add(new Cluster(ranges.get(k)[0], ranges.get(k)[1], cols));
        }
        c.end(top);
        return out;
    }
}
