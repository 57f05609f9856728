package dev.stoker.formats.sqlite;

import dev.stoker.CorruptShardException;
import dev.stoker.formats.io.MappedFile;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An SQLite database file read in place, as the file format describes it
 * (https://www.sqlite.org/fileformat2.html), without SQLite: the file is mapped read-only and
 * never written, so no journal, WAL or shared-memory file is ever made beside it, and a read-only
 * file in a read-only folder reads as any other. It gives the schema (tables with their columns and
 * declared types, indexes) and each rowid table's rows in rowid order ({@link SqliteTable}).
 *
 * <p>NOTE [Bounded by the file]: every number read from the file is checked against the file
 * before it is used: the page size and count against the file's length, every page number against
 * the page count, every cell pointer and payload against its page, every overflow chain's length
 * against the payload it carries (so a cyclic chain ends, refused, and never loops), and a b-tree
 * walk visits each page at most once. A file that breaks one is refused in one line naming the
 * file, the page and the byte offset.
 *
 * <p>A database in WAL mode whose {@code -wal} file holds frames, or one with a hot rollback
 * journal beside it, is refused: its current content is not all in the main file, and reading the
 * main file alone would give an older state of it.
 */
public final class SqliteFile implements AutoCloseable {
    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final byte[] MAGIC = "SQLite format 3\0".getBytes(StandardCharsets.US_ASCII);

    private final MappedFile file;
    private final MemorySegment bytes;
    private final String name;
    private final int pageSize;
    private final int usable;
    private final long pages;
    private final Charset text;
    private final long changeCounter;
    private final Map<String, SqliteTable> tables = new LinkedHashMap<>();
    private final List<Index> indexes = new ArrayList<>();

    /** An index of the schema: its name, its table and its CREATE statement. */
    public record Index(String name, String table, String sql) {
    }

    private SqliteFile(MappedFile file) throws IOException {
        this.file = file;
        this.bytes = file.segment();
        this.name = file.path().toString();
        long size = bytes.byteSize();
        if (size < 100 || MemorySegment.mismatch(bytes, 0, 16, MemorySegment.ofArray(MAGIC), 0, 16) != -1) {
            throw new CorruptShardException(name, 0, "not an SQLite database: expected 'SQLite format 3' at its start");
        }
        int ps = Short.toUnsignedInt(bytes.get(U16, 16));
        ps = ps == 1 ? 65536 : ps;
        if (ps < 512 || Integer.bitCount(ps) != 1) {
            throw new CorruptShardException(name, 16, "page size " + ps + " is not a power of two from 512 to 65536");
        }
        this.pageSize = ps;
        int reserved = Byte.toUnsignedInt(bytes.get(ValueLayout.JAVA_BYTE, 20));
        this.usable = ps - reserved;
        if (usable < 480) {
            throw new CorruptShardException(name, 20, reserved + " reserved bytes a page leave " + usable
                    + " usable bytes, fewer than the 480 SQLite needs");
        }
        int read = Byte.toUnsignedInt(bytes.get(ValueLayout.JAVA_BYTE, 19));
        if (read > 2) {
            throw new CorruptShardException(name, 19, "file format read version " + read + ": only 1 (rollback) and 2 (WAL) are known");
        }
        this.changeCounter = Integer.toUnsignedLong(bytes.get(U32, 24));
        long declared = Integer.toUnsignedLong(bytes.get(U32, 28));
        long valid = Integer.toUnsignedLong(bytes.get(U32, 92));
        long inFile = size / ps;
        if (declared != 0 && valid == changeCounter) {
            if (declared > inFile) {
                throw new CorruptShardException(name, 28, "truncated: the header says " + declared + " pages of " + ps
                        + " bytes, the file has " + size + " bytes (" + inFile + " pages)");
            }
            this.pages = declared;
        } else {
            this.pages = inFile; // an old writer's file: its size is its page count
        }
        int enc = bytes.get(U32, 56);
        this.text = switch (enc) {
            case 0, 1 -> StandardCharsets.UTF_8;
            case 2 -> StandardCharsets.UTF_16LE;
            case 3 -> StandardCharsets.UTF_16BE;
            default -> throw new CorruptShardException(name, 56, "text encoding " + enc + " (expected 1 UTF-8, 2 UTF-16le or 3 UTF-16be)");
        };
        checkBeside(read);
        readSchema();
    }

    /**
     * Opens {@code path} read-only. Nothing is written, beside it or anywhere.
     *
     * @throws CorruptShardException not an SQLite file, or a damaged one, named
     */
    public static SqliteFile open(Path path) throws IOException {
        MappedFile f = MappedFile.open(path);
        try {
            return new SqliteFile(f);
        } catch (IOException | RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /** Whether {@code head} (a file's first bytes) start as an SQLite database does. */
    public static boolean isSqlite(byte[] head) {
        return head.length >= 16 && java.util.Arrays.equals(head, 0, 16, MAGIC, 0, 16);
    }

    private void checkBeside(int readVersion) throws IOException {
        Path wal = Path.of(name + "-wal");
        if (readVersion == 2 && Files.isRegularFile(wal) && Files.size(wal) > 32) {
            throw new CorruptShardException(name, -1, "is in WAL mode and " + wal.getFileName() + " holds changes not yet "
                    + "written into it: checkpoint it first (sqlite3 " + file.name() + " 'PRAGMA wal_checkpoint(TRUNCATE)')");
        }
        Path journal = Path.of(name + "-journal");
        if (Files.isRegularFile(journal) && Files.size(journal) > 0) {
            throw new CorruptShardException(name, -1, "has a rollback journal beside it (" + journal.getFileName()
                    + "): a write was interrupted; open it once with sqlite3 to roll it back");
        }
    }

    private void readSchema() throws IOException {
        SqliteTable schema = new SqliteTable(this, "sqlite_schema", 1,
                SqlSchema.parse("CREATE TABLE sqlite_schema(type text, name text, tbl_name text, rootpage integer, sql text)"));
        List<Object[]> rows = new ArrayList<>();
        try (SqliteTable.Cursor c = schema.cursor(0)) {
            SqliteRecord r = new SqliteRecord(schema);
            while (c.next()) {
                c.record(r);
                rows.add(new Object[] {r.text(0), r.text(1), r.text(2), r.isNull(3) ? 0L : r.integer(3), r.text(4)});
            }
        }
        for (Object[] row : rows) {
            String type = (String) row[0];
            String tname = (String) row[1];
            long root = (Long) row[3];
            String sql = (String) row[4];
            if ("table".equals(type) && sql != null) {
                if (root < 0 || root > pages) {
                    throw new CorruptShardException(name, -1, "table " + tname + ": root page " + root + " is not among the file's "
                            + pages + " pages");
                }
                SqlSchema parsed;
                if (root == 0) {
                    parsed = null; // a virtual table: no rows in the file
                } else {
                    try {
                        parsed = SqlSchema.parse(sql);
                    } catch (IllegalArgumentException e) {
                        parsed = SqlSchema.unreadable(e.getMessage()); // refused if it is read, not if another table is
                    }
                }
                tables.put(tname, new SqliteTable(this, tname, (int) root, parsed == null ? SqlSchema.virtual(sql) : parsed));
            } else if ("index".equals(type)) {
                indexes.add(new Index(tname, (String) row[2], sql));
            }
        }
    }

    /** The tables, by name, in the schema's order (SQLite's own tables included, {@code sqlite_sequence}, ...). */
    public Map<String, SqliteTable> tables() {
        return java.util.Collections.unmodifiableMap(tables);
    }

    /**
     * The table named {@code table} (as SQLite matches names: ASCII case ignored).
     *
     * @throws IllegalArgumentException when there is none, naming the tables there are
     */
    public SqliteTable table(String table) {
        for (var e : tables.entrySet()) {
            if (e.getKey().equalsIgnoreCase(table)) {
                return e.getValue();
            }
        }
        throw new IllegalArgumentException(file.name() + " has no table '" + table + "' (it has "
                + String.join(", ", tables.keySet().stream().filter(t -> !t.startsWith("sqlite_")).toList()) + ")");
    }

    /** The indexes of the schema, with their CREATE statements (null for one SQLite makes itself). */
    public List<Index> indexes() {
        return List.copyOf(indexes);
    }

    /** The file's path, as errors name it. */
    public String name() {
        return name;
    }

    public Path path() {
        return file.path();
    }

    public int pageSize() {
        return pageSize;
    }

    public long pages() {
        return pages;
    }

    /** The header's file change counter: SQLite bumps it on every write transaction (rollback mode). */
    public long changeCounter() {
        return changeCounter;
    }

    /** The bytes a page holds for content (the page size less the reserved bytes). */
    int usable() {
        return usable;
    }

    Charset textEncoding() {
        return text;
    }

    MemorySegment bytes() {
        return bytes;
    }

    /** The byte offset of page {@code page} (1-based), checked to be among the file's pages. */
    long page(long page, String what, long from) throws CorruptShardException {
        if (page < 1 || page > pages) {
            throw new CorruptShardException(name, from, what + ": page " + page + " is not among the file's " + pages + " pages");
        }
        return (page - 1) * pageSize;
    }

    /** Unmaps the file. Idempotent. */
    @Override
    public void close() {
        file.close();
    }
}
