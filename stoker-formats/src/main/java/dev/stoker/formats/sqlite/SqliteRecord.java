package dev.stoker.formats.sqlite;

import dev.stoker.CorruptShardException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * One row's values, decoded from SQLite's record format: a header of serial types (varints),
 * then each value's bytes (big-endian integers of 1, 2, 3, 4, 6 or 8 bytes, an IEEE double, the
 * constants 0 and 1, text and blobs). Reused from row to row by one thread; values are read in
 * place from the page (or from the cursor's copy of an overflowing row). A column the row does not
 * hold (added by {@code ALTER TABLE} after it was written) reads as NULL; the rowid alias column
 * reads as the rowid.
 */
public final class SqliteRecord {
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** What a value is. */
    public enum Kind {
        NULL, INTEGER, REAL, TEXT, BLOB
    }

    private final SqliteTable table;
    private final int alias;
    private final long[] type;
    private final long[] offset;
    private MemorySegment bytes;
    private long rowid;
    private int page;
    private int held;

    public SqliteRecord(SqliteTable table) {
        this(table, table.schema().columns().size());
    }

    /**
     * A record that decodes the first {@code columns} columns only (those a reader needs: the
     * header is not parsed past them).
     */
    public SqliteRecord(SqliteTable table, int columns) {
        this.table = table;
        this.alias = table.rowidAlias();
        int n = Math.min(columns, table.schema().columns().size());
        this.type = new long[n];
        this.offset = new long[n];
    }

    void decode(MemorySegment b, long at, long size, long rowid, int page) throws CorruptShardException {
        this.bytes = b;
        this.rowid = rowid;
        this.page = page;
        long end = at + size;
        long p = at;
        long headerSize = 0;
        for (int i = 0; ; i++) {
            if (p >= end) {
                throw corrupt(at, "a record header runs past the row's " + size + " bytes");
            }
            int v = b.get(ValueLayout.JAVA_BYTE, p++);
            headerSize = headerSize << 7 | (v & 0x7f);
            if (v >= 0) {
                break;
            }
            if (i == 8) {
                throw corrupt(at, "a record header size longer than 9 bytes");
            }
        }
        if (headerSize < p - at || headerSize > size) {
            throw corrupt(at, "a record header of " + headerSize + " bytes in a row of " + size);
        }
        long headerEnd = at + headerSize;
        long body = headerEnd;
        int c = 0;
        int limit = type.length;
        while (p < headerEnd && c < limit) {
            long t = b.get(ValueLayout.JAVA_BYTE, p);
            if (t >= 0) {
                p++; // a one-byte serial type: every number's
            } else {
                t = 0;
                for (int i = 0; ; i++) {
                    if (p >= headerEnd) {
                        throw corrupt(at, "a serial type runs past the record header");
                    }
                    int v = b.get(ValueLayout.JAVA_BYTE, p++);
                    if (i == 8) {
                        t = t << 8 | (v & 0xff);
                        break;
                    }
                    t = t << 7 | (v & 0x7f);
                    if (v >= 0) {
                        break;
                    }
                }
            }
            long len = length(t);
            if (len < 0 || len > end - body) {
                throw corrupt(at, "column " + c + " has serial type " + t + (len < 0 ? " (reserved)" : ", " + len
                        + " bytes past the row's end"));
            }
            if (c < type.length) {
                type[c] = t;
                offset[c] = body;
            }
            body += len;
            c++;
        }
        held = Math.min(c, type.length);
    }

    /** The bytes a value of serial type {@code t} takes; -1 for the reserved types 10 and 11. */
    static long length(long t) {
        if (t >= 12) {
            return (t - 12) >> 1;
        }
        return switch ((int) t) {
            case 0, 8, 9 -> 0;
            case 1 -> 1;
            case 2 -> 2;
            case 3 -> 3;
            case 4 -> 4;
            case 5 -> 6;
            case 6, 7 -> 8;
            default -> -1;
        };
    }

    private CorruptShardException corrupt(long at, String what) {
        return new CorruptShardException(table.file().name(), bytes.isNative() ? at : -1, "table " + table.name() + ", page "
                + page + ", row " + rowid + ": " + what);
    }

    /** The row's rowid. */
    public long rowid() {
        return rowid;
    }

    /** The page the row is stored on (its cell's). */
    public int page() {
        return page;
    }

    /** What column {@code c} holds in this row. */
    public Kind kind(int c) {
        if (c == alias) {
            return Kind.INTEGER;
        }
        if (c >= held) {
            return Kind.NULL;
        }
        long t = type[c];
        return t == 0 ? Kind.NULL : t == 7 ? Kind.REAL : t < 12 ? Kind.INTEGER : (t & 1) == 0 ? Kind.BLOB : Kind.TEXT;
    }

    /** Whether column {@code c} holds a real (an IEEE double). */
    public boolean isReal(int c) {
        return c < held && c != alias && type[c] == 7;
    }

    public boolean isNull(int c) {
        return kind(c) == Kind.NULL;
    }

    /** Column {@code c} as an integer; the caller has checked that {@link #kind} is INTEGER. */
    public long integer(int c) {
        if (c == alias) {
            return rowid;
        }
        long o = offset[c];
        MemorySegment b = bytes;
        return switch ((int) type[c]) {
            case 1 -> b.get(ValueLayout.JAVA_BYTE, o);
            case 2 -> (long) b.get(ValueLayout.JAVA_BYTE, o) << 8 | (b.get(ValueLayout.JAVA_BYTE, o + 1) & 0xff);
            case 3 -> (long) b.get(ValueLayout.JAVA_BYTE, o) << 16 | (b.get(ValueLayout.JAVA_BYTE, o + 1) & 0xff) << 8
                    | (b.get(ValueLayout.JAVA_BYTE, o + 2) & 0xff);
            case 4 -> b.get(SqliteFile.U32, o);
            case 5 -> (long) b.get(ValueLayout.JAVA_BYTE, o) << 40 | (long) (b.get(ValueLayout.JAVA_BYTE, o + 1) & 0xff) << 32
                    | Integer.toUnsignedLong(b.get(SqliteFile.U32, o + 2));
            case 6 -> b.get(I64, o);
            case 8 -> 0;
            case 9 -> 1;
            default -> throw new IllegalStateException("column " + c + " is no integer");
        };
    }

    /** Column {@code c} as a double; the caller has checked that {@link #kind} is REAL. */
    public double real(int c) {
        return bytes.get(F64, offset[c]);
    }

    /** Column {@code c}'s text (null when NULL), in the database's text encoding. */
    public String text(int c) {
        Kind k = kind(c);
        return switch (k) {
            case NULL -> null;
            case INTEGER -> Long.toString(integer(c));
            case REAL -> Double.toString(real(c));
            case TEXT, BLOB -> {
                byte[] s = new byte[(int) length(type[c])];
                MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, offset[c], s, 0, s.length);
                yield new String(s, table.file().textEncoding());
            }
        };
    }

    /** The bytes column {@code c}'s text or blob takes. */
    public long size(int c) {
        return c < held && c != alias ? length(type[c]) : 0;
    }
}
