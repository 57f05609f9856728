package dev.stoker.sources;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.Loader;
import dev.stoker.formats.io.Magic;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.npy.NpyArray;
import dev.stoker.formats.tensors.ArrayDataset;
import dev.stoker.formats.tensors.TensorFile;
import dev.stoker.sources.Schema.Format;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Named arrays as fields, the first dimension being the sample (source {@code arrays}): either
 * {@code files}, each field's file, or {@code path}, one {@code .pt} ({@code torch.save}),
 * {@code .safetensors} or {@code .npz} file whose named tensors are the fields. A field's file is
 * a {@code .npy} of any rank and dtype (C order), one tensor of a {@code .pt} or
 * {@code .safetensors}, or a raw file as {@code np.memmap} writes it, whose dtype and shape the
 * field gives ({@code {"path", "dtype", "shape"}}) or {@code properties} does: a JSON object of
 * {@code {"NAME": {"dtype": ..., "shape": [...]}}} as PolarBERT's {@code memmap_properties.json},
 * looked up by the field's name, then by the file's name without its extension. A structured
 * dtype there (a list of {@code [name, type]}) makes a field of each member, {@code FIELD.MEMBER}.
 * A field with {@code lengths} is ragged: sample {@code i} is the first {@code lengths[i]} rows of
 * the padded array's row {@code i}. Local paths, or http(s):// and s3:// URLs fetched whole
 * through {@code cache}.
 *
 * @param path       one file of named tensors (or null, with {@code files})
 * @param files      field name → its file (or empty, with {@code path})
 * @param properties a JSON file of dtypes and shapes for raw files
 */
