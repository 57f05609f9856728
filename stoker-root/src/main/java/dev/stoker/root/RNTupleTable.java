package dev.stoker.root;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.root.RntFields.Plan;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An RNTuple (ROOT's columnar successor of the TTree, binary format 1.0) as a {@link RootTable}:
 * its numeric fields, fixed-size arrays of them and vectors (RVecs) of them; every other field is
 * refused by name with its type.
 *
 * <p>NOTE [RNTuple layout]: the key's payload is the anchor (big-endian, XXH3-checked), which
 * locates the header envelope (the schema: field and column records) and the footer envelope
 * (the cluster groups, each linking to a page list envelope: per cluster, per physical column,
 * the pages and the index of the column's first element in the cluster). Envelopes and pages
 * are ROOT compressed blocks; envelopes end with an XXH3 of their bytes, pages may be followed
 * by one. A vector's parent field has an index column of offsets that count from each cluster's
 * start, its child field {@code _0} the values. A field may have several column representations;
 * in each cluster exactly one is not suppressed.
 *
 * <p>NOTE [Declared sizes]: every size read from the file is checked before it is allocated: a
 * locator must lie inside the file, an envelope's or a page's uncompressed size may exceed its
 * stored bytes at most {@link #MAX_RATIO} times (the best ratio ROOT's codecs reach: zstd's
 * run-length blocks, 128 KiB from 4 bytes), the block headers must add up to it exactly, and a
 * read's values are counted from the decoded offsets and checked against the cluster's pages.
 */
final class RNTupleTable implements RootTable {
    static final long MAX_RATIO = 1 << 15;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 =
            ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final RootFile file;
    private final String name;
    private final long entries;
    private final List<RntClusters.Cluster> clusters;
    private final long[] starts;
    private final List<RootColumn> columns;
    private final Map<RootColumn, Plan> plans;
    private final Map<String, String> refused;
    /**
     * NOTE [Last page]: each column's last decoded page (immutable once decoded), so that reads
     * smaller than a page decode it once; memory: one page a column (ROOT writes pages of at most
     * 1 MiB by default), released by {@link #close()}.
     */
    private final Map<Integer, Decoded> last = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private record Decoded(int cluster, int page, MemorySegment values) {
    }

    private RNTupleTable(RootFile file, String name, long entries, List<RntClusters.Cluster> clusters,
            Map<RootColumn, Plan> plans, Map<String, String> refused) {
        this.file = file;
        this.name = name;
        this.entries = entries;
        this.clusters = clusters;
        this.starts = new long[clusters.size()];
        for (int i = 0; i < starts.length; i++) {
            starts[i] = clusters.get(i).firstEntry();
        }
        this.plans = plans;
        this.columns = List.copyOf(plans.keySet());
        this.refused = Collections.unmodifiableMap(refused);
    }

    /** The RNTuple whose anchor is {@code key}'s payload. */
    static RootTable open(RootFile file, Key key) throws IOException {
        String path = file.path();
        String what = "RNTuple '" + key.name() + "'";
        ByteBuffer a = file.object(key).order(ByteOrder.BIG_ENDIAN);
        long at = key.seekKey() + key.keylen();
        if (a.remaining() < 6 + 64 + 8) {
            throw new CorruptShardException(path, at, what + ": an anchor of " + a.remaining()
                    + " bytes, expected at least 78");
        }
        int p = a.position();
        int count = a.getInt(p);
        if ((count & 0x40000000) == 0 || (count & 0x3FFFFFFF) < 2 + 64) {
            throw new CorruptShardException(path, at, what + ": anchor byte count 0x" + Integer.toHexString(count)
                    + ", expected 0x40000000 | at least 66");
        }
        int f = p + 6;
        int epoch = a.getShort(f) & 0xFFFF;
        if (epoch != 1) {
            throw new CorruptShardException(path, at + 6, what + ": format version " + epoch + "."
                    + (a.getShort(f + 2) & 0xFFFF) + "." + (a.getShort(f + 4) & 0xFFFF) + "."
                    + (a.getShort(f + 6) & 0xFFFF) + ", Stoker reads RNTuple 1.x (ROOT 6.34 and later)");
        }
        long stored = a.getLong(f + 64);
        long computed = Xxh3.hash(a, f, 64);
        if (stored != computed) {
            throw new CorruptShardException(path, at + 6, what + ": anchor checksum " + Long.toHexString(stored)
                    + " does not match its XXH3 " + Long.toHexString(computed));
        }
        long seekHeader = a.getLong(f + 8);
        long nbytesHeader = a.getLong(f + 16);
        long lenHeader = a.getLong(f + 24);
        long seekFooter = a.getLong(f + 32);
        long nbytesFooter = a.getLong(f + 40);
        long lenFooter = a.getLong(f + 48);
        long maxKeySize = a.getLong(f + 56);
        if (maxKeySize <= 0) {
            throw new CorruptShardException(path, at + 6, what + ": anchor declares a maximum key size of " + maxKeySize);
        }

        for (long[] e : new long[][] {{seekHeader, nbytesHeader}, {seekFooter, nbytesFooter}}) {
            if (e[1] > maxKeySize) {
                throw new CorruptShardException(path, e[0], what + ": an envelope of " + e[1] + " bytes, over the "
                        + maxKeySize + " bytes of a key: split over several keys, which Stoker does not read");
            }
        }
        ByteBuffer header = envelope(file, seekHeader, nbytesHeader, lenHeader, 1, what + " header");
        long headerChecksum = header.getLong(header.limit() - 8);
        RntSchema schema = RntSchema.header(new RntCursor(payload(header), path, "'" + key.name() + "' header",
                seekHeader));
        ByteBuffer footer = envelope(file, seekFooter, nbytesFooter, lenFooter, 2, what + " footer");
        RntCursor fc = new RntCursor(payload(footer), path, "'" + key.name() + "' footer", seekFooter);
        RntSchema.features(fc);
        long check = fc.i64();
        if (check != headerChecksum) {
            throw fc.corrupt("names header checksum " + Long.toHexString(check) + ", the header's is "
                    + Long.toHexString(headerChecksum));
        }
        schema.extension(fc);
        List<RntClusters.Group> groups = RntClusters.groups(fc);

        List<RntClusters.Cluster> clusters = new ArrayList<>();
        for (int g = 0; g < groups.size(); g++) {
            RntClusters.Group group = groups.get(g);
            String pw = what + " page list " + g;
            ByteBuffer list = envelope(file, group.pageListOffset(), group.pageListSize(), group.pageListLength(), 3, pw);
            RntCursor lc = new RntCursor(payload(list), path, "'" + key.name() + "' page list " + g,
                    group.pageListOffset());
            List<RntClusters.Cluster> cs = RntClusters.pageList(lc, headerChecksum, schema.columns.size(), file.size());
            if (cs.size() != group.clusters()) {
                throw lc.corrupt("lists " + cs.size() + " clusters, its group in the footer says " + group.clusters());
            }
            clusters.addAll(cs);
        }
        clusters.sort((x, y) -> Long.compare(x.firstEntry(), y.firstEntry()));
        long next = 0;
        for (int i = 0; i < clusters.size(); i++) {
            RntClusters.Cluster c = clusters.get(i);
            if (c.firstEntry() != next) {
                throw new CorruptShardException(path, seekFooter, what + ": cluster " + i + " starts at entry "
                        + c.firstEntry() + ", the clusters before it end at entry " + next);
            }
            if (c.entries() > Long.MAX_VALUE - next) {
                throw new CorruptShardException(path, seekFooter, what + ": cluster " + i + " of " + c.entries()
                        + " entries overflows the entry count");
            }
            next += c.entries();
        }
        Map<RootColumn, Plan> plans = new LinkedHashMap<>();
        Map<String, String> refused = new LinkedHashMap<>();
        RntFields.plan(schema, plans, refused);
        for (Plan pl : plans.values()) {
            List<RntSchema.ColumnRec> reps = pl.index() != null ? pl.index() : pl.values();
            long per = pl.index() != null ? 1 : pl.column().fixed();
            for (int k = 0; k < clusters.size(); k++) {
                RntClusters.Cluster c = clusters.get(k);
                RntSchema.ColumnRec col = primary(reps, c);
                String w = what + " field '" + pl.column().name() + "' cluster " + k;
                if (col == null) {
                    throw new CorruptShardException(path, -1, w + ": every column representation is suppressed");
                }
                RntClusters.Page[] pages = c.columns()[col.id()].pages();
                for (int j = 0; j < pages.length; j++) {
                    checkPage(path, col, pages[j], w + " page " + j);
                    if (pages[j].size() > maxKeySize) {
                        throw new CorruptShardException(path, pages[j].offset(), w + " page " + j + ": " + pages[j].size()
                                + " bytes, over the " + maxKeySize + " bytes of a key: split over several keys, which"
                                + " Stoker does not read");
                    }
                }
                long held = c.columns()[col.id()].elements();
                if (c.entries() > Long.MAX_VALUE / per || held != c.entries() * per) {
                    throw new CorruptShardException(path, -1, w + ": " + c.entries() + " entries, but column " + col.id()
                            + " holds " + held + " elements there (" + per + " an entry)");
                }
            }
        }
        return new RNTupleTable(file, key.name(), next, clusters, plans, refused);
    }

    /** The payload between an envelope's 8-byte type-and-length word and its 8-byte checksum. */
    private static ByteBuffer payload(ByteBuffer env) {
        return env.slice(8, env.limit() - 16).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Reads, decompresses and checks an envelope of {@code type}; little-endian, the whole envelope. */
    static ByteBuffer envelope(RootFile file, long offset, long size, long length, int type, String what)
            throws IOException {
        String path = file.path();
        if (size < 0 || offset < 0 || offset > file.size() || size > file.size() - offset) {
            throw new CorruptShardException(path, offset, what + ": " + size + " bytes at byte " + offset
                    + " lie outside the file's " + file.size() + " bytes");
        }
        if (length < 16 || length > Integer.MAX_VALUE - 8 || (length != size && length > size * MAX_RATIO)) {
            throw new CorruptShardException(path, offset, what + ": an envelope of " + length + " bytes stored in "
                    + size + " (at most " + MAX_RATIO + " times as many, and at least 16)");
        }
        ByteBuffer raw = file.read(offset, (int) size, what);
        ByteBuffer env = decompress(file, raw, (int) length, what, offset).slice().order(ByteOrder.LITTLE_ENDIAN);
        long stored = env.getLong((int) length - 8);
        long computed = Xxh3.hash(env, 0, (int) length - 8);
        if (stored != computed) {
            throw new CorruptShardException(path, offset, what + ": checksum " + Long.toHexString(stored)
                    + " does not match the envelope's XXH3 " + Long.toHexString(computed));
        }
        long word = env.getLong(0);
        int t = (int) (word & 0xFFFF);
        long len = word >>> 16;
        if (t != type || len != length) {
            throw new CorruptShardException(path, offset, what + ": envelope type " + t + " of " + len
                    + " bytes, expected type " + type + " of " + length);
        }
        return env;
    }

    // ---- RootTable

    @Override
    public String name() {
        return name;
    }

    @Override
    public long entries() {
        return entries;
    }

    @Override
    public List<RootColumn> columns() {
        return columns;
    }

    @Override
    public Map<String, String> refused() {
        return refused;
    }

    @Override
    public long[] clusterStarts() {
        return starts.clone();
    }

    @Override
    public ColumnData read(RootColumn c, long from, long to) throws IOException {
        if (closed) {
            throw new IOException(file.path() + ": RNTuple '" + name + "' is closed");
        }
        Plan plan = plans.get(c);
        if (plan == null) {
            String why = refused.get(c.name());
            throw new IllegalArgumentException(file.path() + ": RNTuple '" + name + "' has no column '" + c.name() + "'"
                    + (why != null ? " Stoker reads (it is " + why + ")" : "") + "; it has " + names());
        }
        if (from < 0 || to < from || to > entries) {
            throw new IllegalArgumentException(file.path() + ": RNTuple '" + name + "': entries [" + from + ", " + to
                    + ") outside [0, " + entries + ")");
        }
        int size = c.dtype().byteSize();
        if (!c.ragged()) {
            long n = (to - from) * c.fixed();
            checkArray(n * size, c);
            for (int k = cluster(from); k < clusters.size() && starts[k] < to; k++) {
                RntClusters.Cluster cl = clusters.get(k);
                long a = Math.max(from, cl.firstEntry()) - cl.firstEntry();
                long b = Math.min(to, cl.firstEntry() + cl.entries()) - cl.firstEntry();
                values(plan, plan.values(), k, a * c.fixed(), b * c.fixed(), null, 0, c.dtype());
            }
            MemorySegment out = MemorySegment.ofArray(new byte[(int) (n * size)]);
            long at = 0;
            for (int k = cluster(from); k < clusters.size() && starts[k] < to; k++) {
                RntClusters.Cluster cl = clusters.get(k);
                long a = Math.max(from, cl.firstEntry()) - cl.firstEntry();
                long b = Math.min(to, cl.firstEntry() + cl.entries()) - cl.firstEntry();
                values(plan, plan.values(), k, a * c.fixed(), b * c.fixed(), out, at, c.dtype());
                at += (b - a) * c.fixed() * size;
            }
            return new ColumnData(out, null);
        }
        checkArray((to - from + 1) * 8, c);
        long[] offsets = new long[(int) (to - from + 1)];
        long[][] ranges = new long[clusters.size()][];
        long total = 0;
        for (int k = cluster(from); k < clusters.size() && starts[k] < to; k++) {
            RntClusters.Cluster cl = clusters.get(k);
            long a = Math.max(from, cl.firstEntry()) - cl.firstEntry();
            long b = Math.min(to, cl.firstEntry() + cl.entries()) - cl.firstEntry();
            long lo = Math.max(a - 1, 0);
            values(plan, plan.index(), k, lo, b, null, 0, DType.INT64);
            MemorySegment idx = MemorySegment.ofArray(new long[(int) (b - lo)]);
            values(plan, plan.index(), k, lo, b, idx, 0, DType.INT64);
            long prev = a == 0 ? 0 : idx.getAtIndex(ValueLayout.JAVA_LONG, 0);
            long first = prev;
            int base = (int) (cl.firstEntry() + a - from);
            for (long e = a; e < b; e++) {
                long end = idx.getAtIndex(ValueLayout.JAVA_LONG, e - lo);
                if (end < prev) {
                    throw new CorruptShardException(file.path(), -1, "RNTuple '" + name + "' field '" + c.name()
                            + "' cluster " + k + ": its offsets decrease at entry " + (cl.firstEntry() + e) + " ("
                            + prev + " then " + end + ")");
                }
                total += end - prev;
                offsets[base + (int) (e - a) + 1] = total;
                prev = end;
            }
            ranges[k] = new long[] {first, prev};
        }
        checkArray(total * size, c);
        for (int k = 0; k < clusters.size(); k++) {
            if (ranges[k] != null && ranges[k][1] > ranges[k][0]) {
                values(plan, plan.values(), k, ranges[k][0], ranges[k][1], null, 0, c.dtype());
            }
        }
        MemorySegment out = MemorySegment.ofArray(new byte[(int) (total * size)]);
        long at = 0;
        for (int k = 0; k < clusters.size(); k++) {
            if (ranges[k] != null && ranges[k][1] > ranges[k][0]) {
                values(plan, plan.values(), k, ranges[k][0], ranges[k][1], out, at, c.dtype());
                at += (ranges[k][1] - ranges[k][0]) * size;
            }
        }
        return new ColumnData(out, offsets);
    }

    private void checkArray(long bytes, RootColumn c) {
        if (bytes > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException(file.path() + ": RNTuple '" + name + "' field '" + c.name() + "': "
                    + bytes + " bytes in one read; read fewer entries at once");
        }
    }

    private String names() {
        List<String> all = new ArrayList<>();
        for (RootColumn c : columns) {
            all.add(c.name());
        }
        return all.isEmpty() ? "no numeric fields" : "fields " + String.join(", ", all);
    }

    /** The cluster holding entry {@code e} (the last one for e == entries). */
    private int cluster(long e) {
        int i = java.util.Arrays.binarySearch(starts, e);
        if (i < 0) {
            i = -i - 2;
        }
        return Math.max(i, 0);
    }

    /** The representation of {@code reps} that cluster {@code c} stores (not suppressed), or null. */
    private static RntSchema.ColumnRec primary(List<RntSchema.ColumnRec> reps, RntClusters.Cluster c) {
        for (RntSchema.ColumnRec r : reps) {
            if (!c.columns()[r.id()].suppressed()) {
                return r;
            }
        }
        return null;
    }

    /**
     * Elements {@code [a, b)} (counted from the cluster's first element of the column) of the
     * representation of {@code reps} that cluster {@code k} stores, into {@code out} at byte
     * {@code at} as {@code d}; with {@code out} null, only checks that the pages hold them and
     * that each page's declared size is one its stored bytes justify.
     */
    private void values(Plan plan, List<RntSchema.ColumnRec> reps, int k, long a, long b, MemorySegment out, long at,
            DType d) throws IOException {
        if (b <= a) {
            return;
        }
        RntClusters.Cluster cl = clusters.get(k);
        RntSchema.ColumnRec col = primary(reps, cl);
        RntClusters.ColumnPages cp = col == null ? null : cl.columns()[col.id()];
        String what = "RNTuple '" + name + "' field '" + plan.column().name() + "' cluster " + k;
        if (col == null) {
            throw new CorruptShardException(file.path(), -1, what + ": every column representation is suppressed");
        }
        long held = cp.elements();
        if (b > held) {
            throw new CorruptShardException(file.path(), -1, what + ": needs " + b + " elements of column " + col.id()
                    + ", its pages hold " + held);
        }
        DType nat = RntEncoding.natural(col.type());
        int natSize = nat.byteSize();
        long pageStart = 0;
        RntClusters.Page[] pages = cp.pages();
        for (int p = 0; p < pages.length && pageStart < b; p++) {
            RntClusters.Page pg = pages[p];
            long pageEnd = pageStart + pg.elements();
            if (pageEnd > a && pg.elements() > 0 && out == null) {
                checkPage(file.path(), col, pg, what + " page " + p);
            } else if (pageEnd > a && pg.elements() > 0) {
                Decoded hit = last.get(col.id());
                MemorySegment decoded;
                if (hit != null && hit.cluster() == k && hit.page() == p) {
                    decoded = hit.values();
                } else {
                    decoded = page(col, pg, what + " page " + p);
                    last.put(col.id(), new Decoded(k, p, decoded));
                }
                long lo = Math.max(a, pageStart) - pageStart;
                long hi = Math.min(b, pageEnd) - pageStart;
                long dst = at + (pageStart + lo - a) * d.byteSize();
                if (nat == d) {
                    MemorySegment.copy(decoded, lo * natSize, out, dst, (hi - lo) * natSize);
                } else {
                    convert(decoded, nat, lo, hi, out, dst, d);
                }
            }
            pageStart = pageEnd;
        }
    }

    /** A page read, checked and decoded to its column's natural type. */
    private MemorySegment page(RntSchema.ColumnRec col, RntClusters.Page pg, String what) throws IOException {
        String path = file.path();
        checkPage(path, col, pg, what);
        long bytes = RntEncoding.pageBytes(pg.elements(), col.bits());
        long natBytes = pg.elements() * RntEncoding.natural(col.type()).byteSize();
        int stored = (int) pg.size();
        if (pg.checksum() && (pg.offset() + stored > file.size() - 8)) {
            throw new CorruptShardException(path, pg.offset(), what + ": its checksum lies past the file's end");
        }
        ByteBuffer raw = file.read(pg.offset(), stored + (pg.checksum() ? 8 : 0), what);
        if (pg.checksum()) {
            ByteBuffer le = raw.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            long sum = le.getLong(le.position() + stored);
            long computed = Xxh3.hash(le, le.position(), stored);
            if (sum != computed) {
                throw new CorruptShardException(path, pg.offset(), what + ": checksum " + Long.toHexString(sum)
                        + " does not match the page's XXH3 " + Long.toHexString(computed));
            }
            raw = raw.slice(raw.position(), stored);
        }
        ByteBuffer plain = decompress(file, raw, (int) bytes, what, pg.offset());
        MemorySegment src = MemorySegment.ofBuffer(plain);
        MemorySegment dst = MemorySegment.ofArray(new byte[(int) natBytes]);
        RntEncoding.decode(col.type(), col.bits(), pg.elements(), src, dst, 0, col.min(), col.max());
        return dst;
    }

    /** The file's decompression, a codec's own exception (zstd-jni throws on some damaged frames) made one line. */
    private static ByteBuffer decompress(RootFile file, ByteBuffer raw, int length, String what, long offset)
            throws IOException {
        try {
            return file.decompress(raw, length, what);
        } catch (RuntimeException e) {
            throw new CorruptShardException(file.path(), offset, what + ": does not decompress (" + e.getMessage() + ")",
                    e);
        }
    }

    /** Fails unless the page's decoded size is one its stored bytes can hold (NOTE [Declared sizes]). */
    private static void checkPage(String path, RntSchema.ColumnRec col, RntClusters.Page pg, String what)
            throws CorruptShardException {
        long bytes = RntEncoding.pageBytes(pg.elements(), col.bits());
        long natBytes = pg.elements() * RntEncoding.natural(col.type()).byteSize();
        if (bytes > Integer.MAX_VALUE - 16 || natBytes > Integer.MAX_VALUE - 16
                || (bytes != pg.size() && bytes > pg.size() * MAX_RATIO)) {
            throw new CorruptShardException(path, pg.offset(), what + ": " + pg.elements() + " elements of "
                    + col.bits() + " bits (" + bytes + " bytes) declared in a page of " + pg.size() + " bytes");
        }
    }

    /** Elements {@code [lo, hi)} of {@code src} (of {@code from}) into {@code out} at byte {@code at} as {@code to}. */
    private static void convert(MemorySegment src, DType from, long lo, long hi, MemorySegment out, long at, DType to) {
        boolean real = to == DType.FLOAT32 || to == DType.FLOAT64;
        for (long i = lo; i < hi; i++) {
            long o = at + (i - lo) * to.byteSize();
            if (real) {
                double v = from == DType.FLOAT32 ? src.get(F32, 4 * i) : src.get(F64, 8 * i);
                if (to == DType.FLOAT32) {
                    out.set(F32, o, (float) v);
                } else {
                    out.set(F64, o, v);
                }
                continue;
            }
            long v = switch (from) {
                case BOOL, UINT8 -> src.get(ValueLayout.JAVA_BYTE, i) & 0xFFL;
                case INT8 -> src.get(ValueLayout.JAVA_BYTE, i);
                case INT16 -> src.get(I16, 2 * i);
                case UINT16 -> src.get(I16, 2 * i) & 0xFFFFL;
                case INT32 -> src.get(I32, 4 * i);
                case UINT32 -> src.get(I32, 4 * i) & 0xFFFFFFFFL;
                default -> src.get(I64, 8 * i);
            };
            switch (to.byteSize()) {
                case 1 -> out.set(ValueLayout.JAVA_BYTE, o, (byte) (to == DType.BOOL ? (v != 0 ? 1 : 0) : v));
                case 2 -> out.set(I16, o, (short) v);
                case 4 -> out.set(I32, o, (int) v);
                default -> out.set(I64, o, v);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        last.clear();
    }

    @Override
    public String toString() {
        return file.path() + ": RNTuple '" + name + "'";
    }
}
