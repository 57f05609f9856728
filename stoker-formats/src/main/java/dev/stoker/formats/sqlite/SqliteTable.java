package dev.stoker.formats.sqlite;

import dev.stoker.CorruptShardException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * A table of an {@link SqliteFile}: its columns, and its rows in rowid order, each addressed by its
 * <em>ordinal</em> (its position in that order, from 0). The table's b-tree is walked once, on
 * first need, for the list of its leaf pages and the ordinal of each leaf's first row; a row is
 * then found by a binary search over that list, and a {@link Cursor} reads rows forward from it,
 * leaf after leaf, with no b-tree descent per row. Safe for concurrent use; a cursor is one
 * thread's.
 */
public final class SqliteTable {
    private static final int MAX_DEPTH = 64;

    private final SqliteFile file;
    private final String name;
    private final int root;
    private final SqlSchema schema;
    private volatile Leaves leaves;

    /** The leaf pages in order, and the ordinal of each one's first row ({@code first[leaves]} is the row count). */
    private record Leaves(int[] pages, long[] first) {
    }

    SqliteTable(SqliteFile file, String name, int root, SqlSchema schema) {
        this.file = file;
        this.name = name;
        this.root = root;
        this.schema = schema;
    }

    public String name() {
        return name;
    }

    /** The column names, in declared order. */
    public List<String> columns() {
        return schema.columns().stream().map(SqlSchema.Column::name).toList();
    }

    /** Each column's declared type, as written (upper case; "" when none). */
    public List<String> declaredTypes() {
        return schema.columns().stream().map(SqlSchema.Column::declared).toList();
    }

    /** Each column's type affinity ({@code INTEGER}, {@code REAL}, {@code TEXT}, {@code BLOB}, {@code NUMERIC}). */
    public List<String> affinities() {
        return schema.columns().stream().map(c -> c.affinity().name()).toList();
    }

    /** The index of column {@code column} (ASCII case ignored), or -1. */
    public int column(String column) {
        return schema.column(column);
    }

    /** The column that is an alias of the rowid ({@code INTEGER PRIMARY KEY}), or -1. */
    public int rowidAlias() {
        return schema.rowidAlias();
    }

    public boolean withoutRowid() {
        return schema.withoutRowid();
    }

    public boolean isVirtual() {
        return schema.virtual();
    }

    /** The root page of its b-tree. */
    public int rootPage() {
        return root;
    }

    SqlSchema schema() {
        return schema;
    }

    SqliteFile file() {
        return file;
    }

    /**
     * Refuses what this reader does not read by rows: a {@code WITHOUT ROWID} table (its rows
     * are an index b-tree), a virtual table, generated columns.
     */
    public void checkReadable() throws CorruptShardException {
        String why = unread();
        if (why != null) {
            throw new CorruptShardException(file.name(), -1, "table " + name + " " + why);
        }
    }

    /** Why this table's rows are not read (a WITHOUT ROWID or virtual table, ...), or null when they are. */
    public String unread() {
        return schema.unreadable() != null ? "has a CREATE statement Stoker cannot read: " + schema.unreadable()
                : schema.withoutRowid() ? "is a WITHOUT ROWID table, which Stoker does not read (copy it into an "
                + "ordinary table: CREATE TABLE t2 AS SELECT * FROM " + name + ")"
                : schema.virtual() ? "is a virtual table: its rows are not in the file"
                : schema.generated() ? "has generated columns, which Stoker does not read (copy it into an ordinary table: "
                + "CREATE TABLE t2 AS SELECT * FROM " + name + ")" : null;
    }

    /** The number of rows (the b-tree's leaf cells). */
    public long rows() throws IOException {
        return leaves().first[leaves().pages.length];
    }

    private Leaves leaves() throws IOException {
        Leaves l = leaves;
        if (l == null) {
            synchronized (this) {
                l = leaves;
                if (l == null) {
                    leaves = l = walk();
                }
            }
        }
        return l;
    }

