package dev.stoker.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.stoker.formats.arrow.ArrowFile;
import dev.stoker.formats.io.ArrowFiles;
import dev.stoker.formats.litdata.LitDataset;
import dev.stoker.formats.mds.MdsDataset;
import dev.stoker.formats.records.JsonText;
import dev.stoker.formats.records.Numbers;
import dev.stoker.formats.records.RecordSource;
import dev.stoker.formats.records.Tensor;
import dev.stoker.formats.riegeli.ArrayRecordFile;
import dev.stoker.formats.tfrecord.TfRecordFile;
import dev.stoker.formats.tfrecord.TfRecordFile;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * {@code stoker inspect} for other loaders' formats: an MDS or LitData folder (its
 * {@code index.json}), a saved Hugging Face dataset or {@code .arrow} files, TFRecord and
 * ArrayRecord files: the format, the records, and the first record's fields with their types.
 */
final class RecordSummary {
    private RecordSummary() {
    }

    /** The format of {@code p} if it is one of these, else null. */
    static String format(Path p) throws IOException {
        String name = p.getFileName() == null ? p.toString() : p.getFileName().toString();
        if (Files.isDirectory(p)) {
            if (Files.isRegularFile(p.resolve("state.json")) || Files.isRegularFile(p.resolve("dataset_dict.json"))) {
                return "arrow";
            }
            if (Files.isRegularFile(p.resolve("index.json"))) {
                String index = Files.readString(p.resolve("index.json"));
                return index.contains("\"chunks\"") && index.contains("\"config\"") ? "litdata" : "mds";
            }
            return null;
        }
        if (name.endsWith(".arrow")) {
            return "arrow";
        }
        if (name.contains(".tfrecord") || name.endsWith(".tfrecords")) {
            return "tfrecord";
        }
        if (name.contains("array_record") || name.endsWith(".arrayrecord")) {
            return "arrayrecord";
        }
        return null;
    }

    /** The records of {@code p}, of {@code format}: the caller closes them. */
    static RecordSource open(Path p, String format) throws IOException {
        return switch (format) {
            case "mds" -> MdsDataset.open(p);
            case "litdata" -> LitDataset.open(p, 1, null);
            case "arrow" -> {
                List<RecordSource> parts = new ArrayList<>();
                try {
                    for (Path f : ArrowFiles.of(p)) {
                        parts.add(ArrowFile.open(f));
                    }
                } catch (IOException | RuntimeException e) {
                    for (RecordSource opened : parts) {
                        try {
                            opened.close();
                        } catch (IOException suppressed) {
                            e.addSuppressed(suppressed);
                        }
                    }
                    throw e;
                }
                yield RecordSource.concat(parts);
            }
            case "tfrecord" -> TfRecordFile.open(p, TfRecordFile.Compression.AUTO, TfRecordFile.Decode.EXAMPLE);
            default -> ArrayRecordFile.open(p, TfRecordFile.Decode.RAW);
        };
    }

    /** Describes {@code p}, of {@code format}, into {@code g}'s open object. */
    static void describe(Path p, String format, JsonGenerator g) throws IOException {
        g.writeStringField("format", format);
        try (RecordSource all = open(p, format)) {
            switch (all) {
                case MdsDataset d -> {
                    g.writeNumberField("shards", d.files().size());
                    g.writeArrayFieldStart("columns");
                    for (MdsDataset.Column c : d.columns()) {
                        g.writeString(c.name() + ": " + c.encoding());
                    }
                    g.writeEndArray();
                }
                case LitDataset d -> g.writeNumberField("chunks", d.files().size());
                default -> {
                }
            }
            if (format.equals("arrow")) {
                g.writeNumberField("files", ArrowFiles.of(p).size());
                try (ArrowFile first = ArrowFile.open(ArrowFiles.of(p).get(0))) {
                    String hf = first.metadata().get("huggingface");
                    if (hf != null) {
                        g.writeFieldName("huggingface");
                        g.writeRawValue(hf);
                    }
                }
            }
            g.writeNumberField("records", all.size());
            if (all.size() > 0) {
                g.writeObjectFieldStart("fields");
                for (Map.Entry<String, Object> e : all.get(0).entrySet()) {
                    g.writeStringField(e.getKey(), type(e.getValue()));
                }
                g.writeEndObject();
            }
        }
    }

    /** {@code stoker ls}'s lines for {@code p}: each record's index, a tab, and its fields sorted. */
    static void list(Path p, String format, Appendable out) throws IOException {
        try (RecordSource all = open(p, format)) {
            for (long i = 0; i < all.size(); i++) {
                out.append(Long.toString(i)).append('\t').append(String.join(",", new java.util.TreeSet<>(all.get(i).keySet())))
                        .append('\n');
            }
        }
    }

    /** A value's type as a short name: {@code float32[3, 4]}, {@code list<int64>}, {@code struct{a: int64}}. */
    static String type(Object v) {
        return switch (v) {
            case null -> "null";
            case Tensor t -> t.shape().length == 0 ? t.dtype().label() : t.dtype().label() + Arrays.toString(t.shape());
            case Numbers n -> "list<" + n.dtype().label() + ">";
            case String s -> "string";
            case byte[] b -> "bytes";
            case JsonText j -> "json";
            case Boolean b -> "bool";
            case Long l -> "int64";
            case BigInteger b -> "int";
            case Double d -> "float64";
            case Float f -> "float32";
            case List<?> l -> "list<" + (l.isEmpty() ? "?" : type(l.get(0))) + ">";
            case Map<?, ?> m -> {
                List<String> parts = new ArrayList<>();
                m.forEach((k, x) -> parts.add(k + ": " + type(x)));
                yield "struct{" + String.join(", ", parts) + "}";
            }
            default -> v.getClass().getSimpleName();
        };
    }
}
