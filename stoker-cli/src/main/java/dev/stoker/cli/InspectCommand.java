package dev.stoker.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.stoker.DType;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.npy.NpyArray;
import dev.stoker.formats.tokens.Megatron;
import dev.stoker.formats.tokens.TokenFile;
import dev.stoker.sources.LocalCopies;
import dev.stoker.sources.Tokens;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/** {@code stoker inspect PATH...}: what a file is and holds. */
@Command(name = "inspect", description = "Describe data files: format, dtype, shape, counts, first values.")
final class InspectCommand implements Callable<Integer> {
    private static final JsonFactory JSON = new JsonFactory();

    /** Every format inspect reads, as its help and its errors name them. */
    static final String FORMATS = ".npy, .npz, torch.save (.pt, .pth), .safetensors, a raw token .bin, a Megatron dataset (PREFIX, PREFIX.bin or PREFIX.idx), "
            + "tar shards (.tar, .tar.gz, .tgz, .tar.zst, .tar.lz4), JSON lines (.jsonl, .ndjson, also .gz or .zst), HDF5 (.h5, .hdf5, .hdf), "
            + "Parquet (.parquet, .pq), ROOT (.root: trees, branches, baskets), Arrow (.arrow or a datasets folder), TFRecord, "
            + "ArrayRecord, an MDS or LitData folder, an SQLite database (any name)";

    @Parameters(paramLabel = "PATH", arity = "1..*", description = FORMATS + "; brace patterns (train-{000000..000009}.tar), "
            + "local paths or http(s):// and s3:// URLs (read through the cache).")
    List<String> locations;

    @CommandLine.Mixin
    CacheOptions cache;

    @Option(names = "--json", description = "One JSON object per path.")
    boolean json;

    @Option(names = "--dtype", defaultValue = "uint16", description = "Token type of a raw .bin (default ${DEFAULT-VALUE}).")
    String dtype;