    /**
     * The leaf pages of the b-tree, in key order: a walk from the root that visits each page at
     * most once (NOTE [Bounded by the file] in {@link SqliteFile}).
     */
    private Leaves walk() throws IOException {
        checkReadable();
        MemorySegment b = file.bytes();
        BitSet seen = new BitSet();
        int[] pages = new int[16];
        long[] first = new long[17];
        int count = 0;
        // a stack of (page, next child) frames
        int[] stackPage = new int[MAX_DEPTH];
        int[] stackNext = new int[MAX_DEPTH];
        int depth = 0;
        stackPage[0] = root;
        stackNext[0] = -1;
        visit(seen, root, "table " + name + " root", -1);
        while (depth >= 0) {
            int page = stackPage[depth];
            long at = file.page(page, "table " + name, -1);
            long h = at + (page == 1 ? 100 : 0);
            int type = b.get(ValueLayout.JAVA_BYTE, h);
            int cells = Short.toUnsignedInt(b.get(SqliteFile.U16, h + 3));
            if (type == 13) {
                checkCells(page, h, 8, cells);
                if (count == pages.length) {
                    pages = java.util.Arrays.copyOf(pages, count * 2);
                    first = java.util.Arrays.copyOf(first, count * 2 + 1);
                }
                pages[count] = page;
                first[count + 1] = first[count] + cells;
                count++;
                depth--;
                continue;
            }
            if (type != 5) {
                throw new CorruptShardException(file.name(), h, "table " + name + ": page " + page + " has type " + type
                        + ", expected a table b-tree page (5 or 13)");
            }
            checkCells(page, h, 12, cells);
            int next = ++stackNext[depth];
            if (next > cells) {
                depth--;
                continue;
            }
            long child;
            long from;
            if (next < cells) {
                long ptr = h + 12 + 2L * next;
                from = at + Short.toUnsignedInt(b.get(SqliteFile.U16, ptr));
                if (from < h + 12 + 2L * cells || from + 4 > at + file.usable()) {
                    throw new CorruptShardException(file.name(), ptr, "table " + name + ", page " + page + ": cell " + next
                            + " points to byte " + (from - at) + " of its page, outside the cell area");
                }
                child = Integer.toUnsignedLong(b.get(SqliteFile.U32, from));
            } else {
                from = h + 8;
                child = Integer.toUnsignedLong(b.get(SqliteFile.U32, from));
            }
            file.page(child, "table " + name + ": a child of page " + page, from);
            visit(seen, (int) child, "table " + name + ": page " + page, from);
            if (depth + 1 >= MAX_DEPTH) {
                throw new CorruptShardException(file.name(), from, "table " + name + ": its b-tree is deeper than " + MAX_DEPTH + " pages");
            }
            depth++;
            stackPage[depth] = (int) child;
            stackNext[depth] = -1;
        }
        return new Leaves(java.util.Arrays.copyOf(pages, count), java.util.Arrays.copyOf(first, count + 1));
    }

    private void visit(BitSet seen, int page, String from, long at) throws CorruptShardException {
        if (seen.get(page)) {
            throw new CorruptShardException(file.name(), at, from + " points to page " + page
                    + ", which the b-tree already holds (a cycle)");
        }
        seen.set(page);
    }

    /** Checks that a page's cell-pointer array lies within the page. */
    private void checkCells(int page, long h, int header, int cells) throws CorruptShardException {
        long at = (long) (page - 1) * file.pageSize();
        if (h + header + 2L * cells > at + file.usable()) {
            throw new CorruptShardException(file.name(), h + 3, "table " + name + ": page " + page + " claims " + cells
                    + " cells, more than its " + file.usable() + " bytes hold");
        }
    }

    /** A cursor before row {@code ordinal} (its first {@link Cursor#next} reads that row). */
    public Cursor cursor(long ordinal) throws IOException {
        Leaves l = leaves();
        long total = l.first[l.pages.length];
        if (ordinal < 0 || ordinal > total) {
            throw new IndexOutOfBoundsException("row " + ordinal + " of " + total);
        }
        int leaf = java.util.Arrays.binarySearch(l.first, 0, l.pages.length, ordinal);
        leaf = Math.max(0, leaf < 0 ? -leaf - 2 : leaf); // the leaf that holds it (an empty one before it is passed by next)
        return new Cursor(l, leaf, (int) (ordinal - l.first[leaf]));
    }

    /**
     * Reads rows forward from a position: {@link #next} moves to the next row, {@link #record}
     * decodes its columns. Each row's cell and payload are checked against its page and the file
     * as they are read. One thread's.
     */
    public final class Cursor implements AutoCloseable {
        private final Leaves l;
        private int leaf;
        private int cell;
        private long pageAt;
        private long header;
        private int cells;
        private long rowid;
        private MemorySegment payload;
        private long payloadAt;
        private long payloadSize;
        private byte[] spill = new byte[0];

        private Cursor(Leaves l, int leaf, int cell) {
            this.l = l;
            this.leaf = leaf;
            this.cell = cell - 1;
            this.cells = -1;
        }

        /** Moves to the next row; false past the last. */
        public boolean next() throws IOException {
            cell++;
            while (cells < 0 || cell >= cells) {
                if (cells >= 0) {
                    leaf++;
                    cell = 0;
                }
                if (leaf >= l.pages.length) {
                    cells = 0;
                    cell = 0;
                    return false;
                }
                int page = l.pages[leaf];
                pageAt = (long) (page - 1) * file.pageSize();
                header = pageAt + (page == 1 ? 100 : 0);
                cells = (int) (l.first[leaf + 1] - l.first[leaf]);
            }
            readCell();
            return true;
        }

