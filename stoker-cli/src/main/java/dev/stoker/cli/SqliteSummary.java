package dev.stoker.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.stoker.formats.sqlite.SqliteRecord;
import dev.stoker.formats.sqlite.SqliteFile;
import dev.stoker.formats.sqlite.SqliteTable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * {@code stoker inspect} of an SQLite database (any name; known by its first bytes): its tables
 * with their columns (declared type and affinity), row counts and, for a table with an
 * {@code event_no} column, the number of events and rows per event; and its indexes. Read without
 * SQLite; nothing is written.
 */
final class SqliteSummary {
    private SqliteSummary() {
    }

    /** Whether {@code p} is a file that starts as an SQLite database does. */
    static boolean isSqlite(Path p) throws IOException {
        if (!Files.isRegularFile(p)) {
            return false;
        }
        try (InputStream in = Files.newInputStream(p)) {
            return SqliteFile.isSqlite(in.readNBytes(16));
        }
    }

    static void describe(Path p, JsonGenerator g) throws IOException {
        try (SqliteFile f = SqliteFile.open(p)) {
            g.writeStringField("format", "sqlite");
            g.writeNumberField("pageSize", f.pageSize());
            g.writeNumberField("pages", f.pages());
            g.writeArrayFieldStart("tables");
            for (SqliteTable t : f.tables().values()) {
                g.writeStartObject();
                g.writeStringField("name", t.name());
                g.writeArrayFieldStart("columns");
                for (int c = 0; c < t.columns().size(); c++) {
                    g.writeStartObject();
                    g.writeStringField("name", t.columns().get(c));
                    g.writeStringField("type", t.declaredTypes().get(c));
                    g.writeStringField("affinity", t.affinities().get(c));
                    if (c == t.rowidAlias()) {
                        g.writeBooleanField("rowid", true);
                    }
                    g.writeEndObject();
                }
                g.writeEndArray();
                if (t.unread() != null) {
                    g.writeStringField("unread", t.unread());
                } else {
                    g.writeNumberField("rows", t.rows());
                    int event = t.column("event_no");
                    if (event >= 0) {
                        events(t, event, g);
                    }
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeArrayFieldStart("indexes");
            for (SqliteFile.Index i : f.indexes()) {
                g.writeStartObject();
                g.writeStringField("name", i.name());
                g.writeStringField("table", i.table());
                if (i.sql() != null) {
                    g.writeStringField("sql", i.sql());
                }
                g.writeEndObject();
            }
            g.writeEndArray();
        }
    }

    /** Events and rows per event (smallest, largest) of a table's event column; whether its rows are stored by event. */
    private static void events(SqliteTable t, int column, JsonGenerator g) throws IOException {
        long n = t.rows();
        long[] ev = new long[(int) Math.min(n, Integer.MAX_VALUE - 8)];
        int k = 0;
        boolean byEvent = true;
        try (SqliteTable.Cursor c = t.cursor(0)) {
            SqliteRecord r = new SqliteRecord(t);
            while (k < ev.length && c.next()) {
                c.record(r);
                if (r.kind(column) != SqliteRecord.Kind.INTEGER) {
                    return; // not event numbers
                }
                ev[k] = r.integer(column);
                byEvent &= k == 0 || ev[k] >= ev[k - 1];
                k++;
            }
        }
        long[] sorted = Arrays.copyOf(ev, k);
        Arrays.sort(sorted);
        long events = 0;
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < k; ) {
            int j = i;
            while (j < k && sorted[j] == sorted[i]) {
                j++;
            }
            events++;
            min = Math.min(min, j - i);
            max = Math.max(max, j - i);
            i = j;
        }
        g.writeNumberField("events", events);
        if (events > 0) {
            g.writeArrayFieldStart("rowsPerEvent");
            g.writeNumber(min);
            g.writeNumber(max);
            g.writeEndArray();
        }
        g.writeBooleanField("storedByEvent", byEvent);
    }
}