public record NamedArrays(String path, @Format("files") Map<String, ArrayFile> files, @Format("file") String properties,
                          RemoteCache cache) implements SourceSpec {
    private static final Pattern FIELD = Pattern.compile("[A-Za-z_][A-Za-z0-9_.\\-]*");
    private static final ObjectMapper JSON = new ObjectMapper();

    public NamedArrays {
        files = files == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(files));
        for (var e : files.entrySet()) {
            if (!FIELD.matcher(e.getKey()).matches()) {
                throw new SpecException("files", "names fields: '" + e.getKey() + "' is no field name (letters, digits, _ . -, "
                        + "not starting with a digit)");
            }
            if (e.getValue() == null || e.getValue().path() == null || e.getValue().path().isEmpty()) {
                throw new SpecException("files", "gives field '" + e.getKey() + "' no path");
            }
        }
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /**
     * A field's file: a path, with the dtype and shape of a raw file (the first dimension may be
     * -1: as many samples as the file holds), and a lengths file for a ragged field.
     */
    public record ArrayFile(String path, String dtype, List<Long> shape, ArrayFile lengths) {
        @JsonCreator
        public ArrayFile {
            shape = shape == null ? null : List.copyOf(shape);
        }

        /** A file given by its path alone. */
        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        public static ArrayFile of(String path) {
            return new ArrayFile(path, null, null, null);
        }

        /** A path, or a JSON object {@code {"path", "dtype", "shape", "lengths"}}, as the command line gives it. */
        public static ArrayFile parse(String text) {
            if (!text.strip().startsWith("{")) {
                return of(text);
            }
            return Specs.value(text, ArrayFile.class, "files");
        }
    }

    /** The fields of the files {@code files}. */
    public static NamedArrays of(Map<String, ArrayFile> files) {
        return new NamedArrays(null, files, null, RemoteCache.DEFAULT);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        if ((path == null || path.isEmpty()) == files.isEmpty()) {
            throw SpecException.naming(null, "the arrays source takes either {path} (one .pt, .safetensors or .npz file whose "
                    + "tensors are the fields) or {files} (field name → file), one of the two");
        }
        return Recipe.open(kind(), r -> {
            List<String> locations = new ArrayList<>();
            if (path != null && !path.isEmpty()) {
                locations.add(path);
            }
            for (ArrayFile f : files.values()) {
                locations.add(f.path());
                if (f.lengths() != null) {
                    locations.add(f.lengths().path());
                }
            }
            if (properties != null) {
                locations.add(properties);
            }
            List<Path> local = r.hold(new LocalCopies(locations, cache)).paths(false);
            Map<String, Path> where = new LinkedHashMap<>();
            for (int i = 0; i < locations.size(); i++) {
                where.put(locations.get(i), local.get(i));
            }
            JsonNode props = properties == null ? null : properties(where.get(properties), properties);
            List<ArrayDataset.Column> columns = new ArrayList<>();
            if (path != null && !path.isEmpty()) {
                TensorFile f = r.hold(TensorFile.open(existing(where.get(path))));
                for (var e : f.arrays().entrySet()) {
                    columns.add(ArrayDataset.Column.tensor(fieldName(e.getKey(), where.get(path)), e.getValue()));
                }
            } else {
                for (var e : files.entrySet()) {
                    columns.addAll(columns(r, e.getKey(), e.getValue(), where, props));
                }
            }
            ArrayDataset data;
            try {
                data = new ArrayDataset(kind(), columns);
            } catch (IllegalArgumentException e) {
                throw new SpecException("files", e.getMessage()); // two fields of one name
            }
            r.base(() -> Loader.builder(data));
        });
    }

    /** A tensor's name as a field's: itself when it is one, else with what a field name cannot hold made {@code _}. */
    private static String fieldName(String tensor, Path file) {
        String n = tensor.isEmpty() ? stem(file) : tensor;
        n = n.replaceAll("[^A-Za-z0-9_.\\-]", "_");
        return FIELD.matcher(n).matches() ? n : "_" + n;
    }

    private static String stem(Path file) {
        String n = String.valueOf(file.getFileName());
        int dot = n.indexOf('.');
        return dot > 0 ? n.substring(0, dot) : n;
    }

    private static Path existing(Path p) throws NoSuchFileException {
        if (!Files.exists(p)) {
            throw new NoSuchFileException(p.toString());
        }
        return p;
    }

    private static JsonNode properties(Path p, String given) throws IOException {
        JsonNode n;
        try {
            n = JSON.readTree(existing(p).toFile());
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new CorruptShardException(given, -1, "not JSON: " + e.getOriginalMessage());
        }
        if (n == null || !n.isObject()) {
            throw new CorruptShardException(given, -1, "expected a JSON object of {\"NAME\": {\"dtype\": ..., \"shape\": [...]}}");
        }
        return n;
    }

    /** A field's columns: one, or one a member of a structured raw array. */
    private List<ArrayDataset.Column> columns(Recipe r, String field, ArrayFile f, Map<String, Path> where, JsonNode props)
            throws IOException {
        Path p = existing(where.get(f.path()));
        if (f.lengths() != null) {
            NpyArray values = single(r, p, f, field, props, true);
            Path lp = existing(where.get(f.lengths().path()));
            NpyArray lengths = single(r, lp, f.lengths(), null, props, true);
            return List.of(ArrayDataset.Column.ragged(field, values, lengths));
        }
        Layout raw = Magic.of(Magic.head(p)) == null ? rawLayout(p, f, field, props) : null;
        if (raw != null && raw.members != null) {
            NpyArray records = r.hold(Npy.raw(p, DType.UINT8, new long[] {raw.samples(p), raw.recordBytes}));
            List<ArrayDataset.Column> out = new ArrayList<>();
            for (Member m : raw.members) {
                out.add(ArrayDataset.Column.member(field + "." + m.name, records, m.offset, m.dtype, m.shape));
            }
            return out;
        }
        return List.of(ArrayDataset.Column.tensor(field, single(r, p, f, field, props, false)));
    }

    /** One array: a .npy, the one tensor of a .pt or .safetensors, or a raw file of a known dtype and shape. */
    private NpyArray single(Recipe r, Path p, ArrayFile f, String field, JsonNode props, boolean plain) throws IOException {
        byte[] head = Magic.head(p);
        Magic m = Magic.of(head);
        String name = String.valueOf(p.getFileName());
        if (m == Magic.NPY) {
            NpyArray a = r.hold(Npy.read(p));
            if (f.dtype() != null && Npy.dtype(f.dtype()) != a.dtype()
                    || f.shape() != null && !java.util.Arrays.equals(longs(f.shape()), a.shape())) {
                throw new CorruptShardException(p.toString(), -1, "its .npy header says " + a.descr() + " "
                        + java.util.Arrays.toString(a.shape()) + ", the spec says " + f.dtype() + " " + f.shape());
            }
            return a;
        }
        if (m == Magic.ZIP || m == Magic.TORCH_LEGACY || name.endsWith(".safetensors") || TensorFile.looksLikeSafeTensors(p)) {
            TensorFile t = r.hold(TensorFile.open(p));
            if (t.arrays().size() != 1) {
                throw new CorruptShardException(p.toString(), -1, "holds " + t.arrays().size() + " tensors " + t.arrays().keySet()
                        + " where one field's file holds one; give the file as the path to read each as a field");
            }
            return t.arrays().values().iterator().next();
        }
        if (m != null) {
            throw new CorruptShardException(p.toString(), 0, m.description() + ", not an array");
        }
        Layout raw = rawLayout(p, f, field, props);
        if (raw == null) {
            String how = "; give its dtype and shape ({\"path\": ..., \"dtype\": \"float32\", \"shape\": [N, ...]}) or a "
                    + "properties JSON naming them (as PolarBERT's memmap_properties.json)";
            throw new CorruptShardException(p.toString(), 0, name.endsWith(".npy")
                    ? "no .npy header (the magic \\x93NUMPY is missing): a raw array, as np.memmap writes one, whose dtype and "
                            + "shape are not known" + how
                    : "a raw array whose dtype and shape are not known" + how);
        }
        if (raw.members != null && plain) {
            throw new CorruptShardException(p.toString(), -1, "a structured array cannot be a ragged field's values or lengths");
        }
        return r.hold(Npy.raw(p, raw.dtype, raw.shape(p)));
    }

    private record Member(String name, DType dtype, long[] shape, long offset) {
    }

    /** A raw file's element type (or members and record size) and shape, the first dimension possibly -1. */
    private record Layout(DType dtype, List<Member> members, long recordBytes, long[] given, String file) {
        long itemBytes() {
            return members != null ? recordBytes : dtype.byteSize();
        }

        long samples(Path p) throws IOException {
            return shape(p)[0];
        }

        long[] shape(Path p) throws IOException {
            long[] s = given.clone();
            if (s.length > 0 && s[0] == -1) {
                long rest = itemBytes();
                for (int i = 1; i < s.length; i++) {
                    rest = Math.multiplyExact(rest, s[i]);
                }
                long size = Files.size(p);
                if (rest == 0 || size % rest != 0) {
                    throw new CorruptShardException(file, -1, "a file of " + size + " bytes holds no whole number of samples of "
                            + rest + " bytes (shape " + java.util.Arrays.toString(given) + ")");
                }
                s[0] = size / rest;
            }
            return s;
        }
    }

    /** What the spec or the properties say of a raw file; null when neither says. */
    private Layout rawLayout(Path p, ArrayFile f, String field, JsonNode props) throws CorruptShardException {
        JsonNode entry = null;
        String source = p.toString();
        if (props != null) {
            if (field != null && props.has(field)) {
                entry = props.get(field);
            } else if (props.has(stem(p))) {
                entry = props.get(stem(p));
            }
            if (entry != null) {
                source = properties;
            }
        }
        JsonNode dtypeNode = f.dtype() != null ? JSON.getNodeFactory().textNode(f.dtype()) : entry == null ? null : entry.get("dtype");
        JsonNode shapeNode = f.shape() != null ? JSON.valueToTree(f.shape()) : entry == null ? null : entry.get("shape");
        if (dtypeNode == null && shapeNode == null) {
            return null;
        }
        String what = entry != null && f.dtype() == null ? source + " (entry '" + (props.has(String.valueOf(field)) ? field : stem(p))
                + "')" : p.toString();
        if (dtypeNode == null || shapeNode == null || !shapeNode.isArray() || shapeNode.isEmpty()) {
            throw new CorruptShardException(what, -1, "a raw array needs both its dtype and its shape (a list, the first "
                    + "dimension the samples)");
        }
        long[] shape = new long[shapeNode.size()];
        for (int i = 0; i < shape.length; i++) {
            JsonNode d = shapeNode.get(i);
            if (!d.canConvertToExactIntegral() || d.asLong() < (i == 0 ? -1 : 0)) {
                throw new CorruptShardException(what, -1, "shape " + shapeNode + " must hold sizes >= 0 (the first may be -1: "
                        + "as many samples as the file holds)");
            }
            shape[i] = d.asLong();
        }
        try {
            if (dtypeNode.isTextual()) {
                return new Layout(Npy.dtype(dtypeNode.asText()), null, 0, shape, what);
            }
            if (dtypeNode.isArray()) {
                if (shape.length != 1) {
                    throw new CorruptShardException(what, -1, "a structured array of shape " + shapeNode
                            + ": one record a sample is read (shape [N])");
                }
                List<Member> members = new ArrayList<>();
                long offset = 0;
                for (JsonNode m : dtypeNode) {
                    if (!m.isArray() || m.size() < 2 || !m.get(0).isTextual() || !m.get(1).isTextual()) {
                        throw new CorruptShardException(what, -1, "a structured dtype's member must be [name, type] or [name, type, "
                                + "shape]: " + m + " (nested records are not read)");
                    }
                    String type = m.get(1).asText();
                    long[] mshape = new long[m.size() > 2 ? m.get(2).size() : 0];
                    for (int i = 0; i < mshape.length; i++) {
                        mshape[i] = m.get(2).get(i).asLong();
                    }
                    long elements = 1;
                    for (long d : mshape) {
                        elements *= d;
                    }
                    if (m.get(0).asText().isEmpty() && type.matches("\\|V\\d+")) {
                        offset += Long.parseLong(type.substring(2)); // numpy's padding of an aligned record
                        continue;
                    }
                    DType d = Npy.dtype(type);
                    String name = m.get(0).asText();
                    if (!FIELD.matcher(name).matches()) {
                        throw new CorruptShardException(what, -1, "member '" + name + "' cannot be named as a field");
                    }
                    members.add(new Member(name, d, mshape, offset));
                    offset += elements * d.byteSize();
                }
                if (members.isEmpty()) {
                    throw new CorruptShardException(what, -1, "a structured dtype without members");
                }
                return new Layout(null, members, offset, shape, what);
            }
        } catch (IllegalArgumentException e) {
            throw new CorruptShardException(what, -1, e.getMessage());
        }
        throw new CorruptShardException(what, -1, "dtype " + dtypeNode + " is neither a type name nor a structured dtype's members");
    }

    private static long[] longs(List<Long> l) {
        return l.stream().mapToLong(Long::longValue).toArray();
    }
}