        private void readCell() throws IOException {
            MemorySegment b = file.bytes();
            long end = pageAt + file.usable();
            long ptr = header + 8 + 2L * cell;
            long at = pageAt + Short.toUnsignedInt(b.get(SqliteFile.U16, ptr));
            if (at < header + 8 + 2L * cells || at >= end) {
                throw corrupt(ptr, "cell " + cell + " points to byte " + (at - pageAt) + " of its page, outside the cell area");
            }
            long p = at;
            long size = 0;
            for (int i = 0; ; i++) { // varint: the payload's size
                if (p >= end) {
                    throw corrupt(at, "a cell runs past its page");
                }
                int v = b.get(ValueLayout.JAVA_BYTE, p++);
                if (i == 8) {
                    size = size << 8 | (v & 0xff);
                    break;
                }
                size = size << 7 | (v & 0x7f);
                if (v >= 0) {
                    break;
                }
            }
            long key = 0;
            for (int i = 0; ; i++) { // varint: the rowid
                if (p >= end) {
                    throw corrupt(at, "a cell runs past its page");
                }
                int v = b.get(ValueLayout.JAVA_BYTE, p++);
                if (i == 8) {
                    key = key << 8 | (v & 0xff);
                    break;
                }
                key = key << 7 | (v & 0x7f);
                if (v >= 0) {
                    break;
                }
            }
            rowid = key;
            int u = file.usable();
            long x = u - 35;
            if (size < 0 || size > (long) file.pages() * u) {
                throw corrupt(at, "a payload of " + size + " bytes, more than the file holds");
            }
            if (size <= x) {
                if (p + size > end) {
                    throw corrupt(at, "a payload of " + size + " bytes runs past its page");
                }
                payload = b;
                payloadAt = p;
                payloadSize = size;
                return;
            }
            long m = ((long) (u - 12) * 32 / 255) - 23;
            long k = m + ((size - m) % (u - 4));
            long local = k <= x ? k : m;
            if (p + local + 4 > end) {
                throw corrupt(at, "a payload's first " + local + " bytes and overflow pointer run past its page");
            }
            if (spill.length < size) {
                spill = new byte[(int) Math.min(Integer.MAX_VALUE - 8, Math.max(size, spill.length * 2L))];
                if (spill.length < size) {
                    throw corrupt(at, "a row of " + size + " bytes, more than Stoker reads in one row");
                }
            }
            MemorySegment.copy(b, ValueLayout.JAVA_BYTE, p, spill, 0, (int) local);
            long done = local;
            long next = Integer.toUnsignedLong(b.get(SqliteFile.U32, p + local));
            long from = p + local;
            // the chain is as long as the payload needs, no longer: a cyclic one ends here, refused
            while (done < size) {
                long o = file.page(next, "table " + name + ": an overflow page", from);
                long n = Math.min(u - 4, size - done);
                MemorySegment.copy(b, ValueLayout.JAVA_BYTE, o + 4, spill, (int) done, (int) n);
                done += n;
                from = o;
                next = Integer.toUnsignedLong(b.get(SqliteFile.U32, o));
            }
            if (next != 0) {
                throw corrupt(from, "an overflow chain goes on past the " + size + " bytes of its row (to page " + next
                        + "): a cycle, or a damaged page");
            }
            payload = MemorySegment.ofArray(spill);
            payloadAt = 0;
            payloadSize = size;
        }

        private CorruptShardException corrupt(long at, String what) {
            return new CorruptShardException(file.name(), at, "table " + name + ", page " + l.pages[leaf] + ": " + what);
        }

        /** The current row's rowid. */
        public long rowid() {
            return rowid;
        }

        /** Decodes the current row into {@code r}. */
        public void record(SqliteRecord r) throws CorruptShardException {
            r.decode(payload, payloadAt, payloadSize, rowid, l.pages[leaf]);
        }

        @Override
        public void close() {
            spill = new byte[0];
        }
    }

    /** The number of leaf pages (for a description). */
    public int leafPages() throws IOException {
        return leaves().pages.length;
    }

    @Override
    public String toString() {
        return file.name() + ":" + name;
    }

    /** The column names that are not among this table's, for a message. */
    List<String> missing(List<String> wanted) {
        List<String> out = new ArrayList<>();
        for (String w : wanted) {
            if (column(w) < 0) {
                out.add(w);
            }
        }
        return out;
    }
}
