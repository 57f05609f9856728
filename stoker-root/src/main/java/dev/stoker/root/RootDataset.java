package dev.stoker.root;

import dev.stoker.DirectDataset;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.internal.BlockCache;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The entries of a tree (a TTree or an RNTuple) in one or more ROOT files, one after the other in
 * file order, as a random-access dataset: each selected branch a field, a scalar or fixed-size
 * array a tensor, a variable-length one ({@code T[n]}, {@code std::vector<T>}) a
 * {@link Field#ragged ragged} field. Field names are the branch paths with {@code /} written as
 * {@code .} and a fixed array's {@code [N]} left off ({@code evt/P3/P3.Px} becomes
 * {@code evt.P3.P3.Px}).
 *
 * <p>An entry is read as a slice of its decoded cluster (the entries between two of the table's
 * {@link RootTable#clusterStarts()}, every selected branch decoded) held in a {@link BlockCache}
 * bounded in bytes, so that a pass over the data decompresses each basket once, not once per entry.
 */
public final class RootDataset implements DirectDataset, AutoCloseable {
    /** The default bound on decoded clusters held at once. */
    public static final long DEFAULT_CACHE_BYTES = 256L << 20;

    private final List<String> paths;
    private final String tree;
    private final List<RootFile> files = new ArrayList<>();
    private final List<RootTable> tables = new ArrayList<>();
    private final List<String> branches = new ArrayList<>();
    private final Schema schema;
    /** Per field: its column in each table. */
    private final RootColumn[][] columns;
    private final long[] sampleBytes;
    private final boolean[] ragged;
    /** Global entry number where each file starts, and the total after the last. */
    private final long[] fileStart;
    /** Global entry number where each cluster starts, and the total after the last. */
    private final long[] clusterStart;
    /** The file of each cluster. */
    private final int[] clusterFile;
    private final long size;
    private final BlockCache<Cluster> cache;
    private final long cacheBytes;
    /** The field groups a loader stacks ({@link #willStack}): held entry by entry in clusters decoded from then on. */
    private volatile List<int[]> entryMajor = List.of();
    private volatile boolean closed;
    /** Each file's group, or null for a dataset without groups. */
    private final int[] groupOfFile;
    private final List<String> groupNames;
    /** The label field's number, or -1. */
    private final int labelField;

    public RootDataset(List<String> paths, String tree, List<String> branches) throws IOException {
        this(paths, tree, branches, DEFAULT_CACHE_BYTES);
    }

    /**
     * @param paths      the files, local paths or http(s):// or s3:// URLs, read in this order
     * @param tree       the tree's name, {@code dir/name} in a subdirectory
     * @param branches   globs ({@code *}, {@code ?}) selecting branches; empty: every branch Stoker reads
     * @param cacheBytes the bound on decoded clusters held at once (at least one is always held)
     */
    public RootDataset(List<String> paths, String tree, List<String> branches, long cacheBytes) throws IOException {
        this(paths, tree, branches, cacheBytes, null, null, null);
    }

    /**
     * The files of several groups ({@code {"signal": [...], "background": [...]}}) as one
     * dataset, group after group, each group's files in order, with one more field {@code label}:
     * int64, the group's number in {@code groups}' order (0, 1, ...). Draw them in proportions
     * with {@link dev.stoker.Sampler#groups} over {@link #groupStarts()}.
     */
    public static RootDataset labelled(Map<String, List<String>> groups, String label, String tree, List<String> branches,
                                       long cacheBytes) throws IOException {
        if (groups.isEmpty()) {
            throw new IllegalArgumentException("name at least one group of ROOT files");
        }
        if (label == null || label.isBlank()) {
            throw new IllegalArgumentException("name the label field of the groups");
        }
        List<String> all = new ArrayList<>();
        List<Integer> groupOf = new ArrayList<>();
        int g = 0;
        for (var e : groups.entrySet()) {
            if (e.getValue().isEmpty()) {
                throw new IllegalArgumentException("group '" + e.getKey() + "' names no files");
            }
            for (String path : e.getValue()) {
                all.add(path);
                groupOf.add(g);
            }
            g++;
        }
        return new RootDataset(all, tree, branches, cacheBytes, groupOf.stream().mapToInt(Integer::intValue).toArray(),
                List.copyOf(groups.keySet()), label);
    }

    private RootDataset(List<String> paths, String tree, List<String> branches, long cacheBytes, int[] groupOfFile,
                        List<String> groupNames, String label) throws IOException {
        this.groupOfFile = groupOfFile;
        this.groupNames = groupNames == null ? List.of() : groupNames;
        if (paths.isEmpty()) {
            throw new IllegalArgumentException("name at least one ROOT file");
        }
        if (tree == null || tree.isBlank()) {
            throw new IllegalArgumentException("name the tree to read (tree=), e.g. events");
        }
        this.paths = List.copyOf(paths);
        this.tree = tree;
        try {
            for (String p : paths) {
                RootFile f = RootFile.open(p);
                files.add(f);
                tables.add(f.table(tree));
            }
            RootTable first = tables.get(0);
            List<RootColumn> selected = select(first, branches, paths.get(0));
            columns = new RootColumn[selected.size()][tables.size()];
            List<Field> fields = new ArrayList<>();
            Map<String, String> fieldOf = new LinkedHashMap<>();
            sampleBytes = new long[selected.size()];
            ragged = new boolean[selected.size()];
            for (int i = 0; i < selected.size(); i++) {
                RootColumn c = selected.get(i);
                this.branches.add(c.name());
                String field = fieldName(c.name());
                String clash = fieldOf.put(field, c.name());
                if (clash != null) {
                    throw new IllegalArgumentException(paths.get(0) + ": branches '" + clash + "' and '" + c.name()
                            + "' would both be field '" + field + "'; select one of them");
                }
                ragged[i] = c.ragged();
                Field fd = c.ragged() ? Field.ragged(field, c.dtype(), 32L * c.dtype().byteSize())
                        : Field.tensor(field, c.dtype(), shape(c));
                fields.add(fd);
                sampleBytes[i] = c.ragged() ? 0 : fd.sampleBytes();
                for (int t = 0; t < tables.size(); t++) {
                    RootColumn other = column(tables.get(t), c.name());
                    if (other == null || other.dtype() != c.dtype() || other.fixed() != c.fixed() || other.ragged() != c.ragged()) {
                        throw new IllegalArgumentException(paths.get(t) + ": tree '" + tree + "' "
                                + (other == null ? "has no branch '" + c.name() + "'" : "has branch '" + c.name() + "' as "
                                + other.type() + ", " + paths.get(0) + " has it as " + c.type())
                                + ": the files of one dataset must share the selected branches");
                    }
                    columns[i][t] = other;
                }
            }
            if (label != null) {
                if (fieldOf.containsKey(label)) {
                    throw new IllegalArgumentException(paths.get(0) + ": branch '" + fieldOf.get(label) + "' is field '" + label
                            + "' already; give the groups' label field another name (label=)");
                }
                fields.add(Field.scalar(label, dev.stoker.DType.INT64));
            }
            labelField = label == null ? -1 : fields.size() - 1;
            schema = Schema.of(fields);
            fileStart = new long[tables.size() + 1];
            List<Long> starts = new ArrayList<>();
            List<Integer> owners = new ArrayList<>();
            for (int t = 0; t < tables.size(); t++) {
                RootTable table = tables.get(t);
                fileStart[t + 1] = Math.addExact(fileStart[t], table.entries());
                for (long s : table.clusterStarts()) {
                    starts.add(fileStart[t] + s);
                    owners.add(t);
                }
            }
            size = fileStart[tables.size()];
            clusterStart = new long[starts.size() + 1];
            clusterFile = new int[owners.size()];
            for (int i = 0; i < starts.size(); i++) {
                clusterStart[i] = starts.get(i);
                clusterFile[i] = owners.get(i);
            }
            clusterStart[starts.size()] = size;
            cache = new BlockCache<>(paths.get(0), clusterFile.length, cacheBytes, this::decode, Cluster::bytes,
                    Cluster::free);
            this.cacheBytes = cacheBytes;
        } catch (IOException | RuntimeException e) {
            closeAll();
            throw e;
        }
    }

    /** The columns {@code globs} select (every readable one when empty); a selected refused branch is an error. */
    private static List<RootColumn> select(RootTable t, List<String> globs, String path) {
        if (globs == null || globs.isEmpty()) {
            if (t.columns().isEmpty()) {
                throw new IllegalArgumentException(path + ": tree '" + t.name() + "' has no branch Stoker reads"
                        + (t.refused().isEmpty() ? "" : "; " + refusedList(t)));
            }
            return t.columns();
        }
        List<RootColumn> out = new ArrayList<>();
        for (String g : globs) {
            Pattern p = glob(g);
            for (var e : t.refused().entrySet()) {
                if (p.matcher(e.getKey()).matches()) {
                    throw new IllegalArgumentException(path + ": branch '" + e.getKey() + "' is " + e.getValue()
                            + ", which Stoker does not read; leave it out of branches=");
                }
            }
            boolean any = false;
            for (RootColumn c : t.columns()) {
                if (p.matcher(c.name()).matches()) {
                    any = true;
                    if (!out.contains(c)) {
                        out.add(c);
                    }
                }
            }
            if (!any) {
                List<String> names = t.columns().stream().map(RootColumn::name).toList();
                throw new IllegalArgumentException(path + ": no branch of tree '" + t.name() + "' matches '" + g + "' (it has "
                        + (names.size() > 40 ? String.join(", ", names.subList(0, 40)) + ", ..." : String.join(", ", names)) + ")");
            }
        }
        return out;
    }

    private static String refusedList(RootTable t) {
        StringBuilder b = new StringBuilder("it has ");
        t.refused().forEach((k, v) -> b.append(b.length() > 7 ? ", " : "").append(k).append(" (").append(v).append(')'));
        return b.toString();
    }

    static Pattern glob(String g) {
        StringBuilder b = new StringBuilder();
        for (char ch : g.toCharArray()) {
            switch (ch) {
                case '*' -> b.append(".*");
                case '?' -> b.append('.');
                default -> b.append(Pattern.quote(String.valueOf(ch)));
            }
        }
        return Pattern.compile(b.toString());
    }

    private static RootColumn column(RootTable t, String name) {
        for (RootColumn c : t.columns()) {
            if (c.name().equals(name)) {
                return c;
            }
        }
        return null;
    }

    /** A branch path as a field name: {@code /} as {@code .}, a trailing {@code [N]} left off, other signs as {@code _}. */
    static String fieldName(String branch) {
        String s = branch.replace('/', '.').replaceAll("\\[[^\\]]*\\]", "");
        StringBuilder b = new StringBuilder();
        for (char ch : s.toCharArray()) {
            b.append(Character.isLetterOrDigit(ch) && ch < 128 || ch == '_' || ch == '.' || ch == '-' ? ch : '_');
        }
        if (b.isEmpty() || !(Character.isLetter(b.charAt(0)) || b.charAt(0) == '_')) {
            b.insert(0, '_');
        }
        return b.toString();
    }

    /** A fixed column's per-entry shape: {@code []} for a scalar, the type's dimensions for an array. */
    private static long[] shape(RootColumn c) {
        List<Long> dims = new ArrayList<>();
        String t = c.type();
        for (int i = t.indexOf('['); i >= 0; i = t.indexOf('[', i + 1)) {
            int j = t.indexOf(']', i);
            try {
                dims.add(Long.parseLong(t.substring(i + 1, j)));
            } catch (RuntimeException e) {
                dims.clear();
                break;
            }
        }
        long product = dims.stream().reduce(1L, (a, b) -> a * b);
        if (dims.isEmpty() || product != c.fixed()) {
            return c.fixed() == 1 && dims.isEmpty() ? new long[0] : new long[] {c.fixed()};
        }
        return dims.stream().mapToLong(Long::longValue).toArray();
    }

    /** The groups' names, in label order (empty without groups). */
    public List<String> groups() {
        return groupNames;
    }

    /** Global entry numbers where each group starts, then the entry count (without groups: one group). */
    public long[] groupStarts() {
        if (groupOfFile == null) {
            return new long[] {0, size};
        }
        long[] starts = new long[groupNames.size() + 1];
        for (int t = tables.size() - 1; t >= 0; t--) {
            starts[groupOfFile[t]] = fileStart[t];
        }
        starts[groupNames.size()] = size;
        return starts;
    }

    /** Where group {@code g}'s clusters start, counted from the group's first entry, then its entry count. */
    public long[] clusterStarts(int g) {
        long[] groups = groupStarts();
        return Arrays.stream(clusterStart).filter(s -> s >= groups[g] && s <= groups[g + 1]).map(s -> s - groups[g])
                .distinct().toArray();
    }

    /** Global entry numbers where the clusters start, then the entry count: the blocks of a block shuffle. */
    public long[] clusterStarts() {
        return clusterStart.clone();
    }

    /**
     * NOTE [Mixing]: a shuffled epoch over ROOT files reads clusters in a random order, the
     * entries of each {@code window} consecutive clusters of that order in a random order among
     * themselves ({@link dev.stoker.Sampler#blockShuffle}), so each cluster is decompressed once a
     * pass and a batch mixes entries of about {@code window} clusters, which the permutation draws
     * from every file (weaver's event-based mixing with a bounded window). The window is as many
     * clusters as fit in half the cache, their decoded size estimated from the first cluster
     * (decoded here, as a first batch would), at least 1: a global permutation over more clusters
     * than the cache holds would decompress a cluster again for nearly every entry.
     */
    public int mixingWindow() throws IOException {
        int clusters = clusterFile.length;
        long entries = clusterStart[1] - clusterStart[0];
        if (clusters == 0 || entries == 0) {
            return 1;
        }
        long perCluster = Math.max(1, cache.get(0).bytes());
        return (int) Math.max(1, Math.min(clusters, cacheBytes / 2 / perCluster));
    }

    /**
     * The mean number of distinct files a batch of {@code batch} consecutive positions of
     * {@code order} draws from, over at most its first {@code batches} batches.
     */
    public double filesPerBatch(dev.stoker.Order order, int batch, int batches) {
        long n = Math.min(order.length(), (long) batch * batches);
        if (n == 0 || batch < 1) {
            return 0;
        }
        java.util.BitSet seen = new java.util.BitSet(tables.size());
        long total = 0;
        long counted = 0;
        for (long p = 0; p < n; p += batch) {
            seen.clear();
            for (long q = p; q < Math.min(n, p + batch); q++) {
                int f = Arrays.binarySearch(fileStart, order.index(q));
                seen.set(f >= 0 ? f : -f - 2);
            }
            total += seen.cardinality();
            counted++;
        }
        return (double) total / counted;
    }

    /** The files read. */
    public int files() {
        return tables.size();
    }

    /** The branches read, in field order. */
    public List<String> branches() {
        return List.copyOf(branches);
    }

    /**
     * Holds the ragged float32 fields {@code fields}, which a loader stacks, entry by entry in the
     * clusters decoded from now on (NOTE [Entry-major] in Row); ignored unless every one is such a
     * field of this dataset and none is in a stack already. A cluster whose fields differ in length
     * at some entry keeps them field by field.
     */
    @Override
    public synchronized void willStack(List<String> fields) {
        int[] g = new int[fields.size()];
        List<String> names = schema.fields().stream().map(Field::name).toList();
        for (int j = 0; j < g.length; j++) {
            g[j] = names.indexOf(fields.get(j));
            if (g[j] < 0 || g[j] >= ragged.length || !ragged[g[j]] || schema.field(g[j]).dtype() != dev.stoker.DType.FLOAT32) {
                return;
            }
        }
        if (g.length < 2 || Arrays.stream(g).distinct().count() != g.length) {
            return;
        }
        for (int[] held : entryMajor) {
            for (int f : g) {
                if (Arrays.stream(held).anyMatch(x -> x == f)) {
                    return;
                }
            }
        }
        List<int[]> next = new ArrayList<>(entryMajor);
        next.add(g);
        entryMajor = List.copyOf(next);
    }

    private Cluster decode(int k) throws IOException {
        int t = clusterFile[k];
        long from = clusterStart[k] - fileStart[t];
        long to = clusterStart[k + 1] - fileStart[t];
        ColumnData[] out = new ColumnData[columns.length];
        for (int f = 0; f < columns.length; f++) {
            out[f] = tables.get(t).read(columns[f][t], from, to);
        }
        return Cluster.of(out, entryMajor);
    }

    @Override
    public void read(long index, Row row) throws IOException {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("entry " + index + " of " + size);
        }
        int k = Arrays.binarySearch(clusterStart, index);
        if (k < 0) {
            k = -k - 2;
        }
        while (k + 1 < clusterStart.length && clusterStart[k + 1] == index) {
            k++; // clusters of no entries (an empty file) lie at the same start
        }
        int at = (int) (index - clusterStart[k]);
        Cluster c = cache.get(k);
        try {
            write(k, c, at, row);
        } catch (IllegalStateException e) {
            // the cache dropped the cluster between handing it out and the copies from it, which
            // then failed, having read nothing of the freed memory: written again from our own copy
            if (closed) {
                throw e;
            }
            row.restart();
            Cluster own = decode(k);
            try {
                write(k, own, at, row);
            } finally {
                own.free();
            }
        }
    }

    /** Writes entry {@code at} of decoded cluster {@code k}. */
    private void write(int k, Cluster c, int at, Row row) {
        if (labelField >= 0) {
            row.putLong(labelField, 0, groupOfFile[clusterFile[k]]);
        }
        c.write(at, row, sampleBytes);
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public Schema schema() {
        return schema;
    }

    @Override
    public String name() {
        return paths.size() == 1 ? paths.get(0) + ":" + tree : paths.get(0) + " and " + (paths.size() - 1) + " more:" + tree;
    }

    /**
     * A hash of each file's size and first and last 64 KiB, with the tree and the branches read:
     * the same content gives the same fingerprint wherever it lives.
     */
    @Override
    public long fingerprint() {
        long h = 0x9E3779B97F4A7C15L ^ tree.hashCode();
        try {
            for (RootFile f : files) {
                int n = (int) Math.min(f.size(), 64 << 10);
                h = mix(h, f.size());
                h = mix(h, hash(f.read(0, n, "fingerprint")));
                h = mix(h, hash(f.read(f.size() - n, n, "fingerprint")));
            }
        } catch (IOException e) {
            return 0; // no fingerprint: a resume is not checked against one
        }
        for (String b : branches) {
            h = mix(h, b.hashCode());
        }
        if (groupOfFile != null) {
            for (int t = 0; t < groupOfFile.length; t++) {
                h = mix(h, groupNames.get(groupOfFile[t]).hashCode());
            }
            h = mix(h, schema.field(labelField).name().hashCode());
        }
        return h == 0 ? 1 : h;
    }

    private static long hash(ByteBuffer b) {
        long h = 1125899906842597L;
        for (int i = b.position(); i < b.limit(); i++) {
            h = 31 * h + b.get(i);
        }
        return h;
    }

    private static long mix(long h, long v) {
        long x = h ^ (v + 0x9E3779B97F4A7C15L + (h << 6) + (h >>> 2));
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        return x ^ (x >>> 33);
    }

    @Override
    public void close() {
        closed = true;
        if (cache != null) {
            cache.close();
        }
        closeAll();
    }

    private void closeAll() {
        for (RootTable t : tables) {
            try {
                t.close();
            } catch (IOException | RuntimeException e) {
                // closing frees memory only; the files are closed next
            }
        }
        for (RootFile f : files) {
            f.close();
        }
    }
}
