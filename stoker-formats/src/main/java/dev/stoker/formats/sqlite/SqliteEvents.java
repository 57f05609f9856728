package dev.stoker.formats.sqlite;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.io.Sidecar;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * Events of an SQLite database in GraphNeT's layout as a random-access dataset: a pulse table
 * with many rows per event and a truth table with one row per event, both keyed by an event
 * column ({@code event_no}). Sample {@code i} is the {@code i}-th event in the truth table's
 * event order; each pulse feature is a ragged field (the event's rows in their stored order;
 * none for an event with no rows) and each truth feature a scalar. Without a truth table the
 * events are the distinct event numbers of the pulse table, ascending.
 *
 * <p>Types: a column declared with INTEGER affinity ({@code INTEGER}, {@code INT}, ...) is read as
 * int64 and any other as float64 (GraphNeT declares {@code FLOAT}; Prometheus files declare no
 * type and hold reals), unless {@code dtype} names one type for all (float32, float64 or int64).
 * An integer value is converted to a float field's type, a real with an integer's value to an
 * int64 field; NULL reads as NaN in a float field. Text, blobs, NULL in an int64 field and a real
 * with a fraction in an int64 field are refused, naming the table, row and column.
 *
 * <p>The events' rows are found once per database ({@link EventIndex}, NOTE [Event index]) and an
 * event is read by its row range: a binary search for its first row's leaf page, then its cells
 * read forward, values written straight into per-thread buffers and appended to the batch once
 * per field.
 */
public final class SqliteEvents implements DirectDataset, AutoCloseable {
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path path;
    private final SqliteFile file;
    private final SqliteTable pulses;
    private final SqliteTable truth;
    private final int[] featureColumns;
    private final DType[] featureTypes;
    private final int[] truthColumns;
    private final DType[] truthTypes;
    private final Schema schema;
    private final EventIndex index;
    private final long fingerprint;
    private final ThreadLocal<Scratch> scratch;

    /** A reading thread's records and value buffers. */
    private final class Scratch {
        final SqliteRecord pulse = new SqliteRecord(pulses, 1 + java.util.Arrays.stream(featureColumns).max().orElse(0));
        final SqliteRecord truthRecord = truth == null ? null
                : new SqliteRecord(truth, 1 + java.util.Arrays.stream(truthColumns).max().orElse(0));
        final byte[][] bytes = new byte[featureColumns.length][];
        final MemorySegment[] segments = new MemorySegment[featureColumns.length];

        MemorySegment buffer(int f, long size) {
            if (bytes[f] == null || bytes[f].length < size) {
                bytes[f] = new byte[(int) Math.max(size, bytes[f] == null ? 1024 : bytes[f].length * 2L)];
                segments[f] = MemorySegment.ofArray(bytes[f]);
            }
            return segments[f];
        }
    }

