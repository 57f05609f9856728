package dev.stoker.formats.sqlite;

import dev.stoker.CorruptShardException;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Which rows of the pulse table each event has: for event {@code i} (in the truth table's
 * {@code event_no} order) its {@code event_no}, its truth row's ordinal, and the range
 * {@code [start, start + count)} of its pulse rows. When the pulse rows of each event are stored
 * together (GraphNeT writes them so) the range is of row ordinals, found by one sequential scan;
 * otherwise it is a range of {@link #order}, the pulse ordinals sorted by event then stored order.
 *
 * <p>NOTE [Event index]: built once per database and kept as a sidecar ({@code Sidecar}: beside
 * the file when its folder is writable, else in the user's cache), stamped with what identifies the
 * file's content (size, modification time, SQLite's change counter, a CRC of its ends) and what
 * it indexes (the tables, the event column, their root pages and row counts), and a CRC-32C of
 * itself: a stored index that disagrees in any of these is built again, never trusted.
 */
final class EventIndex {
    private static final long MAGIC = 0x3130545645534b53L; // "SKSEVT01"

    final long[] events;
    final long[] truthRows; // null without a truth table
    final long[] start;
    final int[] count;
    final int[] order; // null when each event's rows are stored together
    final long unmatched; // pulse rows of events the truth table does not have

    EventIndex(long[] events, long[] truthRows, long[] start, int[] count, int[] order, long unmatched) {
        this.events = events;
        this.truthRows = truthRows;
        this.start = start;
        this.count = count;
        this.order = order;
        this.unmatched = unmatched;
    }

    /** What the index is of: a stored one must agree in all of it. */
    record Stamp(long size, long mtime, long changeCounter, long ends, String pulses, String truth, String column,
            long pulsesRoot, long truthRoot, long pulseRows, long truthRows) {
        void write(DataOutputStream out) throws IOException {
            out.writeLong(size);
            out.writeLong(mtime);
            out.writeLong(changeCounter);
            out.writeLong(ends);
            out.writeUTF(pulses);
            out.writeUTF(truth == null ? "" : truth);
            out.writeUTF(column);
            out.writeLong(pulsesRoot);
            out.writeLong(truthRoot);
            out.writeLong(pulseRows);
            out.writeLong(truthRows);
        }

        static Stamp read(DataInputStream in) throws IOException {
            long size = in.readLong();
            long mtime = in.readLong();
            long cc = in.readLong();
            long ends = in.readLong();
            String p = in.readUTF();
            String t = in.readUTF();
            String c = in.readUTF();
            return new Stamp(size, mtime, cc, ends, p, t.isEmpty() ? null : t, c, in.readLong(), in.readLong(), in.readLong(),
                    in.readLong());
        }
    }

    /** The number of events. */
    int size() {
        return events.length;
    }

    void store(Stamp stamp, OutputStream sink) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(buf);
        out.writeLong(MAGIC);
        stamp.write(out);
        out.writeInt(events.length);
        out.writeBoolean(truthRows != null);
        out.writeInt(order == null ? -1 : order.length);
        out.writeLong(unmatched);
        for (int i = 0; i < events.length; i++) {
            out.writeLong(events[i]);
            out.writeLong(truthRows == null ? 0 : truthRows[i]);
            out.writeLong(start[i]);
            out.writeInt(count[i]);
        }
        if (order != null) {
            for (int o : order) {
                out.writeInt(o);
            }
        }
        out.flush();
        byte[] bytes = buf.toByteArray();
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        sink.write(bytes);
        new DataOutputStream(sink).writeInt((int) crc.getValue());
    }

    /** The index stored at {@code stored} if it is whole, of {@code stamp}, and in bounds; else null. */
    static EventIndex load(Path stored, Stamp stamp) throws IOException {
        long size = Files.size(stored);
        if (size < 12 || size > Integer.MAX_VALUE - 8) {
            return null;
        }
        byte[] bytes = Files.readAllBytes(stored);
        if (bytes.length < 12) {
            return null;
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        int want = java.nio.ByteBuffer.wrap(bytes, bytes.length - 4, 4).getInt();
        if ((int) crc.getValue() != want) {
            return null;
        }
        DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes, 0, bytes.length - 4));
        if (in.readLong() != MAGIC || !Stamp.read(in).equals(stamp)) {
            return null;
        }
        int n = in.readInt();
        boolean truth = in.readBoolean();
        int orderLength = in.readInt();
        long unmatched = in.readLong();
        if (n < 0 || (long) n * 28 + Math.max(0, orderLength) * 4L > bytes.length) {
            return null;
        }
        long[] events = new long[n];
        long[] truthRows = truth ? new long[n] : null;
        long[] start = new long[n];
        int[] count = new int[n];
        long limit = orderLength >= 0 ? orderLength : stamp.pulseRows();
        for (int i = 0; i < n; i++) {
            events[i] = in.readLong();
            long t = in.readLong();
            if (truth) {
                truthRows[i] = t;
                if (t < 0 || t >= stamp.truthRows()) {
                    return null;
                }
            }
            start[i] = in.readLong();
            count[i] = in.readInt();
            if (start[i] < 0 || count[i] < 0 || start[i] + count[i] > limit) {
                return null;
            }
        }
        int[] order = null;
        if (orderLength >= 0) {
            order = new int[orderLength];
            for (int i = 0; i < orderLength; i++) {
                order[i] = in.readInt();
                if (order[i] < 0 || order[i] >= stamp.pulseRows()) {
                    return null;
                }
            }
        }
        return new EventIndex(events, truthRows, start, count, order, unmatched);
    }

    /**
     * Builds the index: one scan of the truth table's event column and one of the pulse table's
     * (a second when an event's rows are not stored together).
     */
    static EventIndex build(SqliteTable pulses, int pulseColumn, SqliteTable truth, int truthColumn) throws IOException {
        long rows = pulses.rows();
        // the pulse rows as runs of one event
        long[] runEvent = new long[1024];
        long[] runStart = new long[1024];
        long[] runCount = new long[1024];
        int runs = 0;
        try (SqliteTable.Cursor c = pulses.cursor(0)) {
            SqliteRecord r = new SqliteRecord(pulses);
            long ordinal = 0;
            while (c.next()) {
                c.record(r);
                long e = event(r, pulseColumn, pulses);
                if (runs > 0 && runEvent[runs - 1] == e) {
                    runCount[runs - 1]++;
                } else {
                    if (runs == runEvent.length) {
                        runEvent = Arrays.copyOf(runEvent, runs * 2);
                        runStart = Arrays.copyOf(runStart, runs * 2);
                        runCount = Arrays.copyOf(runCount, runs * 2);
                    }
                    runEvent[runs] = e;
                    runStart[runs] = ordinal;
                    runCount[runs] = 1;
                    runs++;
                }
                ordinal++;
            }
        }
        int[] byEvent = sortedBy(runEvent, runs); // stable: an event's runs stay in stored order
        boolean together = true;
        for (int k = 1; k < runs && together; k++) {
            together = runEvent[byEvent[k]] != runEvent[byEvent[k - 1]];
        }
        int[] order = null;
        long[] runAt = runStart;
        if (!together) {
            if (rows > Integer.MAX_VALUE - 8) {
                throw new CorruptShardException(pulses.file().name(), -1, "table " + pulses.name() + ": its " + rows
                        + " rows are not stored by event, and more than Stoker reorders (2^31): store them ordered by "
                        + "event (CREATE TABLE p2 AS SELECT * FROM " + pulses.name() + " ORDER BY event column, rowid)");
            }
            order = new int[(int) rows];
            runAt = new long[runs];
            int at = 0;
            for (int k = 0; k < runs; k++) {
                int run = byEvent[k];
                runAt[run] = at;
                for (long j = 0; j < runCount[run]; j++) {
                    order[at++] = (int) (runStart[run] + j);
                }
            }
        }
        // the events, in the truth table's event order (or the pulses' own, without one)
        long[] events;
        long[] truthRows = null;
        if (truth != null) {
            long n = truth.rows();
            if (n > Integer.MAX_VALUE - 8) {
                throw new CorruptShardException(truth.file().name(), -1, "table " + truth.name() + ": " + n
                        + " events, more than Stoker indexes in one file (2^31)");
            }
            long[] ev = new long[(int) n];
            try (SqliteTable.Cursor c = truth.cursor(0)) {
                SqliteRecord r = new SqliteRecord(truth);
                int i = 0;
                while (c.next() && i < n) {
                    c.record(r);
                    ev[i++] = event(r, truthColumn, truth);
                }
            }
            int[] sorted = sortedBy(ev, ev.length);
            events = new long[ev.length];
            truthRows = new long[ev.length];
            for (int i = 0; i < ev.length; i++) {
                events[i] = ev[sorted[i]];
                truthRows[i] = sorted[i];
                if (i > 0 && events[i] == events[i - 1]) {
                    throw new CorruptShardException(truth.file().name(), -1, "table " + truth.name() + ": event "
                            + events[i] + " has two rows (rows " + sorted[i - 1] + " and " + sorted[i]
                            + "); a truth table holds one row per event");
                }
            }
        } else {
            int distinct = 0;
            for (int k = 0; k < runs; k++) {
                distinct += k == 0 || runEvent[byEvent[k]] != runEvent[byEvent[k - 1]] ? 1 : 0;
            }
            events = new long[distinct];
            for (int k = 0, i = 0; k < runs; k++) {
                if (k == 0 || runEvent[byEvent[k]] != runEvent[byEvent[k - 1]]) {
                    events[i++] = runEvent[byEvent[k]];
                }
            }
        }
        // each event's rows: a merge of the events and the runs, both sorted by event
        long[] start = new long[events.length];
        int[] count = new int[events.length];
        long matched = 0;
        int k = 0;
        for (int i = 0; i < events.length; i++) {
            while (k < runs && runEvent[byEvent[k]] < events[i]) {
                k++;
            }
            long n = 0;
            boolean first = true;
            while (k < runs && runEvent[byEvent[k]] == events[i]) {
                if (first) {
                    start[i] = runAt[byEvent[k]];
                    first = false;
                }
                n += runCount[byEvent[k]];
                k++;
            }
            if (n > Integer.MAX_VALUE - 8) {
                throw new CorruptShardException(pulses.file().name(), -1, "table " + pulses.name() + ": event " + events[i]
                        + " has " + n + " rows, more than one sample holds (2^31)");
            }
            count[i] = (int) n;
            matched += n;
        }
        return new EventIndex(events, truthRows, start, count, order, rows - matched);
    }

    /** The event number of a row: an integer (or a real with an integer's value), never NULL or text. */
    private static long event(SqliteRecord r, int column, SqliteTable table) throws CorruptShardException {
        return switch (r.kind(column)) {
            case INTEGER -> r.integer(column);
            case REAL -> {
                double d = r.real(column);
                if (d != Math.rint(d) || Math.abs(d) > 0x1p62) {
                    throw bad(r, column, table, "the real " + d);
                }
                yield (long) d;
            }
            default -> throw bad(r, column, table, "a " + r.kind(column) + " value");
        };
    }

    private static CorruptShardException bad(SqliteRecord r, int column, SqliteTable table, String what) {
        return new CorruptShardException(table.file().name(), -1, "table " + table.name() + ", row " + r.rowid() + ": its "
                + table.columns().get(column) + " holds " + what + ", not an event number (an integer)");
    }

    /** The positions {@code 0..n-1} sorted by {@code key} (stable: equal keys keep their order). */
    static int[] sortedBy(long[] key, int n) {
        int[] a = new int[n];
        boolean ascending = true;
        for (int i = 0; i < n; i++) {
            a[i] = i;
            ascending &= i == 0 || key[i - 1] <= key[i];
        }
        if (ascending) {
            return a; // the usual case: already in order
        }
        int[] b = new int[n];
        for (int width = 1; width < n; width *= 2) {
            for (int lo = 0; lo < n; lo += 2 * width) {
                int mid = Math.min(lo + width, n);
                int hi = Math.min(lo + 2 * width, n);
                int i = lo;
                int j = mid;
                int o = lo;
                while (i < mid && j < hi) {
                    b[o++] = key[a[j]] < key[a[i]] ? a[j++] : a[i++];
                }
                while (i < mid) {
                    b[o++] = a[i++];
                }
                while (j < hi) {
                    b[o++] = a[j++];
                }
            }
            int[] t = a;
            a = b;
            b = t;
        }
        return a;
    }
}
