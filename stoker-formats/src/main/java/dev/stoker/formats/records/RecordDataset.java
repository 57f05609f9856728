package dev.stoker.formats.records;

import dev.stoker.CorruptRecordException;
import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A {@link RecordSource} as the loader reads it (NOTE [Records] there): one field per value of
 * the first record, structs flattened to {@code a.b}, each typed by that first record. Numbers
 * and arrays become tensors of their type and shape (a list of numbers of length one a scalar,
 * of length n a vector), strings, bytes and JSON documents variable-length bytes (UTF-8), and a
 * list the format declares ragged (Arrow's {@code list<int32>}) a {@link Field#ragged ragged} field
 * of its elements' type, which the loader can pad ({@link dev.stoker.Padding}). Every
 * record must match: a record whose field is missing or has another type or shape fails naming
 * the record, the field, and both. {@code fields} keeps only the named fields (dotted names for
 * struct members), so that a field the loader cannot batch (a list of images) can be left out.
 */
public final class RecordDataset implements DirectDataset, AutoCloseable {
    private final RecordSource source;
    private final Schema schema;
    /** Per field, the path of keys to its value in a record. */
    private final String[][] paths;
    private final Kind[] kinds;
    /** For a ragged field, its elements' type. */
    private final DType[] elementTypes;
    /** Per field, its path dotted. */
    private final String[] dotted;
    /** Every field's values are stored at the field's width, so a batch is copied column by column ({@link #readAll}). */
    private final boolean columnar;

    private enum Kind { TENSOR, LONG, DOUBLE, FLOAT, BOOL, TEXT, BYTES, LIST_TENSOR, LIST_BYTES, NUMBERS, RAGGED }

    public RecordDataset(RecordSource source, List<String> fields) throws IOException {
        this.source = source;
        if (source.size() == 0) {
            throw new IllegalArgumentException(source.name() + " holds no records");
        }
        Map<String, Object> first = source.get(0);
        List<String[]> ps = new ArrayList<>();
        List<Object> values = new ArrayList<>();
        flatten(new String[0], first, ps, values);
        Set<String> wanted = fields == null || fields.isEmpty() ? null : new HashSet<>(fields);
        List<Field> fs = new ArrayList<>();
        List<String[]> kept = new ArrayList<>();
        List<Kind> ks = new ArrayList<>();
        List<DType> ets = new ArrayList<>();
        Set<String> names = new HashSet<>();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < ps.size(); i++) {
            String dotted = String.join(".", ps.get(i));
            seen.add(dotted);
            if (wanted != null && !wanted.contains(dotted)) {
                continue;
            }
            String name = fieldName(dotted);
            if (!names.add(name)) {
                throw new IllegalArgumentException(source.name() + ": two fields are both named '" + name
                        + "' once their names are made field names; keep one of them with the source's fields option");
            }
            Object v = values.get(i);
            Kind k = kind(v, dotted);
            fs.add(switch (k) {
                case TENSOR -> Field.tensor(name, ((Tensor) v).dtype(), ((Tensor) v).shape());
                case LONG -> Field.scalar(name, DType.INT64);
                case DOUBLE -> Field.scalar(name, DType.FLOAT64);
                case FLOAT -> Field.scalar(name, DType.FLOAT32);
                case BOOL -> Field.scalar(name, DType.BOOL);
                case TEXT, BYTES, LIST_BYTES -> Field.bytes(name, Math.max(16, 2L * size(v)));
                case RAGGED -> Field.ragged(name, source.raggedType(dotted), Math.max(16, 2L * (v instanceof List<?> l ? l.size() : 1)
                        * source.raggedType(dotted).byteSize()));
                case LIST_TENSOR -> vector(name, ((Tensor) ((List<?>) v).get(0)).dtype(), ((List<?>) v).size());
                case NUMBERS -> vector(name, ((Numbers) v).dtype(), ((Numbers) v).size());
            });
            kept.add(ps.get(i));
            ks.add(k);
            ets.add(source.raggedType(dotted));
        }
        if (wanted != null) {
            for (String w : fields) {
                if (!seen.contains(w)) {
                    throw new IllegalArgumentException(source.name() + ": no field '" + w + "'; its records have "
                            + String.join(", ", seen));
                }
            }
        }
        if (fs.isEmpty()) {
            throw new IllegalArgumentException(source.name() + ": its first record has no fields");
        }
        this.schema = Schema.of(fs);
        this.paths = kept.toArray(String[][]::new);
        this.kinds = ks.toArray(Kind[]::new);
        this.elementTypes = ets.toArray(DType[]::new);
        this.dotted = new String[fs.size()];
        boolean c = true;
        for (int f = 0; f < fs.size(); f++) {
            Field field = fs.get(f);
            dotted[f] = String.join(".", paths[f]);
            c &= !field.isVariable() && source.fixedWidth(dotted[f]) == field.sampleBytes();
        }
        this.columnar = c;
    }

    private static Field vector(String name, DType dtype, int n) {
        return n == 1 ? Field.scalar(name, dtype) : Field.tensor(name, dtype, n);
    }

    private static long size(Object v) {
        return switch (v) {
            case String s -> s.length();
            case byte[] b -> b.length;
            case JsonText j -> j.text().length();
            case List<?> l when !l.isEmpty() -> size(l.get(0));
            default -> 16;
        };
    }

    private static void flatten(String[] prefix, Map<?, ?> m, List<String[]> paths, List<Object> values) {
        for (Map.Entry<?, ?> e : m.entrySet()) {
            String[] p = Arrays.copyOf(prefix, prefix.length + 1);
            p[prefix.length] = String.valueOf(e.getKey());
            if (e.getValue() instanceof Map<?, ?> inner) {
                flatten(p, inner, paths, values);
            } else {
                paths.add(p);
                values.add(e.getValue());
            }
        }
    }

    /** A record field's name as a batch field's: characters a field name cannot hold become '_'. */
    static String fieldName(String dotted) {
        StringBuilder b = new StringBuilder(dotted.length() + 1);
        for (int i = 0; i < dotted.length(); i++) {
            char c = dotted.charAt(i);
            boolean ok = c < 128 && (Character.isLetterOrDigit(c) || c == '_' || c == '.' || c == '-');
            b.append(ok ? c : '_');
        }
        if (b.isEmpty() || !(Character.isLetter(b.charAt(0)) || b.charAt(0) == '_')) {
            b.insert(0, '_');
        }
        return b.toString();
    }

    private Kind kind(Object v, String name) {
        if (source.raggedType(name) != null) {
            return Kind.RAGGED;
        }
        return switch (v) {
            case Tensor t -> Kind.TENSOR;
            case Numbers n when n.size() > 0 -> Kind.NUMBERS;
            case Long l -> Kind.LONG;
            case BigInteger b -> Kind.LONG;
            case Double d -> Kind.DOUBLE;
            case Float f -> Kind.FLOAT;
            case Boolean b -> Kind.BOOL;
            case String s -> Kind.TEXT;
            case JsonText j -> Kind.TEXT;
            case byte[] b -> Kind.BYTES;
            case List<?> l when !l.isEmpty() && l.get(0) instanceof Tensor t && t.shape().length == 0
                    && l.stream().allMatch(o -> o instanceof Tensor x && x.dtype() == t.dtype() && x.shape().length == 0) -> Kind.LIST_TENSOR;
            case List<?> l when l.size() == 1 && l.get(0) instanceof byte[] -> Kind.LIST_BYTES;
            case null -> throw new IllegalArgumentException(source.where(0) + ": field '" + name
                    + "' is null, so its type is unknown; batch the other fields with the source's fields option");
            default -> throw new IllegalArgumentException(source.where(0) + ": field '" + name + "' is " + describe(v)
                    + ", which the loader does not batch (stoker cat shows it); batch the other fields with the source's "
                    + "fields option");
        };
    }

    private static String describe(Object v) {
        return switch (v) {
            case null -> "null";
            case List<?> l -> l.isEmpty() ? "an empty list" : "a list of " + l.size() + " " + describe(l.get(0)) + " values";
            case byte[] b -> "bytes";
            case Tensor t -> t.shape().length == 0 ? t.dtype().label() : t.toString();
            case Numbers n -> n.toString();
            default -> "a " + v.getClass().getSimpleName();
        };
    }

    @Override
    public long size() {
        return source.size();
    }

    @Override
    public Schema schema() {
        return schema;
    }

    @Override
    public String name() {
        return source.name();
    }

    @Override
    public long fingerprint() {
        return source.fingerprint();
    }

    @Override
    public long shardsLeftOut() {
        return source.shardsLeftOut();
    }

    @Override
    public void read(long index, Row row) throws IOException {
        Map<String, Object> record = source.get(index);
        for (int f = 0; f < paths.length; f++) {
            Object v = RecordSource.lookup(record, paths[f]);
            Field field = schema.field(f);
            switch (kinds[f]) {
                case TENSOR -> {
                    if (!(v instanceof Tensor t) || t.dtype() != field.dtype() || !Arrays.equals(t.shape(), field.shape())) {
                        throw mismatch(index, f, v);
                    }
                    row.put(f, t.data());
                }
                case LONG -> row.putLong(f, 0, longOf(v, index, f));
                case DOUBLE -> {
                    if (!(v instanceof Double d)) {
                        throw mismatch(index, f, v);
                    }
                    row.putDouble(f, 0, d);
                }
                case FLOAT -> {
                    if (!(v instanceof Float x)) {
                        throw mismatch(index, f, v);
                    }
                    row.putFloat(f, 0, x);
                }
                case BOOL -> {
                    if (!(v instanceof Boolean b)) {
                        throw mismatch(index, f, v);
                    }
                    row.putByte(f, 0, (byte) (b ? 1 : 0));
                }
                case TEXT, BYTES, LIST_BYTES -> row.append(f, bytesOf(v, index, f));
                case RAGGED -> row.append(f, ragged(v, index, f));
                case LIST_TENSOR -> row.put(f, vectorBytes(v, index, f));
                case NUMBERS -> {
                    if (!(v instanceof Numbers n) || n.dtype() != field.dtype() || n.size() != field.elements()) {
                        throw mismatch(index, f, v);
                    }
                    row.put(f, n.data());
                }
            }
        }
    }

    /**
     * A whole batch column by column, when every field is stored at its width (an Arrow file's
     * fixed-width columns, an MDS dataset's fixed-size ones): each run of consecutive records one
     * copy per field, no record decoded.
     */
    @Override
    public boolean readAll(long[] indices, int from, int count, Row row) throws IOException {
        if (!columnar) {
            return false;
        }
        int j = 0;
        while (j < count) {
            int run = 1;
            while (j + run < count && indices[from + j + run] == indices[from + j] + run) {
                run++;
            }
            for (int f = 0; f < paths.length; f++) {
                long width = schema.field(f).sampleBytes();
                source.copyFixed(dotted[f], indices[from + j], run, row.column(f), row.offset(f) + j * width);
            }
            j += run;
        }
        return true;
    }

    /** Whether batches are copied column by column (for tests). */
    boolean columnar() {
        return columnar;
    }

    private byte[] bytesOf(Object v, long index, int f) throws CorruptRecordException {
        return switch (v) {
            case String s when kinds[f] == Kind.TEXT -> s.getBytes(StandardCharsets.UTF_8);
            case JsonText j when kinds[f] == Kind.TEXT -> j.text().getBytes(StandardCharsets.UTF_8);
            case byte[] b when kinds[f] == Kind.BYTES -> b;
            case List<?> l when kinds[f] == Kind.LIST_BYTES && l.size() == 1 && l.get(0) instanceof byte[] b -> b;
            case null, default -> throw mismatch(index, f, v);
        };
    }

    /** A ragged list's elements, their little-endian bytes one after the other. */
    private byte[] ragged(Object v, long index, int f) throws CorruptRecordException {
        if (v instanceof Numbers n && n.dtype() == elementTypes[f]) {
            return n.data();
        }
        if (!(v instanceof List<?> l)) {
            throw mismatch(index, f, v);
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (Object o : l) {
            if (!(o instanceof Tensor t) || t.shape().length != 0 || t.dtype() != elementTypes[f]) {
                throw mismatch(index, f, v);
            }
            out.writeBytes(t.data());
        }
        return out.toByteArray();
    }

    private long longOf(Object v, long index, int f) throws CorruptRecordException {
        if (v instanceof Long l) {
            return l;
        }
        if (v instanceof BigInteger b && b.bitLength() < 64) {
            return b.longValue();
        }
        if (v instanceof BigInteger) {
            throw new CorruptRecordException(source.where(index), -1, "field '" + String.join(".", paths[f]) + "' is " + v
                    + ", which does not fit the field's int64");
        }
        throw mismatch(index, f, v);
    }

    private byte[] vectorBytes(Object v, long index, int f) throws CorruptRecordException {
        Field field = schema.field(f);
        long n = field.elements();
        if (!(v instanceof List<?> l) || l.size() != n) {
            throw mismatch(index, f, v);
        }
        ByteBuffer b = ByteBuffer.allocate((int) (n * field.dtype().byteSize())).order(ByteOrder.LITTLE_ENDIAN);
        for (Object o : l) {
            switch (o) {
                case Tensor x when x.dtype() == field.dtype() && x.shape().length == 0 -> b.put(x.data());
                case null, default -> throw mismatch(index, f, v);
            }
        }
        return b.array();
    }

    private CorruptRecordException mismatch(long index, int f, Object v) {
        Field field = schema.field(f);
        String expected = field.isVariable() ? "bytes" : field.dtype().label() + Arrays.toString(field.shape());
        String found = v instanceof Tensor t ? t.toString() : describe(v);
        return new CorruptRecordException(source.where(index), -1, "field '" + String.join(".", paths[f]) + "' is " + found
                + " where the first record has " + expected + " (every record must match the first; batch the other fields with the "
                + "source's fields option, or see the records with stoker cat)");
    }

    @Override
    public void close() throws IOException {
        source.close();
    }
}
