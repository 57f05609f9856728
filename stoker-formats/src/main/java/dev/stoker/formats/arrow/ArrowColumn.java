package dev.stoker.formats.arrow;

import dev.stoker.DType;
import dev.stoker.formats.records.Numbers;
import dev.stoker.formats.records.Tensor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One column of one record batch, its buffers views of the mapped file, and how a row of it
 * becomes a value (NOTE [Arrow] in {@link ArrowFile}): integers and floats scalars of their type,
 * booleans, strings, bytes, lists as lists, fixed-size lists as lists, structs as maps of their
 * children, dictionary-encoded values looked up, nulls null.
 */
final class ArrowColumn {
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    final ArrowType type;
    final long length;
    final long nullCount;
    /** Validity bitmap, or null when every value is valid. */
    final MemorySegment validity;
    /** The type's buffers after the validity bitmap: values, or offsets then data. */
    final MemorySegment[] buffers;
    final ArrowColumn[] children;
    /** For a dictionary-encoded column, its dictionary's values: the chunks a first batch and its deltas gave. */
    List<ArrowColumn> dictionary;

    ArrowColumn(ArrowType type, long length, long nullCount, MemorySegment validity, MemorySegment[] buffers,
                ArrowColumn[] children) {
        this.type = type;
        this.length = length;
        this.nullCount = nullCount;
        this.validity = validity;
        this.buffers = buffers;
        this.children = children;
    }

    boolean isNull(long row) {
        if (type.kind() == ArrowType.Kind.NULL) {
            return true;
        }
        if (nullCount == 0 || validity == null) {
            return false;
        }
        return (validity.get(ValueLayout.JAVA_BYTE, row >>> 3) >> (row & 7) & 1) == 0;
    }

    /** Row {@code row}'s value; IllegalArgumentException when the buffers do not hold it. */
    Object value(long row) {
        if (row < 0 || row >= length) {
            throw new IllegalArgumentException("row " + row + " of a column of " + length);
        }
        if (isNull(row)) {
            return null;
        }
        if (type.dictionary() != null) {
            long key = integer(buffers[0], type.dictionary().index(), row);
            long k = key;
            for (ArrowColumn chunk : dictionary == null ? List.<ArrowColumn>of() : dictionary) {
                if (k >= 0 && k < chunk.length) {
                    return chunk.value(k);
                }
                k -= chunk.length;
            }
            throw new IllegalArgumentException("dictionary key " + key + " is not in its dictionary ("
                    + (dictionary == null ? "none was sent" : dictionary.stream().mapToLong(c -> c.length).sum() + " values") + ")");
        }
        return switch (type.kind()) {
            case NULL -> null;
            case BOOL -> (buffers[0].get(ValueLayout.JAVA_BYTE, row >>> 3) >> (row & 7) & 1) != 0;
            case INT, FLOAT -> {
                int w = type.dtype().byteSize();
                yield Tensor.scalar(type.dtype(), slice(buffers[0], row * w, w).toArray(ValueLayout.JAVA_BYTE));
            }
            case UTF8, LARGE_UTF8 -> new String(range(row), StandardCharsets.UTF_8);
            case BINARY, LARGE_BINARY -> range(row);
            case FIXED_BINARY -> slice(buffers[0], row * type.size(), type.size()).toArray(ValueLayout.JAVA_BYTE);
            case LIST, LARGE_LIST -> {
                boolean large = type.kind() == ArrowType.Kind.LARGE_LIST;
                long from = offset(large, row);
                long to = offset(large, row + 1);
                yield items(from, to);
            }
            case FIXED_LIST -> items(row * type.size(), (row + 1) * type.size());
            case STRUCT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                for (int c = 0; c < children.length; c++) {
                    m.put(type.children().get(c).field(), children[c].value(row));
                }
                yield m;
            }
        };
    }

    /** A list's items: {@link Numbers} when they are numbers with no nulls, else one value each. */
    private Object items(long from, long to) {
        if (from < 0 || to < from || to > children[0].length) {
            throw new IllegalArgumentException("list items [" + from + ", " + to + ") of a child of " + children[0].length);
        }
        ArrowColumn c = children[0];
        if ((c.type.kind() == ArrowType.Kind.INT || c.type.kind() == ArrowType.Kind.FLOAT) && c.type.dictionary() == null
                && c.nullCount == 0) {
            int w = c.type.dtype().byteSize();
            return new Numbers(c.type.dtype(), slice(c.buffers[0], from * w, (to - from) * w).toArray(ValueLayout.JAVA_BYTE));
        }
        List<Object> out = new ArrayList<>((int) (to - from));
        for (long i = from; i < to; i++) {
            out.add(children[0].value(i));
        }
        return out;
    }

    private long offset(boolean large, long i) {
        return large ? slice(buffers[0], i * 8, 8).get(I64, 0) : slice(buffers[0], i * 4, 4).get(I32, 0);
    }

    /** A string's or binary's bytes: between its offsets in the data buffer (offsets need not start at 0). */
    private byte[] range(long row) {
        boolean large = type.kind() == ArrowType.Kind.LARGE_UTF8 || type.kind() == ArrowType.Kind.LARGE_BINARY;
        long from = offset(large, row);
        long to = offset(large, row + 1);
        if (from < 0 || to < from) {
            throw new IllegalArgumentException("offsets " + from + ".." + to + " of row " + row);
        }
        return slice(buffers[1], from, to - from).toArray(ValueLayout.JAVA_BYTE);
    }

    private static long integer(MemorySegment b, DType t, long row) {
        MemorySegment s = slice(b, row * t.byteSize(), t.byteSize());
        return switch (t) {
            case INT8 -> s.get(ValueLayout.JAVA_BYTE, 0);
            case UINT8 -> s.get(ValueLayout.JAVA_BYTE, 0) & 0xFF;
            case INT16 -> s.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
            case UINT16 -> s.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0) & 0xFFFF;
            case INT32 -> s.get(I32, 0);
            case UINT32 -> s.get(I32, 0) & 0xFFFFFFFFL;
            default -> s.get(I64, 0);
        };
    }

    /** {@code n} bytes at {@code at} of a buffer, or IllegalArgumentException when the buffer is shorter. */
    private static MemorySegment slice(MemorySegment b, long at, long n) {
        if (b == null || at < 0 || n < 0 || at + n > b.byteSize()) {
            throw new IllegalArgumentException("bytes [" + at + ", " + (at + n) + ") of a buffer of "
                    + (b == null ? 0 : b.byteSize()));
        }
        return b.asSlice(at, n);
    }
}
