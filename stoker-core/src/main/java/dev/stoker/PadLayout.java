package dev.stoker;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link Padding} applied to a source's schema: the schema the batches have, and how a
 * {@link Row} writes a source field's values into it.
 *
 * <p>NOTE [Padding]: a dataset writes the fields of its own schema by their numbers there; the
 * batch has the padded schema. The row maps each source field to its batch column
 * ({@link #target}): a field that is not padded to its own column (tensor or variable, as before),
 * a padded ragged field to a group ({@link #group}): one tensor column {@code [N, F]} (F = 1 for a
 * padded field, the stack's fields for a stack), written in place. A ragged field's appends come
 * as runs of little-endian values; the row counts each field's values so far ({@code counts}), and
 * a run goes to entries {@code count, count + 1, ...} of the sample's tensor, up to {@code N}:
 * beyond it the values are only counted, so a long sample costs no memory. A padded field is copied
 * as it is (one copy a run); a stack's field is feature {@code j} of each entry, so its values are
 * written {@code F} apart, each converted to the stack's dtype. Only when the row ends
 * ({@link #finish}) is the length known: the stack's fields are checked to agree, the entries from
 * the length to {@code N} filled with the pad value (the buffer is reused: they hold an earlier
 * batch's bytes), and the lengths and mask written. Nothing is allocated per sample or batch; the
 * counts live in the row, the truncation counters are {@link LongAdder}s touched only by a sample
 * that was cut. Samples are padded where they are written, so order, worker count and resume are
 * untouched by it.
 */
final class PadLayout {
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    final Schema source;
    final Schema output;
    /** Each source field's batch column (a padded one's: its group's). */
    final int[] target;
    /** Each source field's group, or -1. */
    final int[] group;
    /** Each source field's feature within its group. */
    final int[] feature;

    // the groups: a padded field (one member) or a stack
    final int[] out;
    final long[] length;
    final int[] features;
    final DType[] type;
    final int[][] members;
    final int[] lengthsField;
    final int[] maskField;
    final long[] padBits;
    final String[] names;

    final LongAdder truncatedSamples = new LongAdder();
    final LongAdder droppedValues = new LongAdder();

    PadLayout(Padding padding, Schema source, String dataset) {
        this.source = source;
        int n = source.size();
        this.target = new int[n];
        this.group = new int[n];
        this.feature = new int[n];
        Arrays.fill(group, -1);
        Set<String> usedGlobs = new HashSet<>();
        // which stack each source field belongs to
        String[] stackOf = new String[n];
        for (var s : padding.stacks().entrySet()) {
            for (String member : s.getValue()) {
                int i = indexOf(source, member);
                if (i < 0) {
                    throw new IllegalArgumentException("stack '" + s.getKey() + "': " + dataset + " has no field '" + member
                            + "'; its ragged fields: " + raggedNames(source));
                }
                if (!source.field(i).isRagged()) {
                    throw new IllegalArgumentException("stack '" + s.getKey() + "': field '" + member + "' of " + dataset
                            + " is " + describe(source.field(i)) + ", not a ragged list of numbers; its ragged fields: "
                            + raggedNames(source));
                }
                if (stackOf[i] != null) {
                    throw new IllegalArgumentException("field '" + member + "' is in two stacks: '" + stackOf[i] + "' and '"
                            + s.getKey() + "'");
                }
                stackOf[i] = s.getKey();
            }
        }
        List<Field> fields = new ArrayList<>();
        List<Integer> outs = new ArrayList<>();
        List<Long> lengths = new ArrayList<>();
        List<Integer> feats = new ArrayList<>();
        List<DType> types = new ArrayList<>();
        List<int[]> mems = new ArrayList<>();
        List<Integer> lens = new ArrayList<>();
        List<Integer> masks = new ArrayList<>();
        List<String> groupNames = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Field f = source.field(i);
            String stack = stackOf[i];
            if (stack != null) {
                List<String> ms = padding.stacks().get(stack);
                if (!ms.get(0).equals(f.name())) {
                    continue; // placed with its stack's first field
                }
                int len = padding.lengthOf(stack);
                if (len < 0) {
                    throw new IllegalArgumentException("stack '" + stack + "' needs a length: a pad glob that names it ('"
                            + stack + "': N)");
                }
                markGlobs(padding, stack, usedGlobs);
                int[] idx = new int[ms.size()];
                for (int j = 0; j < idx.length; j++) {
                    idx[j] = indexOf(source, ms.get(j));
                }
                int g = mems.size();
                for (int j = 0; j < idx.length; j++) {
                    group[idx[j]] = g;
                    feature[idx[j]] = j;
                }
                DType t = padding.stackType();
                addGroup(fields, stack, Field.tensor(stack, t, len, idx.length), padding, outs, lens, masks, len);
                lengths.add((long) len);
                feats.add(idx.length);
                types.add(t);
                mems.add(idx);
                groupNames.add("stack '" + stack + "'");
                continue;
            }
            int len = f.isRagged() ? padding.lengthOf(f.name()) : -1;
            if (len < 0) {
                target[i] = fields.size();
                fields.add(f);
                continue;
            }
            markGlobs(padding, f.name(), usedGlobs);
            int g = mems.size();
            group[i] = g;
            addGroup(fields, f.name(), Field.tensor(f.name(), f.dtype(), len), padding, outs, lens, masks, len);
            lengths.add((long) len);
            feats.add(1);
            types.add(f.dtype());
            mems.add(new int[] {i});
            groupNames.add("field '" + f.name() + "'");
        }
        for (String glob : padding.pads().keySet()) {
            if (!usedGlobs.contains(glob)) {
                throw new IllegalArgumentException("pad '" + glob + "' names no ragged field or stack of " + dataset
                        + "; its ragged fields: " + raggedNames(source)
                        + (padding.stacks().isEmpty() ? "" : "; the stacks: " + padding.stacks().keySet()
                        + " (a stacked field takes its stack's length)"));
            }
        }
        Set<String> seen = new HashSet<>();
        for (Field f : fields) {
            if (!seen.add(f.name())) {
                throw new IllegalArgumentException("padding " + dataset + " makes two fields named '" + f.name()
                        + "' (a stack's name, or a _len or _mask field, is already a field of the source)");
            }
        }
        this.output = Schema.of(fields);
        this.out = outs.stream().mapToInt(Integer::intValue).toArray();
        this.length = lengths.stream().mapToLong(Long::longValue).toArray();
        this.features = feats.stream().mapToInt(Integer::intValue).toArray();
        this.type = types.toArray(new DType[0]);
        this.members = mems.toArray(new int[0][]);
        this.lengthsField = lens.stream().mapToInt(Integer::intValue).toArray();
        this.maskField = masks.stream().mapToInt(Integer::intValue).toArray();
        this.names = groupNames.toArray(new String[0]);
        this.padBits = new long[type.length];
        for (int g = 0; g < type.length; g++) {
            padBits[g] = bits(type[g], padding.value());
            for (int m : members[g]) {
                target[m] = out[g];
            }
        }
    }

    private static void addGroup(List<Field> fields, String name, Field tensor, Padding padding, List<Integer> outs,
                                 List<Integer> lens, List<Integer> masks, int len) {
        outs.add(fields.size());
        fields.add(tensor);
        if (padding.lengths()) {
            lens.add(fields.size());
            fields.add(Field.scalar(Padding.lengthsName(name), DType.INT64));
        } else {
            lens.add(-1);
        }
        if (padding.mask()) {
            masks.add(fields.size());
            fields.add(Field.tensor(Padding.maskName(name), DType.BOOL, len));
        } else {
            masks.add(-1);
        }
    }

    private static void markGlobs(Padding padding, String name, Set<String> used) {
        for (String glob : padding.pads().keySet()) {
            if (Padding.matches(glob, name)) {
                used.add(glob);
                return;
            }
        }
    }

    private static int indexOf(Schema schema, String name) {
        for (int i = 0; i < schema.size(); i++) {
            if (schema.field(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    private static String raggedNames(Schema schema) {
        List<String> names = schema.fields().stream().filter(Field::isRagged).map(Field::name).toList();
        return names.isEmpty() ? "none" : String.join(", ", names);
    }

    private static String describe(Field f) {
        return f.isVariable() ? "bytes" : f.dtype().label() + Arrays.toString(f.shape());
    }

    /** The pad value as the little-endian bits of {@code t}. */
    static long bits(DType t, double v) {
        return switch (t) {
            case BOOL -> v != 0 ? 1 : 0;
            case INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64 -> (long) v;
            case FLOAT16 -> Float.floatToFloat16((float) v) & 0xffffL;
            case BFLOAT16 -> (Float.floatToRawIntBits((float) v) >>> 16) & 0xffffL;
            case FLOAT32 -> Float.floatToRawIntBits((float) v) & 0xffffffffL;
            case FLOAT64 -> Double.doubleToRawLongBits(v);
        };
    }

    /** Whether source field {@code f} is padded or stacked. */
    boolean padded(int f) {
        return group[f] >= 0;
    }

    /**
     * Appends {@code bytes} bytes of values of source field {@code f} (the sample's
     * {@code counts[f]}-th value on) to row {@code row} of {@code batch}.
     */
    void append(Batch batch, int row, long[] counts, int f, MemorySegment src, long srcOffset, long bytes) {
        int g = group[f];
        DType in = source.field(f).dtype();
        int inSize = in.byteSize();
        if (bytes % inSize != 0) {
            throw new IllegalArgumentException("field '" + source.field(f).name() + "' is a list of " + in.label()
                    + ": an append must hold whole values, got " + bytes + " bytes");
        }
        long values = bytes / inSize;
        long have = counts[f];
        counts[f] = have + values;
        long take = Math.min(values, length[g] - have);
        if (take <= 0) {
            return;
        }
        int o = out[g];
        MemorySegment col = batch.column(o);
        long base = batch.rowOffset(o, row);
        int fs = features[g];
        DType t = type[g];
        if (fs == 1 && t == in) {
            MemorySegment.copy(src, srcOffset, col, base + have * inSize, take * inSize);
            return;
        }
        int outSize = t.byteSize();
        long stride = (long) fs * outSize;
        long at = base + have * stride + (long) feature[f] * outSize;
        if (t == DType.FLOAT32 && in == DType.FLOAT32) {
            for (long k = 0; k < take; k++) {
                col.set(FLOAT, at + k * stride, src.get(FLOAT, srcOffset + 4 * k));
            }
        } else if (integral(t) && integral(in)) {
            for (long k = 0; k < take; k++) {
                putLong(col, at + k * stride, t, getLong(src, srcOffset + k * inSize, in));
            }
        } else {
            for (long k = 0; k < take; k++) {
                putDouble(col, at + k * stride, t, getDouble(src, srcOffset + k * inSize, in));
            }
        }
    }

    /**
     * Appends {@code entries} entries of {@code fields} held entry by entry (NOTE [Entry-major] in
     * {@link Row}) with one copy, when they are exactly a float32 stack's fields in its order and
     * none of them has been appended to on its own in this row; false otherwise, having written nothing.
     */
    boolean appendEntries(Batch batch, int row, long[] counts, int[] fields, MemorySegment src, long srcOffset,
                          long entries) {
        int g = group[fields[0]];
        if (g < 0 || type[g] != DType.FLOAT32 || !Arrays.equals(members[g], fields)) {
            return false;
        }
        long have = counts[fields[0]];
        for (int m : fields) {
            if (counts[m] != have) {
                return false;
            }
        }
        for (int m : fields) {
            counts[m] = have + entries;
        }
        long take = Math.min(entries, length[g] - have);
        if (take > 0) {
            int o = out[g];
            long entry = 4L * fields.length;
            MemorySegment.copy(src, srcOffset, batch.column(o), batch.rowOffset(o, row) + have * entry, take * entry);
        }
        return true;
    }

    /** Completes row {@code row} once its sample is written: checks stacks, pads, writes lengths and masks. */
    void finish(Batch batch, int row, long[] counts) {
        long dropped = 0;
        // the stacks' lengths are checked before anything is written: a refused sample leaves no half-done row
        for (int g = 0; g < members.length; g++) {
            int[] ms = members[g];
            for (int j = 1; j < ms.length; j++) {
                if (counts[ms[j]] != counts[ms[0]]) {
                    throw new IllegalArgumentException(names[g] + " needs one length a sample; this sample's '"
                            + source.field(ms[0]).name() + "' has " + counts[ms[0]] + " values, '"
                            + source.field(ms[j]).name() + "' " + counts[ms[j]]);
                }
            }
        }
        for (int g = 0; g < members.length; g++) {
            long entries = counts[members[g][0]];
            long n = length[g];
            long kept = Math.min(entries, n);
            if (entries > n) {
                dropped += (entries - n) * features[g];
            }
            int o = out[g];
            int size = type[g].byteSize();
            long stride = (long) features[g] * size;
            fill(batch.column(o), batch.rowOffset(o, row) + kept * stride, (n - kept) * features[g], size, padBits[g]);
            if (lengthsField[g] >= 0) {
                batch.column(lengthsField[g]).set(LONG, batch.rowOffset(lengthsField[g], row), kept);
            }
            if (maskField[g] >= 0) {
                MemorySegment m = batch.column(maskField[g]);
                long at = batch.rowOffset(maskField[g], row);
                fill(m, at, kept, 1, 1);
                fill(m, at + kept, n - kept, 1, 0);
            }
        }
        if (dropped > 0) {
            truncatedSamples.increment();
            droppedValues.add(dropped);
        }
    }

    /** Writes {@code count} values of {@code size} bytes, each {@code bits}, at {@code at}: in one fill where the bytes are all alike. */
    private static void fill(MemorySegment col, long at, long count, int size, long bits) {
        if (bits == 0 || size == 1) {
            col.asSlice(at, count * size).fill((byte) bits);
            return;
        }
        for (long k = 0; k < count; k++) {
            switch (size) {
                case 2 -> col.set(SHORT, at + 2 * k, (short) bits);
                case 4 -> col.set(INT, at + 4 * k, (int) bits);
                default -> col.set(LONG, at + 8 * k, bits);
            }
        }
    }

    private static boolean integral(DType t) {
        return switch (t) {
            case BOOL, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64 -> true;
            default -> false;
        };
    }

    private static long getLong(MemorySegment s, long at, DType t) {
        return switch (t) {
            case BOOL, UINT8 -> s.get(ValueLayout.JAVA_BYTE, at) & 0xffL;
            case INT8 -> s.get(ValueLayout.JAVA_BYTE, at);
            case INT16 -> s.get(SHORT, at);
            case UINT16 -> s.get(SHORT, at) & 0xffffL;
            case INT32 -> s.get(INT, at);
            case UINT32 -> s.get(INT, at) & 0xffffffffL;
            default -> s.get(LONG, at);
        };
    }

    private static double getDouble(MemorySegment s, long at, DType t) {
        return switch (t) {
            case FLOAT16 -> Float.float16ToFloat(s.get(SHORT, at));
            case BFLOAT16 -> Float.intBitsToFloat((s.get(SHORT, at) & 0xffff) << 16);
            case FLOAT32 -> s.get(FLOAT, at);
            case FLOAT64 -> s.get(DOUBLE, at);
            case UINT64 -> {
                long v = s.get(LONG, at);
                yield v >= 0 ? v : (double) (v >>> 1) * 2.0 + (v & 1);
            }
            default -> getLong(s, at, t);
        };
    }

    private static void putLong(MemorySegment s, long at, DType t, long v) {
        switch (t) {
            case BOOL -> s.set(ValueLayout.JAVA_BYTE, at, (byte) (v != 0 ? 1 : 0));
            case INT8, UINT8 -> s.set(ValueLayout.JAVA_BYTE, at, (byte) v);
            case INT16, UINT16 -> s.set(SHORT, at, (short) v);
            case INT32, UINT32 -> s.set(INT, at, (int) v);
            default -> s.set(LONG, at, v);
        }
    }

    private static void putDouble(MemorySegment s, long at, DType t, double v) {
        switch (t) {
            case FLOAT16 -> s.set(SHORT, at, Float.floatToFloat16((float) v));
            case BFLOAT16 -> s.set(SHORT, at, (short) (Float.floatToRawIntBits((float) v) >>> 16));
            case FLOAT32 -> s.set(FLOAT, at, (float) v);
            case FLOAT64 -> s.set(DOUBLE, at, v);
            case BOOL -> s.set(ValueLayout.JAVA_BYTE, at, (byte) (v != 0 ? 1 : 0));
            default -> putLong(s, at, t, (long) v);
        }
    }
}
