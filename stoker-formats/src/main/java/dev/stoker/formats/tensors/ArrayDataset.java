package dev.stoker.formats.tensors;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.npy.NpyArray;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Named arrays as columns: sample {@code i} is row {@code i} (the first dimension) of each array,
 * written straight from the array's memory (a mapped {@code .npy} or raw file, a tensor of a
 * {@code torch.save} or safetensors file) into the batch. A whole batch of consecutive samples is
 * one copy per column ({@link #readAll}). A padded array with a lengths array is a ragged field:
 * sample {@code i} is the first {@code lengths[i]} rows of {@code padded[i]}. A member of a
 * structured (record) array is a column whose samples lie a record apart. The arrays belong to
 * the caller, who closes them after the dataset.
 */
public final class ArrayDataset implements DirectDataset {

    /** One field: where its samples lie and what each holds. Made by {@link #tensor}, {@link #member} and {@link #ragged}. */
    public static final class Column {
        private final String field;
        private final NpyArray array;
        private final DType dtype;
        private final long[] sampleShape;
        private final long offset;
        private final long recordBytes;
        private final long sampleBytes;
        private final NpyArray lengths;

        private Column(String field, NpyArray array, DType dtype, long[] sampleShape, long offset, long recordBytes,
                       long sampleBytes, NpyArray lengths) {
            this.field = field;
            this.array = array;
            this.dtype = dtype;
            this.sampleShape = sampleShape;
            this.offset = offset;
            this.recordBytes = recordBytes;
            this.sampleBytes = sampleBytes;
            this.lengths = lengths;
        }

        /** Field {@code field}: row {@code i} of {@code array} (of rank 1 and more; C order). */
        public static Column tensor(String field, NpyArray array) throws CorruptShardException {
            long[] shape = checked(array);
            long[] sample = Arrays.copyOfRange(shape, 1, shape.length);
            long bytes = elements(sample) * array.dtype().byteSize();
            return new Column(field, array, array.dtype(), sample, 0, bytes, bytes, null);
        }

        /**
         * Field {@code field}: a member of a structured array, {@code records} being its bytes as
         * uint8 {@code [N, recordBytes]}, the member {@code dtype[shape]} at byte {@code offset} of each record.
         */
        public static Column member(String field, NpyArray records, long offset, DType dtype, long[] shape) throws CorruptShardException {
            long[] all = checked(records);
            if (all.length != 2 || records.dtype() != DType.UINT8) {
                throw new IllegalArgumentException(records.name() + ": records must be uint8 [N, bytes per record]");
            }
            long bytes = elements(shape) * dtype.byteSize();
            if (offset < 0 || offset + bytes > all[1]) {
                throw new CorruptShardException(records.name(), -1, "member '" + field + "' (" + bytes + " bytes at byte " + offset
                        + " of each record) lies outside its " + all[1] + "-byte records");
            }
            return new Column(field, records, dtype, shape.clone(), offset, all[1], bytes, null);
        }

        /**
         * A ragged field: {@code padded} is {@code [N, L, ...]}, {@code lengths} the {@code N}
         * integers saying how many of each sample's {@code L} rows it holds.
         */
        public static Column ragged(String field, NpyArray padded, NpyArray lengths) throws CorruptShardException {
            long[] shape = checked(padded);
            if (shape.length < 2) {
                throw new CorruptShardException(padded.name(), -1, "a ragged field's padded array has a sample axis and a "
                        + "padded axis ([N, L, ...]); this one has shape " + Arrays.toString(shape));
            }
            if (padded.byteOrder() == ByteOrder.BIG_ENDIAN && padded.dtype().byteSize() > 1) {
                throw new CorruptShardException(padded.name(), -1, "a big-endian array read as a ragged field; save it "
                        + "little-endian (numpy: a.astype(a.dtype.newbyteorder('<')))");
            }
            long[] lshape = checked(lengths);
            if (lshape.length != 1 || lshape[0] != shape[0]) {
                throw new CorruptShardException(lengths.name(), -1, "the lengths of ragged field '" + field + "' must be one "
                        + "integer a sample, shape [" + shape[0] + "], got " + Arrays.toString(lshape));
            }
            switch (lengths.dtype()) {
                case INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64 -> { }
                default -> throw new CorruptShardException(lengths.name(), -1, "the lengths of ragged field '" + field
                        + "' must be integers, got " + lengths.dtype().label());
            }
            long[] row = Arrays.copyOfRange(shape, 2, shape.length);
            long rowBytes = elements(row) * padded.dtype().byteSize();
            long record = rowBytes * shape[1];
            return new Column(field, padded, padded.dtype(), new long[] {shape[1]}, 0, record, rowBytes, lengths);
        }

        private static long[] checked(NpyArray a) throws CorruptShardException {
            long[] shape = a.shape();
            if (shape.length == 0) {
                throw new CorruptShardException(a.name(), -1, "a 0-d array has no sample axis (its first dimension)");
            }
            if (a.fortranOrder()) {
                throw new CorruptShardException(a.name(), -1, "a Fortran-order array (fortran_order: True): samples are rows "
                        + "of a C-order array; numpy: np.save(f, np.ascontiguousarray(a))");
            }
            return shape;
        }

        public String field() {
            return field;
        }

        /** Samples: the first dimension. */
        public long samples() {
            return array.shape()[0];
        }

        /** The file (or file and entry) the field is read from. */
        public String source() {
            return array.name();
        }

        boolean isRagged() {
            return lengths != null;
        }

        Field schemaField() {
            return isRagged() ? Field.ragged(field, dtype, sampleBytes * Math.max(1, sampleShape[0] / 2))
                    : Field.tensor(field, dtype, sampleShape);
        }
    }

    private final String name;
    private final Column[] columns;
    private final Schema schema;
    private final long size;
    private final boolean allTensors;
    private final long fingerprint;

    /** The columns as fields, in their order; all must have the same number of samples. */
    public ArrayDataset(String name, List<Column> columns) throws CorruptShardException {
        if (columns.isEmpty()) {
            throw new IllegalArgumentException("arrays: no fields");
        }
        this.name = name;
        this.columns = columns.toArray(Column[]::new);
        Column first = columns.get(0);
        List<Field> fields = new ArrayList<>();
        boolean tensors = true;
        long fp = columns.size();
        for (Column c : columns) {
            if (c.samples() != first.samples()) {
                throw new CorruptShardException(c.source(), -1, "field '" + c.field + "' has " + c.samples() + " samples (its "
                        + "first dimension) where field '" + first.field + "' (" + first.source() + ") has " + first.samples()
                        + ": every field needs one row a sample");
            }
            fields.add(c.schemaField());
            tensors &= !c.isRagged();
            fp = Fingerprints.and(fp, c.field.hashCode());
            fp = Fingerprints.and(fp, Arrays.hashCode(c.array.shape()));
            fp = Fingerprints.and(fp, Fingerprints.ends(c.array.segment()));
            if (c.lengths != null) {
                fp = Fingerprints.and(fp, Fingerprints.ends(c.lengths.segment()));
            }
        }
        this.schema = Schema.of(fields);
        this.size = first.samples();
        this.allTensors = tensors;
        this.fingerprint = fp;
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
        return name;
    }

    @Override
    public long fingerprint() {
        return fingerprint;
    }

    @Override
    public void read(long index, Row row) throws CorruptShardException {
        for (int f = 0; f < columns.length; f++) {
            Column c = columns[f];
            MemorySegment data = c.array.segment();
            long at = index * c.recordBytes + c.offset;
            if (c.lengths != null) {
                long n = c.lengths.getLong(index);
                long max = c.sampleShape[0];
                if (n < 0 || n > max) {
                    throw new CorruptShardException(c.lengths.name(), -1, "sample " + index + " of ragged field '" + c.field
                            + "' has length " + n + ", its padded array " + c.array.name() + " holds " + max + " rows a sample");
                }
                row.append(f, data, at, n * c.sampleBytes);
            } else {
                row.copy(f, data, at, c.sampleBytes);
                if (swaps(c)) {
                    swap(row.column(f), row.offset(f), c.sampleBytes, c.dtype.byteSize());
                }
            }
        }
    }

    /**
     * Consecutive indices are copied as one run per column: a sequential order's batch is one
     * copy a field; a shuffled batch a copy a sample.
     */
    @Override
    public boolean readAll(long[] indices, int from, int count, Row row) {
        if (!allTensors) {
            return false;
        }
        for (int f = 0; f < columns.length; f++) {
            Column c = columns[f];
            MemorySegment data = c.array.segment();
            MemorySegment dst = row.column(f);
            long base = row.offset(f);
            boolean packed = c.recordBytes == c.sampleBytes;
            int j = 0;
            while (j < count) {
                long start = indices[from + j];
                int run = 1;
                if (packed) {
                    while (j + run < count && indices[from + j + run] == start + run) {
                        run++;
                    }
                    MemorySegment.copy(data, start * c.recordBytes, dst, base + j * c.sampleBytes, run * c.sampleBytes);
                } else {
                    MemorySegment.copy(data, start * c.recordBytes + c.offset, dst, base + j * c.sampleBytes, c.sampleBytes);
                }
                j += run;
            }
            if (swaps(c)) {
                swap(dst, base, count * c.sampleBytes, c.dtype.byteSize());
            }
        }
        return true;
    }

    private static boolean swaps(Column c) {
        return c.array.byteOrder() == ByteOrder.BIG_ENDIAN && c.dtype.byteSize() > 1 && c.offset == 0 && c.array.dtype() == c.dtype;
    }

    /** Reverses the bytes of each {@code size}-byte element of {@code bytes} bytes at {@code at}: big-endian to little. */
    private static void swap(MemorySegment s, long at, long bytes, int size) {
        switch (size) {
            case 2 -> {
                var be = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
                var le = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
                for (long i = at; i < at + bytes; i += 2) {
                    s.set(le, i, s.get(be, i));
                }
            }
            case 4 -> {
                var be = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
                var le = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
                for (long i = at; i < at + bytes; i += 4) {
                    s.set(le, i, s.get(be, i));
                }
            }
            case 8 -> {
                var be = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
                var le = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
                for (long i = at; i < at + bytes; i += 8) {
                    s.set(le, i, s.get(be, i));
                }
            }
            default -> { }
        }
    }

    private static long elements(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }
}
