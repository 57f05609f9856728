package dev.stoker.root;

import dev.stoker.CorruptShardException;
import java.util.ArrayList;
import java.util.List;

/**
 * An RNTuple's schema: its field and column records, from the header envelope and the footer's
 * schema extension (which continues the header's ids).
 */
final class RntSchema {
    static final int ROLE_LEAF = 0;
    static final int ROLE_COLLECTION = 1;
    static final int ROLE_RECORD = 2;
    static final int ROLE_VARIANT = 3;
    static final int ROLE_STREAMER = 4;

    /** A field record; {@code id} is its position in the list, {@code arraySize} 0 unless repetitive. */
    record FieldRec(int id, int parent, int role, int flags, String name, String type, String alias, long arraySize,
            int source) {
        boolean repetitive() {
            return (flags & 0x01) != 0;
        }

        boolean projected() {
            return (flags & 0x02) != 0;
        }
    }

    /** A physical column record. */
    record ColumnRec(int id, int type, int bits, int field, int flags, int representation, long firstElement,
            double min, double max) {
        boolean hasRange() {
            return (flags & 0x02) != 0;
        }
    }

    final String name;
    final String description;
    final String writer;
    final List<FieldRec> fields = new ArrayList<>();
    final List<ColumnRec> columns = new ArrayList<>();

    private RntSchema(String name, String description, String writer) {
        this.name = name;
        this.description = description;
        this.writer = writer;
    }

    /** Parses the header envelope's payload. */
    static RntSchema header(RntCursor c) throws CorruptShardException {
        features(c);
        RntSchema s = new RntSchema(c.string(), c.string(), c.string());
        s.description(c);
        return s;
    }

    /** Adds the footer's schema extension record frame. */
    void extension(RntCursor c) throws CorruptShardException {
        RntCursor.Frame ext = c.record();
        if (c.position() < ext.end()) {
            description(c);
        }
        c.end(ext);
    }

    /** Reads feature flags; any bit set is a feature this reader does not know. */
    static void features(RntCursor c) throws CorruptShardException {
        long flags;
        do {
            flags = c.i64();
            if ((flags & Long.MAX_VALUE) != 0) {
                throw c.corrupt("feature flags 0x" + Long.toHexString(flags) + " set: a newer format than RNTuple 1.0");
            }
        } while (flags < 0);
    }

    private void description(RntCursor c) throws CorruptShardException {
        RntCursor.Frame list = c.list();
        for (long i = 0; i < list.items(); i++) {
            RntCursor.Frame f = c.record();
            long version = c.u32();
            long typeVersion = c.u32();
            int parent = c.i32();
            int role = c.u16();
            int flags = c.u16();
            String name = c.string();
            String type = c.string();
            String alias = c.string();
            c.string();
            long arraySize = (flags & 0x01) != 0 ? c.i64() : 0;
            int source = (flags & 0x02) != 0 ? c.i32() : -1;
            if ((flags & 0x04) != 0) {
                c.i32();
            }
            c.end(f);
            fields.add(new FieldRec(fields.size(), parent, role, flags, name, type, alias, arraySize, source));
        }
        c.end(list);
        list = c.list();
        for (long i = 0; i < list.items(); i++) {
            RntCursor.Frame f = c.record();
            int type = c.u16();
            int bits = c.u16();
            int field = c.i32();
            int flags = c.u16();
            int representation = c.u16();
            long first = (flags & 0x01) != 0 ? c.i64() : 0;
            double min = 0;
            double max = 0;
            if ((flags & 0x02) != 0) {
                min = c.f64();
                max = c.f64();
            }
            c.end(f);
            columns.add(new ColumnRec(columns.size(), type, bits, field, flags, representation, first, min, max));
        }
        c.end(list);
        list = c.list();
        c.end(list); // alias columns: only projected fields use them, and those are not read
        list = c.list();
        c.end(list); // extra type information: streamer info, not needed for numeric fields
    }
}