    /**
     * Opens the events of {@code path}.
     *
     * @param pulses        the table of many rows per event
     * @param truth         the table of one row per event (null: none, the events are the pulse table's)
     * @param column        the event column both tables have ({@code event_no})
     * @param features      the pulse columns to read, each a ragged field (empty: every column but the event column)
     * @param truthFeatures the truth columns to read, each a scalar field
     * @param dtype         the type of every field (null: by each column's declared type)
     * @throws IllegalArgumentException a table or column that is not there, named with those that are
     */
    public SqliteEvents(Path path, String pulses, String truth, String column, List<String> features,
            List<String> truthFeatures, DType dtype) throws IOException {
        if (dtype != null && dtype != DType.FLOAT32 && dtype != DType.FLOAT64 && dtype != DType.INT64) {
            throw new IllegalArgumentException("dtype must be float32, float64 or int64, got " + dtype.label());
        }
        this.path = path;
        this.file = SqliteFile.open(path);
        try {
            this.pulses = file.table(pulses);
            this.truth = truth == null ? null : file.table(truth);
            this.pulses.checkReadable();
            int pulseColumn = column(this.pulses, column, "the event column");
            int truthColumn = -1;
            if (this.truth != null) {
                this.truth.checkReadable();
                truthColumn = column(this.truth, column, "the event column");
            }
            List<String> wanted = features.isEmpty()
                    ? this.pulses.columns().stream().filter(c -> !c.equalsIgnoreCase(column)).toList() : features;
            if (!truthFeatures.isEmpty() && this.truth == null) {
                throw new IllegalArgumentException("truth features " + truthFeatures + " need a truth table");
            }
            this.featureColumns = new int[wanted.size()];
            this.featureTypes = new DType[wanted.size()];
            this.truthColumns = new int[truthFeatures.size()];
            this.truthTypes = new DType[truthFeatures.size()];
            Set<String> names = new HashSet<>();
            for (int f = 0; f < wanted.size(); f++) {
                featureColumns[f] = column(this.pulses, wanted.get(f), "a feature");
                featureTypes[f] = type(this.pulses, featureColumns[f], dtype);
                unique(names, wanted.get(f));
            }
            for (int f = 0; f < truthFeatures.size(); f++) {
                truthColumns[f] = column(this.truth, truthFeatures.get(f), "a truth feature");
                truthTypes[f] = type(this.truth, truthColumns[f], dtype);
                unique(names, truthFeatures.get(f));
            }
            EventIndex.Stamp stamp = new EventIndex.Stamp(Files.size(path), Files.getLastModifiedTime(path).toMillis(),
                    file.changeCounter(), Fingerprints.ends(file.bytes()), this.pulses.name(),
                    this.truth == null ? null : this.truth.name(), column, this.pulses.rootPage(),
                    this.truth == null ? 0 : this.truth.rootPage(), this.pulses.rows(), this.truth == null ? 0 : this.truth.rows());
            int pc = pulseColumn;
            int tc = truthColumn;
            this.index = Sidecar.of(path, suffix(stamp), writable(path), p -> EventIndex.load(p, stamp),
                    () -> EventIndex.build(this.pulses, pc, this.truth, tc), (idx, out) -> idx.store(stamp, out));
            long rows = 0;
            for (int c : index.count) {
                rows += c;
            }
            // twice the mean rows an event: a batch's ragged values then fit the slot's region (which
            // is sized by the hint) but for batches of unusually long events, which grow it
            long perEvent = index.size() == 0 ? 1 : Math.max(1, 2 * Math.ceilDiv(rows, index.size()));
            List<Field> fields = new ArrayList<>();
            for (int f = 0; f < featureColumns.length; f++) {
                fields.add(Field.ragged(wanted.get(f), featureTypes[f], perEvent * featureTypes[f].byteSize()));
            }
            for (int f = 0; f < truthColumns.length; f++) {
                fields.add(Field.scalar(truthFeatures.get(f), truthTypes[f]));
            }
            this.schema = Schema.of(fields);
            long h = Fingerprints.and(stamp.ends(), stamp.pulseRows() * 31 + stamp.truthRows());
            for (Field f : fields) {
                h = Fingerprints.and(h, f.name().hashCode() * 31L + f.dtype().ordinal());
            }
            this.fingerprint = Fingerprints.and(h, (pulses + "\0" + truth + "\0" + column).hashCode());
            this.scratch = ThreadLocal.withInitial(Scratch::new);
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /** The sidecar's name: one per tables and event column read, so two specs of one file keep two. */
    private static String suffix(EventIndex.Stamp s) {
        CRC32C crc = new CRC32C();
        crc.update((s.pulses() + "\0" + s.truth() + "\0" + s.column()).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return "events-" + Long.toHexString(crc.getValue()) + ".stkidx";
    }

    /**
     * Whether the index may be kept beside the database: its folder is writable and the user
     * keeps the file itself writable (permission bits, which hold for root too). A read-only
     * file, or one in a read-only folder, gets its index in the user's cache alone.
     */
    private static boolean writable(Path path) {
        try {
            Path dir = path.toAbsolutePath().getParent();
            var own = Files.getPosixFilePermissions(path);
            var folder = Files.getPosixFilePermissions(dir);
            return own.contains(java.nio.file.attribute.PosixFilePermission.OWNER_WRITE)
                    && folder.contains(java.nio.file.attribute.PosixFilePermission.OWNER_WRITE) && Files.isWritable(dir);
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    private static void unique(Set<String> names, String name) {
        if (!names.add(name)) {
            throw new IllegalArgumentException("field '" + name + "' is named twice (a pulse and a truth column of one name "
                    + "cannot both be read)");
        }
    }

    private int column(SqliteTable t, String name, String what) {
        int c = t.column(name);
        if (c < 0) {
            throw new IllegalArgumentException(file.path().getFileName() + ": table " + t.name() + " has no column '" + name
                    + "' (" + what + "); it has " + String.join(", ", t.columns()));
        }
        return c;
    }

    private static DType type(SqliteTable t, int column, DType dtype) {
        if (dtype != null) {
            return dtype;
        }
        return t.rowidAlias() == column || t.affinities().get(column).equals("INTEGER") ? DType.INT64 : DType.FLOAT64;
    }

    @Override
    public long size() {
        return index.size();
    }

    @Override
    public Schema schema() {
        return schema;
    }

    @Override
    public String name() {
        return path.toString();
    }

    /** A CRC of the file's ends with its size, the tables' row counts, the fields and their types. */
    @Override
    public long fingerprint() {
        return fingerprint;
    }

    /** The event number of sample {@code i}. */
    public long event(long i) {
        return index.events[(int) i];
    }

    /** The number of pulse rows of sample {@code i}. */
    public int rows(long i) {
        return index.count[(int) i];
    }

    /** Pulse rows of events the truth table does not have (never read). */
    public long unmatchedRows() {
        return index.unmatched;
    }

    /** Whether each event's pulse rows are stored together (read as one run), rather than reordered. */
    public boolean storedByEvent() {
        return index.order == null;
    }

    @Override
    public void read(long i, Row row) throws IOException {
        Scratch s = scratch.get();
        int e = (int) i;
        int n = index.count[e];
        int features = featureColumns.length;
        for (int f = 0; f < features; f++) {
            s.buffer(f, (long) n * featureTypes[f].byteSize());
        }
        SqliteRecord r = s.pulse;
        if (index.order == null) {
            try (SqliteTable.Cursor c = pulses.cursor(index.start[e])) {
                for (int j = 0; j < n; j++) {
                    if (!c.next()) {
                        throw new CorruptShardException(file.name(), -1, "table " + pulses.name() + " ends inside event "
                                + index.events[e]);
                    }
                    c.record(r);
                    put(s, r, j);
                }
            }
        } else {
            for (int j = 0; j < n; j++) {
                try (SqliteTable.Cursor c = pulses.cursor(index.order[(int) index.start[e] + j])) {
                    c.next();
                    c.record(r);
                    put(s, r, j);
                }
            }
        }
        for (int f = 0; f < features; f++) {
            row.append(f, s.segments[f], 0, (long) n * featureTypes[f].byteSize());
        }
        if (truthColumns.length > 0) {
            SqliteRecord t = s.truthRecord;
            try (SqliteTable.Cursor c = truth.cursor(index.truthRows[e])) {
                c.next();
                c.record(t);
            }
            for (int f = 0; f < truthColumns.length; f++) {
                int field = features + f;
                int col = truthColumns[f];
                switch (truthTypes[f]) {
                    case INT64 -> row.putLong(field, 0, integer(t, col, truth, field));
                    case FLOAT32 -> row.putFloat(field, 0, (float) real(t, col, truth, field));
                    default -> row.putDouble(field, 0, real(t, col, truth, field));
                }
            }
        }
    }

    /** Row {@code j} of the event: each feature's value into its buffer. */
    private void put(Scratch s, SqliteRecord r, int j) throws CorruptShardException {
        for (int f = 0; f < featureColumns.length; f++) {
            int col = featureColumns[f];
            MemorySegment b = s.segments[f];
            switch (featureTypes[f]) {
                case FLOAT32 -> b.set(F32, 4L * j, (float) real(r, col, pulses, f));
                case FLOAT64 -> b.set(F64, 8L * j, real(r, col, pulses, f));
                default -> b.set(I64, 8L * j, integer(r, col, pulses, f));
            }
        }
    }

    private double real(SqliteRecord r, int col, SqliteTable t, int field) throws CorruptShardException {
        if (r.isReal(col)) {
            return r.real(col); // the usual case, first
        }
        return switch (r.kind(col)) {
            case REAL -> r.real(col);
            case INTEGER -> r.integer(col);
            case NULL -> Double.NaN;
            default -> throw refused(r, col, t, field, "a " + r.kind(col) + " value");
        };
    }

    private long integer(SqliteRecord r, int col, SqliteTable t, int field) throws CorruptShardException {
        return switch (r.kind(col)) {
            case INTEGER -> r.integer(col);
            case REAL -> {
                double d = r.real(col);
                if (d != Math.rint(d) || Math.abs(d) >= 0x1p63) {
                    throw refused(r, col, t, field, "the real " + d);
                }
                yield (long) d;
            }
            default -> throw refused(r, col, t, field, "a " + r.kind(col) + " value");
        };
    }

    private CorruptShardException refused(SqliteRecord r, int col, SqliteTable t, int field, String what) {
        Field f = schema.field(field);
        return new CorruptShardException(file.name(), -1, "table " + t.name() + ", row " + r.rowid() + ", column "
                + t.columns().get(col) + ": " + what + " where field " + f.name() + " (" + f.dtype().label() + ") wants "
                + (f.dtype() == DType.INT64 ? "an integer" : "a number"));
    }

    /** Unmaps the file. Idempotent. */
    @Override
    public void close() {
        file.close();
    }
}
