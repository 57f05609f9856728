package dev.stoker.root;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A TTree's numeric branches as a {@link RootTable}: scalars and fixed-size arrays of bool,
 * integers of 8 to 64 bits and floats, leaf-count arrays {@code T[n]}, {@code std::vector<T>} of
 * those, and the members of split classes. Every other branch is {@link #refused()} with its type.
 *
 * <p>NOTE [Baskets]: a branch's entries sit in baskets: a key header (ending with the TBasket's
 * own members: entries, and where its data ends), then the payload, compressed or not. The data
 * holds the entries' values big-endian one after another; for variable-length entries the payload
 * may end with the entries' byte offsets (fEntryOffset), and where it does not, the counts come
 * from the counter branch ({@code T[n]}, a split class's C array) or from each entry's own header
 * ({@code std::vector}: a byte count, a version and the size, 10 bytes). Every count is checked
 * against the bytes the basket holds before anything is copied, and a decoded basket that a read
 * leaves entries of (one across clusters, as ROOT 5 wrote them) is kept in a byte-bounded cache (one
 * for all open tables: {@link BasketCache}) so that reading its entries in several pieces
 * decompresses it once; a basket read whole is not kept, so that aligned baskets cost the
 * collector nothing after their read.
 */
final class TTreeTable implements RootTable {
    private final RootFile file;
    private final String name;
    private final long entries;
    private final List<RootColumn> columns;
    private final Map<String, String> refused;
    private final Map<String, Col> byName = new LinkedHashMap<>();
    private final long[] clusterStarts;
    /** Whether baskets' entry offsets are used when present (off: counts from counters and headers, as for baskets without them). */
    boolean entryOffsets = true;

    /** How a column's entries lie in its baskets; header is -1 for one of fixed size, else each entry's header bytes. */
    record Col(RootColumn column, String path, TTreeMeta.Branch branch, DType dtype, int fixed, int header,
               TTreeMeta.Branch counter, DType counterType) {
    }

    /** One basket decoded: entries {@code [first, first + n)}, values little-endian, element offsets for a ragged column. */
    record Decoded(long first, int n, byte[] values, long[] offsets) {
    }

    private TTreeTable(RootFile file, String name, TTreeMeta.Tree tree, Map<String, List<Streamers.Info>> streamers) throws IOException {
        this.file = file;
        this.name = name;
        this.entries = tree.entries();
        Map<TTreeMeta.Leaf, TTreeMeta.Branch> owner = new IdentityHashMap<>();
        walkOwners(tree.branches(), owner);
        List<RootColumn> cols = new ArrayList<>();
        Map<String, String> ref = new LinkedHashMap<>();
        walk(tree.branches(), "", owner, streamers, cols, ref);
        this.columns = List.copyOf(cols);
        this.refused = Collections.unmodifiableMap(ref);
        TreeSet<Long> starts = new TreeSet<>();
        for (Col c : byName.values()) {
            checkBaskets(c);
            for (int i = 0; i < c.branch().writeBasket; i++) {
                if (c.branch().basketEntry[i] < entries) {
                    starts.add(c.branch().basketEntry[i]);
                }
            }
        }
        if (entries > 0) {
            starts.add(0L);
        }
        this.clusterStarts = starts.stream().mapToLong(Long::longValue).toArray();
    }

    static RootTable open(RootFile file, Key key, String name) throws IOException {
        ByteBuffer body = file.object(key);
        Objects o = new Objects(new Cursor(file.path(), key.toString(), body, -1), key.keylen());
        TTreeMeta.Tree tree = TTreeMeta.tree(o);
        Map<String, List<Streamers.Info>> streamers = needsStreamers(tree.branches()) ? Streamers.read(file) : Map.of();
        return new TTreeTable(file, name, tree, streamers);
    }

    private static boolean needsStreamers(List<TTreeMeta.Branch> branches) {
        for (TTreeMeta.Branch b : branches) {
            if (b.element && b.id >= 0 || needsStreamers(b.children)) {
                return true;
            }
        }
        return false;
    }

    private static void walkOwners(List<TTreeMeta.Branch> branches, Map<TTreeMeta.Leaf, TTreeMeta.Branch> owner) {
        for (TTreeMeta.Branch b : branches) {
            for (TTreeMeta.Leaf l : b.leaves) {
                owner.put(l, b);
            }
            walkOwners(b.children, owner);
        }
    }

    private void walk(List<TTreeMeta.Branch> branches, String prefix, Map<TTreeMeta.Leaf, TTreeMeta.Branch> owner,
                      Map<String, List<Streamers.Info>> streamers, List<RootColumn> cols, Map<String, String> ref) throws CorruptShardException {
        for (TTreeMeta.Branch b : branches) {
            String path = prefix + b.name;
            if (!b.children.isEmpty()) {
                walk(b.children, path + "/", owner, streamers, cols, ref);
                continue;
            }
            Object kind = b.element ? BranchTypes.element(b, streamers) : BranchTypes.plain(b, owner);
            if (kind instanceof String why) {
                ref.put(path, why);
                continue;
            }
            Col c = (Col) kind;
            c = new Col(new RootColumn(path, c.dtype(), c.fixed(), c.header() >= 0, c.column().type()), path, b, c.dtype(),
                    c.fixed(), c.header(), c.counter(), c.counterType());
            cols.add(c.column());
            byName.put(path, c);
        }
    }

    /** The baskets of a column's branch (and counter) must cover the tree's entries, in order. */
    private void checkBaskets(Col c) throws CorruptShardException {
        checkBaskets(c.branch(), c.path());
        if (c.counter() != null) {
            checkBaskets(c.counter(), c.path() + "'s counter " + c.counter().name);
        }
    }

    private void checkBaskets(TTreeMeta.Branch b, String path) throws CorruptShardException {
        long prev = 0;
        for (int i = 0; i < b.writeBasket; i++) {
            long e = b.basketEntry[i];
            if (i == 0 && e != 0 || e < prev || e > entries) {
                throw new CorruptShardException(file.path(), -1, "tree '" + name + "', branch '" + path + "': basket " + i
                        + " starts at entry " + e + " (after " + prev + ", of " + entries + ")");
            }
            prev = e;
        }
        long end = b.writeBasket == 0 ? 0 : basketEnd(b, b.writeBasket - 1);
        if (end < entries) {
            throw new CorruptShardException(file.path(), -1, "tree '" + name + "', branch '" + path + "': its " + b.writeBasket
                    + " baskets on file hold entries up to " + end + " of " + entries
                    + (b.embeddedBaskets > 0 ? " (the rest sits in a basket kept within the tree's metadata, which Stoker does not read)" : ""));
        }
    }

    private long basketEnd(TTreeMeta.Branch b, int i) {
        return i + 1 < b.writeBasket ? b.basketEntry[i + 1] : Math.max(b.entries, entries);
    }

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
        return clusterStarts.clone();
    }

    /** Baskets and compressed bytes of a column, for inspection: {count, bytes on file}. */
    long[] baskets(RootColumn c) {
        Col col = col(c);
        long bytes = 0;
        for (int i = 0; i < col.branch().writeBasket; i++) {
            bytes += col.branch().basketBytes[i];
        }
        return new long[] {col.branch().writeBasket, bytes};
    }

    /** Where basket {@code i} of a column lies: {byte offset, bytes}. */
    long[] basket(RootColumn c, int i) {
        TTreeMeta.Branch b = col(c).branch();
        return new long[] {b.basketSeek[i], b.basketBytes[i]};
    }

    private Col col(RootColumn c) {
        Col col = byName.get(c.name());
        if (col == null || !col.column().equals(c)) {
            throw new IllegalArgumentException(file.path() + ": tree '" + name + "' has no column " + c);
        }
        return col;
    }

    @Override
    public ColumnData read(RootColumn c, long from, long to) throws IOException {
        Col col = col(c);
        if (from < 0 || to < from || to > entries) {
            throw new IllegalArgumentException("entries [" + from + ", " + to + ") of a tree of " + entries);
        }
        TTreeMeta.Branch b = col.branch();
        int size = col.dtype().byteSize();
        List<Decoded> parts = new ArrayList<>();
        int first = basketOf(b, from);
        for (int i = first; i < b.writeBasket && b.basketEntry[i] < to; i++) {
            // kept for a later read only if this one leaves some of its entries (a basket across clusters)
            boolean whole = b.basketEntry[i] >= from && basketEnd(b, i) <= to;
            parts.add(basket(col, i, !whole));
        }
        if (from == to) {
            return new ColumnData(MemorySegment.ofArray(new byte[0]), col.header() >= 0 ? new long[1] : null);
        }
        if (col.header() < 0) {
            long n = (to - from) * col.fixed() * size;
            byte[] out = new byte[Math.toIntExact(n)];
            long at = 0;
            for (Decoded d : parts) {
                long s = Math.max(from, d.first()), e = Math.min(to, d.first() + d.n());
                int len = (int) ((e - s) * col.fixed() * size);
                System.arraycopy(d.values(), (int) ((s - d.first()) * col.fixed() * size), out, (int) at, len);
                at += len;
            }
            return new ColumnData(MemorySegment.ofArray(out), null);
        }
        if (parts.size() == 1 && parts.get(0).first() == from && parts.get(0).n() == to - from
                && parts.get(0).offsets()[0] == 0) { // a whole basket: its arrays as they are
            Decoded d = parts.get(0);
            long bytes = d.offsets()[d.n()] * size;
            return new ColumnData(MemorySegment.ofArray(d.values()).asSlice(0, bytes), d.offsets());
        }
        long[] offsets = new long[(int) (to - from + 1)];
        long total = 0;
        for (Decoded d : parts) {
            long s = Math.max(from, d.first()), e = Math.min(to, d.first() + d.n());
            total += d.offsets()[(int) (e - d.first())] - d.offsets()[(int) (s - d.first())];
        }
        byte[] out = new byte[Math.toIntExact(total * size)];
        long at = 0;
        int k = 0;
        for (Decoded d : parts) {
            long s = Math.max(from, d.first()), e = Math.min(to, d.first() + d.n());
            long base = d.offsets()[(int) (s - d.first())];
            for (long j = s; j < e; j++) {
                offsets[k++] = at + d.offsets()[(int) (j - d.first())] - base;
            }
            long len = d.offsets()[(int) (e - d.first())] - base;
            System.arraycopy(d.values(), (int) (base * size), out, (int) (at * size), (int) (len * size));
            at += len;
        }
        offsets[k] = at;
        return new ColumnData(MemorySegment.ofArray(out), offsets);
    }

    private static int basketOf(TTreeMeta.Branch b, long entry) {
        int lo = 0, hi = b.writeBasket - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (b.basketEntry[mid] <= entry) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** Basket {@code i} of a column: from the {@link BasketCache}, else decoded (and kept there if {@code keep}). */
    private Decoded basket(Col col, int i, boolean keep) throws IOException {
        Decoded d = BasketCache.get(this, col.branch(), i, keep);
        if (d != null) {
            return d;
        }
        d = decode(col, i);
        if (keep) {
            BasketCache.put(this, col.branch(), i, d);
        }
        return d;
    }

    /** One basket of a column, read, decompressed and checked (NOTE [Baskets]). */
    private Decoded decode(Col col, int i) throws IOException {
        TTreeMeta.Branch b = col.branch();
        long seek = b.basketSeek[i];
        int nbytes = b.basketBytes[i];
        long first = b.basketEntry[i];
        long n = basketEnd(b, i) - first;
        String what = "tree '" + name + "', branch '" + col.path() + "', basket " + i + " at byte " + seek;
        ByteBuffer raw = file.read(seek, nbytes, what);
        Cursor k = new Cursor(file.path(), what, raw, seek);
        int keyNbytes = k.i32();
        k.skip(2); // the key's version
        int objlen = k.i32();
        k.skip(4); // fDatime
        int keylen = k.i16();
        if (keyNbytes != nbytes || keylen < 18 + 19 || keylen > nbytes || objlen < 0) {
            throw k.corruptAt(0, "the basket's key declares " + keyNbytes + " bytes (the branch says " + nbytes + "), a header of "
                    + keylen + " and " + objlen + " uncompressed");
        }
        k.pos(keylen - 19);
        k.skip(2 + 4 + 4); // fVersion, fBufferSize, fNevBufSize
        int nevBuf = k.i32();
        int last = k.i32();
        if (nevBuf != n) {
            throw k.corruptAt(keylen - 9, "the basket holds " + nevBuf + " entries, the branch says " + n
                    + " (entries " + first + " to " + (first + n) + ")");
        }
        int border = last - keylen;
        if (border < 0 || border > objlen) {
            throw k.corruptAt(keylen - 5, "the basket's data ends at byte " + border + " of its " + objlen + " uncompressed bytes");
        }
        ByteBuffer payload = file.decompress(raw.slice(keylen, nbytes - keylen), objlen, what);
        Cursor p = new Cursor(file.path(), what, payload, objlen == nbytes - keylen ? seek + keylen : -1);
        int size = col.dtype().byteSize();
        if (col.header() < 0) {
            long want = n * col.fixed() * size;
            if (border != want) {
                throw p.corruptAt(0, "holds " + border + " bytes of data, " + n + " entries of " + col.fixed() + " × "
                        + col.dtype().label() + " need " + want);
            }
            byte[] out = new byte[border];
            swap(payload, 0, out, 0, (int) (n * col.fixed()), col.dtype());
            return new Decoded(first, (int) n, out, null);
        }
        // variable-length entries: their byte ranges from fEntryOffset, else from the counter or each header
        int[] starts = null;
        if (border < objlen && entryOffsets) {
            p.pos(border);
            int count = p.i32();
            if (count < n || (long) objlen - border < 4 + 4L * n) {
                throw p.corruptAt(border, "its entry offsets table declares " + count + " entries in " + (objlen - border - 4)
                        + " bytes, the basket holds " + n);
            }
            starts = new int[(int) n + 1];
            for (int j = 0; j < n; j++) {
                int s = p.i32() - keylen;
                if (s < 0 || s > border || j > 0 && s < starts[j - 1]) {
                    throw p.corruptAt(p.pos() - 4, "entry " + (first + j) + "'s offset " + s + " lies outside the basket's "
                            + border + " bytes of data or before the previous entry's");
                }
                starts[j] = s;
            }
            starts[(int) n] = border;
        }
        long[] counts = null;
        if (starts == null && col.header() != 10) {
            counts = counts(col, first, first + n);
        }
        long[] offsets = new long[(int) n + 1];
        // first pass: each entry's element count, checked against its bytes
        int at = 0;
        for (int j = 0; j < n; j++) {
            int s = starts != null ? starts[j] : at;
            long elements;
            if (col.header() == 10) {
                p.pos(s);
                if (border - s < 10) {
                    throw p.corruptAt(s, "entry " + (first + j) + ": its 10-byte std::vector header runs past the basket's data");
                }
                int bc = p.i32() & ~Objects.BYTE_COUNT;
                p.skip(2);
                int len = p.i32();
                if (len < 0 || (long) len * size != bc - 6L || (long) len * size > border - s - 10) {
                    throw p.corruptAt(s, "entry " + (first + j) + ": a std::vector of " + len + " elements in " + bc
                            + " counted bytes, " + (border - s - 10) + " remain");
                }
                elements = len;
                if (starts != null && starts[j + 1] - s != 10 + (long) len * size) {
                    throw p.corruptAt(s, "entry " + (first + j) + ": a std::vector of " + len + " elements in an entry of "
                            + (starts[j + 1] - s) + " bytes");
                }
            } else if (starts != null) {
                long bytes = starts[j + 1] - s - col.header();
                if (bytes < 0 || bytes % size != 0) {
                    throw p.corruptAt(s, "entry " + (first + j) + " spans " + (starts[j + 1] - s) + " bytes, not a whole number of "
                            + col.dtype().label() + " after its " + col.header() + "-byte header");
                }
                elements = bytes / size;
            } else {
                elements = counts[j];
                if (elements < 0 || elements * size + col.header() > border - s) {
                    throw p.corruptAt(s, "entry " + (first + j) + ": its counter says " + elements + " elements, "
                            + (border - s) + " bytes remain in the basket");
                }
            }
            offsets[j + 1] = offsets[j] + elements;
            at = (int) (s + col.header() + elements * size);
        }
        if (starts == null && at != border) {
            throw p.corruptAt(at, "the basket's entries end at byte " + at + ", its data at " + border);
        }
        byte[] out = new byte[Math.toIntExact(offsets[(int) n] * size)];
        at = 0;
        for (int j = 0; j < n; j++) {
            int s = starts != null ? starts[j] : at;
            int cnt = (int) (offsets[j + 1] - offsets[j]);
            swap(payload, s + col.header(), out, (int) (offsets[j] * size), cnt, col.dtype());
            at = s + col.header() + cnt * size;
        }
        return new Decoded(first, (int) n, out, offsets);
    }

    /** The counter branch's values over entries {@code [from, to)}, for baskets written without entry offsets. */
    private long[] counts(Col col, long from, long to) throws IOException {
        Col counter = null;
        for (Col c : byName.values()) {
            if (c.branch() == col.counter()) {
                counter = c;
            }
        }
        if (counter == null) {
            counter = new Col(new RootColumn(col.counter().name, col.counterType(), 1, false, BranchTypes.cname(col.counterType())),
                    col.path() + "'s counter", col.counter(), col.counterType(), 1, -1, null, null);
        }
        TTreeMeta.Branch cb = counter.branch();
        long[] out = new long[(int) (to - from)];
        int k = 0;
        for (int i = basketOf(cb, from); i < cb.writeBasket && cb.basketEntry[i] < to; i++) {
            Decoded d = basket(counter, i, true); // each of the counted branches reads it
            MemorySegment v = MemorySegment.ofArray(d.values());
            for (long j = Math.max(from, d.first()); j < Math.min(to, d.first() + d.n()); j++) {
                long at = j - d.first();
                out[k++] = switch (counter.dtype()) {
                    case INT8 -> v.get(ValueLayout.JAVA_BYTE, at);
                    case UINT8 -> v.get(ValueLayout.JAVA_BYTE, at) & 0xFF;
                    case INT16 -> v.get(ValueLayout.JAVA_SHORT_UNALIGNED, 2 * at);
                    case UINT16 -> v.get(ValueLayout.JAVA_SHORT_UNALIGNED, 2 * at) & 0xFFFF;
                    case INT32 -> v.get(ValueLayout.JAVA_INT_UNALIGNED, 4 * at);
                    case UINT32 -> v.get(ValueLayout.JAVA_INT_UNALIGNED, 4 * at) & 0xFFFFFFFFL;
                    default -> v.get(ValueLayout.JAVA_LONG_UNALIGNED, 8 * at);
                };
            }
        }
        return out;
    }

    /** {@code count} big-endian values at {@code src[at]} written little-endian to {@code dst[to]}. */
    private static void swap(ByteBuffer src, int at, byte[] dst, int to, int count, DType t) {
        MemorySegment s = MemorySegment.ofBuffer(src);
        MemorySegment d = MemorySegment.ofArray(dst);
        switch (t.byteSize()) {
            case 1 -> MemorySegment.copy(s, at, d, to, count);
            case 2 -> MemorySegment.copy(s, ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), at,
                    d, ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), to, count);
            case 4 -> MemorySegment.copy(s, ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), at,
                    d, ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), to, count);
            default -> MemorySegment.copy(s, ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), at,
                    d, ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), to, count);
        }
    }

    @Override
    public void close() {
        BasketCache.drop(this);
    }
}
