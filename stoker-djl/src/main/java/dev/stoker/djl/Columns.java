package dev.stoker.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import dev.stoker.Batch;
import dev.stoker.DType;
import dev.stoker.Field;
import dev.stoker.Schema;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Which of a batch's fields become DJL's data and which its labels, and how one field becomes an
 * {@link NDArray} over the batch's own memory.
 */
final class Columns {
    /** Field names taken as labels when none are named. */
    static final List<String> LABEL_NAMES = List.of("label", "labels", "y", "target", "targets");

    private final int[] data;
    private final int[] labels;
    private final DataType[] types;
    private final Schema schema;

    private Columns(Schema schema, int[] data, int[] labels) {
        this.schema = schema;
        this.data = data;
        this.labels = labels;
        this.types = new DataType[schema.size()];
        for (int f : concat(data, labels)) {
            types[f] = dataType(schema.field(f));
        }
    }

    /**
     * The columns of {@code schema}: {@code labels} (or, when null, the fields named as in
     * {@link #LABEL_NAMES}) and {@code data} (or, when null, every other field, in schema order).
     */
    static Columns of(Schema schema, List<String> data, List<String> labels) {
        List<String> l = labels != null ? labels
                : schema.fields().stream().map(Field::name).filter(LABEL_NAMES::contains).toList();
        List<String> d = data != null ? data
                : schema.fields().stream().map(Field::name).filter(n -> !l.contains(n)).toList();
        if (d.isEmpty()) {
            throw new IllegalArgumentException("no data fields: " + schema + " has only labels " + l);
        }
        for (String n : d) {
            if (l.contains(n)) {
                throw new IllegalArgumentException("field '" + n + "' is named both as data and as a label");
            }
        }
        return new Columns(schema, indexes(schema, d), indexes(schema, l));
    }

    private static int[] indexes(Schema schema, List<String> names) {
        int[] out = new int[names.size()];
        for (int i = 0; i < out.length; i++) {
            String n = names.get(i);
            out[i] = schema.indexOf(n); // names the schema's fields when there is none such
            for (int j = 0; j < i; j++) {
                if (out[j] == out[i]) {
                    throw new IllegalArgumentException("field '" + n + "' is named twice");
                }
            }
        }
        return out;
    }

    /**
     * DJL's type for a field. Only the types every DJL engine makes an array of over memory it is
     * given: PyTorch's engine takes no other (a bfloat16 or unsigned 16-bit buffer would fail in
     * its native code, not with an exception).
     */
    static DataType dataType(Field f) {
        if (f.isVariable()) {
            throw new IllegalArgumentException("field '" + f.name() + "' is variable-length; DJL's arrays are "
                    + "rectangular: write it as a fixed-shape tensor (Field.tensor), padded, to hand it to DJL");
        }
        return switch (f.dtype()) {
            case FLOAT32 -> DataType.FLOAT32;
            case FLOAT64 -> DataType.FLOAT64;
            case FLOAT16 -> DataType.FLOAT16;
            case UINT8 -> DataType.UINT8;
            case INT8 -> DataType.INT8;
            case INT32 -> DataType.INT32;
            case INT64 -> DataType.INT64;
            case BOOL -> DataType.BOOLEAN;
            case INT16, UINT16, UINT32, UINT64, BFLOAT16 -> throw new IllegalArgumentException("field '" + f.name()
                    + "' is " + f.dtype().label() + ", which DJL's PyTorch engine cannot hold: write it as "
                    + widened(f.dtype()) + " (token datasets take the output type, e.g. TokenWindows' int32 or int64)");
        };
    }

    private static String widened(DType t) {
        return t == DType.BFLOAT16 ? "float32" : t == DType.INT16 || t == DType.UINT16 ? "int32" : "int64";
    }

    /** The batch's data fields as arrays of {@code manager} over the batch's memory. */
    NDList data(NDManager manager, Batch b) {
        return list(manager, b, data);
    }

    /** The batch's label fields as arrays of {@code manager} over the batch's memory. */
    NDList labels(NDManager manager, Batch b) {
        return list(manager, b, labels);
    }

    List<String> dataNames() {
        return names(data);
    }

    List<String> labelNames() {
        return names(labels);
    }

    private List<String> names(int[] fields) {
        List<String> out = new ArrayList<>(fields.length);
        for (int f : fields) {
            out.add(schema.field(f).name());
        }
        return out;
    }

    // NOTE [Zero-copy arrays]: NDManager.create over a direct ByteBuffer is, in DJL's PyTorch
    // engine, torch::from_blob over the buffer's address: the tensor reads the batch's memory in
    // place (on a GPU manager the engine copies it to the device instead). The address is the
    // buffer's start, whatever its position, so the buffer is a slice from byte 0 of the column,
    // exactly as long as the batch's rows (a longer one is cut by DJL with a warning per array).
    private NDList list(NDManager manager, Batch b, int[] fields) {
        NDList out = new NDList(fields.length);
        for (int f : fields) {
            long bytes = b.byteSize(f);
            NDArray a = manager.create(b.data(f).asSlice(0, bytes).asByteBuffer().order(ByteOrder.nativeOrder()),
                    new Shape(b.shape(f)), types[f]);
            a.setName(schema.field(f).name());
            out.add(a);
        }
        return out;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