    @Option(names = "--raw", description = "Read a .bin as raw tokens as it is, also one whose first bytes look like "
            + "another format (a zip archive, text), which is otherwise refused.")
    boolean raw;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Draw the distributions (tar shards: sample sizes, labels, "
            + "samples per shard; Megatron datasets: document lengths) into a PNG; --json then lists the same counts.")
    Path plot;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        locations = Main.expand(locations); // brace patterns, as ls takes them
        if (plot != null) {
            dev.stoker.storage.io.PendingFile.check(plot); // before the work: a device, a FIFO or a folder is refused
        }
        // a remote Parquet or ROOT file is described where it lives, by ranged reads of its
        // metadata alone; any other remote file is fetched through the shard cache first
        List<String> fetched = locations.stream().filter(l -> !remoteParquet(l)).toList();
        try (LocalCopies files = new LocalCopies(fetched, cache.spec())) {
            java.util.Iterator<Path> local = files.paths().iterator();
            List<Path> paths = new java.util.ArrayList<>();
            for (String l : locations) {
                paths.add(remoteParquet(l) ? null : local.next());
            }
            return inspect(paths);
        }
    }

    private static boolean remoteParquet(String location) {
        return dev.stoker.storage.Locations.isRemote(location) && (isParquet(location) || isRoot(location));
    }

    private static boolean isRoot(String name) {
        return name.endsWith(".root");
    }

    private static boolean isParquet(String name) {
        return name.endsWith(".parquet") || name.endsWith(".pq");
    }

    private int inspect(List<Path> paths) throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        DType rawType = Tokens.tokenType(dtype);
        // uneven shard sizes are judged against the median of the tar shards inspected together
        Map<Path, dev.stoker.cli.TarSummary> tars = new java.util.LinkedHashMap<>();
        for (Path p : paths) {
            if (p != null && isTar(p)) {
                if (!Files.exists(p)) {
                    throw new NoSuchFileException(p.toString());
                }
                tars.put(p, dev.stoker.cli.TarSummary.of(p, null, plot != null));
            }
        }
        if (tars.size() > 1) {
            long[] counts = tars.values().stream().mapToLong(t -> t.samples).sorted().toArray();
            long median = counts[counts.length / 2];
            for (var e : tars.entrySet()) {
                long n = e.getValue().samples;
                if (median > 0 && Math.abs(n - median) > Math.max(1, median / 10)) {
                    e.getValue().warnings.add("uneven shard: " + n + " samples where the median shard has " + median
                            + " (ranks that split by shard get uneven work)");
                }
            }
        }
        List<Distribution> drawn = new java.util.ArrayList<>();
        for (int i = 0; i < paths.size(); i++) {
            Path p = paths.get(i);
            StringWriter w = new StringWriter();
            try (JsonGenerator g = JSON.createGenerator(w)) {
                g.writeStartObject();
                g.writeStringField("path", locations.get(i)); // as given: a URL stays a URL
                List<Distribution> found = plot == null ? null : new java.util.ArrayList<>();
                if (tars.containsKey(p)) {
                    tar(tars.get(p), g);
                    if (found != null) {
                        var t = tars.get(p);
                        found.add(Distribution.histogram("sampleBytes", "sample sizes", "bytes per sample", t.sampleBytes, 30));
                        if (!t.labels.isEmpty()) {
                            found.add(labels(t.labels, "labels (cls)"));
                        }
                    }
                } else if (p == null && isRoot(locations.get(i))) {
                    root(dev.stoker.root.RootInfo.of(locations.get(i)), g);
                } else if (p == null) {
                    parquet(dev.stoker.parquet.ParquetInfo.of(locations.get(i)), g);
                } else {
                    describe(p, rawType, raw, g, found);
                }
                if (found != null) {
                    g.writeObjectFieldStart("distributions");
                    for (Distribution d : found) {
                        d.json(g);
                    }
                    g.writeEndObject();
                    if (!tars.containsKey(p)) {
                        drawn.addAll(found);
                    }
                }
                g.writeEndObject();
            }
            out.println(json ? w.toString() : Text.of(w.toString()));
            out.flush();
        }
        if (plot != null) {
            if (!tars.isEmpty()) {
                // the shards together: their sample sizes and labels pooled, and samples per shard
                long[] sizes = tars.values().stream().flatMapToLong(t -> java.util.Arrays.stream(t.sampleBytes)).toArray();
                Map<String, Long> labels = new java.util.TreeMap<>();
                Map<String, Long> perShard = new java.util.LinkedHashMap<>();
                for (var e : tars.entrySet()) {
                    e.getValue().labels.forEach((k, v) -> labels.merge(k, v, Long::sum));
                    perShard.put(String.valueOf(e.getKey().getFileName()), e.getValue().samples);
                }
                List<Distribution> pooled = new java.util.ArrayList<>();
                pooled.add(Distribution.histogram("sampleBytes", "sample sizes (" + tars.size() + " shards)", "bytes per sample", sizes, 30));
                if (!labels.isEmpty()) {
                    pooled.add(labels(labels, "labels (cls), " + tars.size() + " shards"));
                }
                pooled.add(Distribution.categories("samplesPerShard", "samples per shard", "shard", perShard, 60));
                drawn.addAll(0, pooled);
            }
            Distribution.plot(plot, drawn);
            spec.commandLine().getErr().println("stoker: wrote " + plot);
        }
        return 0;
    }

    /**
     * Samples per label: per value, the most frequent first, for up to 40 values; beyond that,
     * integer labels as a histogram of the label value (samples per range of classes).
     */
    private static Distribution labels(Map<String, Long> counts, String title) {
        if (counts.size() > 40 && counts.keySet().stream().allMatch(k -> k.matches("-?\\d{1,18}"))) {
            long total = counts.values().stream().mapToLong(Long::longValue).sum();
            long[] values = new long[Math.toIntExact(total)];
            int i = 0;
            for (var e : counts.entrySet()) {
                long v = Long.parseLong(e.getKey());
                for (long c = 0; c < e.getValue(); c++) {
                    values[i++] = v;
                }
            }
            return Distribution.histogram("labels", title + ": " + counts.size() + " classes, binned", "class (lower edge of the bin)",
                    values, 40);
        }
        return Distribution.categories("labels", title, "label", byCount(counts), 40);
    }

    /** The most frequent first. */
    private static Map<String, Long> byCount(Map<String, Long> counts) {
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        counts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> out.put(e.getKey(), e.getValue()));
        return out;
    }

    /** A ROOT file: its version and compression, and each tree's entries, clusters and branches with their types. */
    private static void root(dev.stoker.root.RootInfo info, JsonGenerator g) throws IOException {
        g.writeStringField("format", "root");
        g.writeNumberField("bytes", info.bytes());
        g.writeStringField("rootVersion", info.rootVersion());
        g.writeStringField("compression", info.compression());
        g.writeArrayFieldStart("trees");
        for (dev.stoker.root.RootInfo.Tree t : info.trees()) {
            g.writeStartObject();
            g.writeStringField("name", t.path());
            g.writeStringField("class", t.className());
            g.writeNumberField("entries", t.entries());
            g.writeNumberField("clusters", t.clusters());
            g.writeArrayFieldStart("branches");
            for (dev.stoker.root.RootInfo.Branch b : t.branches()) {
                g.writeStartObject();
                g.writeStringField("name", b.name());
                g.writeStringField("type", b.type());
                g.writeStringField("dtype", b.dtype());
                if (b.ragged()) {
                    g.writeBooleanField("ragged", true);
                }
                if (b.baskets() >= 0) {
                    g.writeNumberField("baskets", b.baskets());
                    g.writeNumberField("bytes", b.bytes());
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeObjectFieldStart("notRead");
            for (var e : t.refused().entrySet()) {
                g.writeStringField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    private static void parquet(dev.stoker.parquet.ParquetInfo info, JsonGenerator g) throws IOException {
        g.writeStringField("format", "parquet");
        g.writeNumberField("rows", info.rows());
        g.writeNumberField("rowGroups", info.rowGroups());
        g.writeArrayFieldStart("columns");
        for (dev.stoker.parquet.ParquetInfo.ColumnInfo c : info.columns()) {
            g.writeStartObject();
            g.writeStringField("name", c.name());
            g.writeStringField("type", c.type());
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    private static void describe(Path p, DType rawType, boolean raw, JsonGenerator g, List<Distribution> found) throws IOException {
        String name = p.getFileName() == null ? p.toString() : p.getFileName().toString();
        String records = RecordSummary.format(p);
        if (records != null) {
            RecordSummary.describe(p, records, g);
        } else if (SqliteSummary.isSqlite(p)) {
            SqliteSummary.describe(p, g);
        } else if (name.endsWith(".npy")) {
            try (NpyArray a = Npy.read(p)) {
                g.writeStringField("format", "npy");
                npy(a, g);
            }
        } else if (name.endsWith(".npz")) {
            Map<String, NpyArray> arrays = Npy.readNpz(p);
            try {
                g.writeStringField("format", "npz");
                g.writeArrayFieldStart("arrays");
                for (Map.Entry<String, NpyArray> e : arrays.entrySet()) {
                    g.writeStartObject();
                    g.writeStringField("name", e.getKey());
                    npy(e.getValue(), g);
                    g.writeEndObject();
                }
                g.writeEndArray();
            } finally {
                Npy.closeAll(arrays);
            }
        } else if (name.endsWith(".pt") || name.endsWith(".pth") || name.endsWith(".safetensors")
                || Files.isRegularFile(p) && (dev.stoker.formats.tensors.TensorFile.isTorchSave(p)
                || dev.stoker.formats.tensors.TensorFile.looksLikeSafeTensors(p))) {
            try (dev.stoker.formats.tensors.TensorFile f = dev.stoker.formats.tensors.TensorFile.open(p)) {
                g.writeStringField("format", f.format());
                g.writeArrayFieldStart("tensors");
                for (Map.Entry<String, NpyArray> e : f.arrays().entrySet()) {
                    g.writeStartObject();
                    g.writeStringField("name", e.getKey());
                    tensor(e.getValue(), g);
                    g.writeEndObject();
                }
                g.writeEndArray();
            }
        } else if (name.endsWith(".h5") || name.endsWith(".hdf5") || name.endsWith(".hdf")) {
            if (!Files.exists(p)) {
                throw new NoSuchFileException(p.toString());
            }
            g.writeStringField("format", "hdf5");
            g.writeArrayFieldStart("datasets");
            for (dev.stoker.hdf5.Hdf5Dataset.Info d : dev.stoker.hdf5.Hdf5Dataset.describe(p)) {
                g.writeStartObject();
                g.writeStringField("path", d.path());
                g.writeStringField("dtype", d.dtype());
                g.writeArrayFieldStart("shape");
                for (long dim : d.shape()) {
                    g.writeNumber(dim);
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            g.writeEndArray();
        } else if (isParquet(name)) {
            parquet(dev.stoker.parquet.ParquetInfo.of(p), g);
        } else if (isRoot(name)) {
            if (!Files.exists(p)) {
                throw new NoSuchFileException(p.toString());
            }
            root(dev.stoker.root.RootInfo.of(p.toString()), g);
        } else if (isJsonl(name)) {
            if (!Files.exists(p)) {
                throw new NoSuchFileException(p.toString());
            }
            dev.stoker.cli.JsonlSummary j = dev.stoker.cli.JsonlSummary.of(p);
            g.writeStringField("format", "jsonl");
            g.writeNumberField("lines", j.lines);
            g.writeNumberField("bytes", j.bytes);
            g.writeObjectFieldStart("keys");
            for (var e : j.keys.entrySet()) {
                g.writeNumberField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeArrayFieldStart("errors");
            for (String e : j.errors) {
                g.writeString(e);
            }
            g.writeEndArray();
            if (j.errorCount > j.errors.size()) {
                g.writeNumberField("moreErrors", j.errorCount - j.errors.size());
            }
        } else if (Megatron.exists(p) || name.endsWith(".idx")) { // an index without its .bin: the .bin named
            try (Megatron m = Megatron.open(p)) {
                g.writeStringField("format", "megatron");
                g.writeStringField("dtype", numpy(m.dtype()));
                g.writeNumberField("sequences", m.sequences());
                g.writeNumberField("documents", m.documents());
                g.writeNumberField("tokens", m.tokens());
                if (found != null) {
                    long[] lengths = new long[Math.toIntExact(m.documents())];
                    for (int d = 0; d < lengths.length; d++) {
                        for (long i = m.documentStart(d); i < m.documentStart(d + 1); i++) {
                            lengths[d] += m.sequenceLength(i);
                        }
                    }
                    found.add(Distribution.histogram("documentTokens", "document lengths: " + p.getFileName(), "tokens per document", lengths, 40));
                }
            }
        } else if (name.endsWith(".bin")) {
            if (!Files.exists(p)) {
                throw new NoSuchFileException(p.toString());
            }
            try (TokenFile t = TokenFile.open(p, rawType, raw)) {
                g.writeStringField("format", "tokens");
                g.writeStringField("dtype", numpy(rawType));
                g.writeNumberField("tokens", t.length());
                g.writeArrayFieldStart("first");
                for (long i = 0; i < Math.min(8, t.length()); i++) {
                    g.writeNumber(t.token(i));
                }
                g.writeEndArray();
            }
        } else if (!Files.exists(p)) {
            throw new NoSuchFileException(p.toString());
        } else {
            throw new Main.BadDataException(p + ": unknown format (expected " + FORMATS + ")", null);
        }
    }

    static boolean isJsonl(String n) {
        String base = n.endsWith(".gz") || n.endsWith(".zst") ? n.substring(0, n.lastIndexOf('.')) : n;
        return base.endsWith(".jsonl") || base.endsWith(".ndjson");
    }

    static boolean isTar(Path p) {
        String n = p.getFileName() == null ? "" : p.getFileName().toString();
        return n.endsWith(".tar") || n.endsWith(".tar.gz") || n.endsWith(".tgz") || n.endsWith(".tar.zst")
                || n.endsWith(".tar.lz4");
    }

    private static void tar(dev.stoker.cli.TarSummary t, JsonGenerator g) throws IOException {
        g.writeStringField("format", "tar");
        g.writeNumberField("samples", t.samples);
        g.writeObjectFieldStart("fields");
        for (var e : t.fields.entrySet()) {
            g.writeNumberField(e.getKey(), e.getValue());
        }
        g.writeEndObject();
        g.writeArrayFieldStart("keys");
        for (String k : t.keys) {
            g.writeString(k);
        }
        g.writeEndArray();
        g.writeArrayFieldStart("warnings");
        for (String w : t.warnings) {
            g.writeString(w);
        }
        g.writeEndArray();
    }

    /** A tensor of a torch.save or safetensors file: its dtype (as torch and Stoker name it), shape and first values. */
    private static void tensor(NpyArray a, JsonGenerator g) throws IOException {
        g.writeStringField("dtype", a.dtype().label());
        g.writeArrayFieldStart("shape");
        for (long d : a.shape()) {
            g.writeNumber(d);
        }
        g.writeEndArray();
        first(a, g);
    }

    private static void npy(NpyArray a, JsonGenerator g) throws IOException {
        g.writeStringField("dtype", a.descr());
        g.writeArrayFieldStart("shape");
        for (long d : a.shape()) {
            g.writeNumber(d);
        }
        g.writeEndArray();
        g.writeBooleanField("fortranOrder", a.fortranOrder());
        g.writeStringField("version", a.version());
        first(a, g);
    }

    private static void first(NpyArray a, JsonGenerator g) throws IOException {
        g.writeArrayFieldStart("first");
        for (Object v : a.first(8)) {
            switch (v) {
                case Boolean b -> g.writeBoolean(b);
                case Double d -> g.writeNumber(d);
                case Long l -> g.writeNumber(l);
                default -> g.writeNumber(new java.math.BigInteger(v.toString()));
            }
        }
        g.writeEndArray();
    }

    static String numpy(DType d) {
        return d.numpy();
    }

    /** The text form: the JSON object's fields, one per line. */
    static final class Text {
        static String of(String json) throws IOException {
            StringBuilder b = new StringBuilder();
            try (var p = JSON.createParser(json)) {
                p.nextToken();
                String field = null;
                int depth = 0;
                StringBuilder value = new StringBuilder();
                for (var t = p.nextToken(); t != null; t = p.nextToken()) {
                    switch (t) {
                        case FIELD_NAME -> {
                            if (depth == 0) {
                                field = p.currentName();
                            } else {
                                value.append(p.currentName()).append('=');
                            }
                        }
                        case START_ARRAY, START_OBJECT -> {
                            depth++;
                            value.append(t == com.fasterxml.jackson.core.JsonToken.START_ARRAY ? "[" : "{");
                        }
                        case END_ARRAY, END_OBJECT -> {
                            depth--;
                            if (depth < 0) {
                                break;
                            }
                            trimComma(value);
                            value.append(t == com.fasterxml.jackson.core.JsonToken.END_ARRAY ? "]" : "}");
                            if (depth > 0) {
                                value.append(", ");
                            }
                        }
                        default -> {
                            value.append(p.getText());
                            if (depth > 0) {
                                value.append(", ");
                            }
                        }
                    }
                    if (depth == 0 && field != null && t != com.fasterxml.jackson.core.JsonToken.FIELD_NAME && value.length() > 0) {
                        b.append(String.format(Locale.ROOT, "%-13s %s%n", field + ":", value));
                        value.setLength(0);
                    }
                }
            }
            return b.toString().stripTrailing();
        }

        private static void trimComma(StringBuilder v) {
            if (v.length() >= 2 && v.charAt(v.length() - 2) == ',') {
                v.setLength(v.length() - 2);
            }
        }
    }
}
