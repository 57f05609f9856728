package dev.stoker.formats.tokens;

import dev.stoker.CorruptRecordException;
import dev.stoker.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Copies runs of tokens from a mapping straight into a batch column, widening as it goes (the
 * hot loop of every token dataset): no intermediate array, nothing allocated.
 */
final class TokenCopy {
    private TokenCopy() {
    }

    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Token {@code i} of a token array of type {@code dtype}. */
    static long get(MemorySegment src, DType dtype, long i) {
        return switch (dtype) {
            case UINT8 -> src.get(ValueLayout.JAVA_BYTE, i) & 0xFFL;
            case INT8 -> src.get(ValueLayout.JAVA_BYTE, i);
            case UINT16 -> src.get(U16, 2 * i) & 0xFFFFL;
            case INT16 -> src.get(U16, 2 * i);
            case UINT32 -> src.get(I32, 4 * i) & 0xFFFF_FFFFL;
            case INT32 -> src.get(I32, 4 * i);
            case INT64, UINT64 -> src.get(I64, 8 * i);
            default -> throw new IllegalArgumentException("tokens must be integers, not " + dtype.label());
        };
    }

    static void checkTokenType(DType dtype, String name) {
        switch (dtype) {
            case UINT8, INT8, UINT16, INT16, UINT32, INT32, INT64, UINT64 -> {
            }
            default -> throw new IllegalArgumentException(name + ": tokens must be integers, not " + dtype.label());
        }
    }

    /**
     * Writes tokens {@code [from, from + n)} of {@code src} (type {@code type}, of the file
     * {@code name}) into {@code dst} at byte {@code dstOffset} as {@code out} (INT64 or INT32). A
     * token {@code out} cannot hold (a uint64 id of 2^63 or more, a uint32 or int64 id of 2^31 or
     * more into int32) is an error naming it, never a negative id.
     */
    static void copy(MemorySegment src, DType type, long from, long n, MemorySegment dst, long dstOffset, DType out,
                     String name) throws CorruptRecordException {
        copy(src, type, from, n, dst, dstOffset, out);
        boolean mayWrap = out == DType.INT64 ? type == DType.UINT64
                : type == DType.UINT32 || type == DType.UINT64 || type == DType.INT64;
        if (mayWrap) {
            for (long j = 0; j < n; j++) {
                long v = get(src, type, from + j);
                boolean fits = out == DType.INT64 ? v >= 0 : type == DType.INT64 ? v == (int) v : v >= 0 && v <= Integer.MAX_VALUE;
                if (!fits) {
                    String value = type == DType.UINT64 ? Long.toUnsignedString(v) : Long.toString(v);
                    throw new CorruptRecordException(name, (from + j) * type.byteSize(), "token " + (from + j) + " is " + value
                            + ", which " + out.label() + " cannot hold (it would become a negative id)"
                            + (out == DType.INT32 ? "; read the tokens as int64" : ""));
                }
            }
        }
    }

    private static void copy(MemorySegment src, DType type, long from, long n, MemorySegment dst, long dstOffset, DType out) {
        if (out == DType.INT64) {
            switch (type) {
                case UINT16 -> {
                    long s = 2 * from;
                    for (long j = 0; j < n; j++) {
                        dst.set(I64, dstOffset + 8 * j, src.get(U16, s + 2 * j) & 0xFFFFL);
                    }
                }
                case UINT32 -> {
                    long s = 4 * from;
                    for (long j = 0; j < n; j++) {
                        dst.set(I64, dstOffset + 8 * j, src.get(I32, s + 4 * j) & 0xFFFF_FFFFL);
                    }
                }
                case INT32 -> {
                    long s = 4 * from;
                    for (long j = 0; j < n; j++) {
                        dst.set(I64, dstOffset + 8 * j, src.get(I32, s + 4 * j));
                    }
                }
                case INT64, UINT64 -> MemorySegment.copy(src, 8 * from, dst, dstOffset, 8 * n);
                default -> {
                    for (long j = 0; j < n; j++) {
                        dst.set(I64, dstOffset + 8 * j, get(src, type, from + j));
                    }
                }
            }
        } else if (out == DType.INT32) {
            switch (type) {
                case UINT16 -> {
                    long s = 2 * from;
                    for (long j = 0; j < n; j++) {
                        dst.set(I32, dstOffset + 4 * j, src.get(U16, s + 2 * j) & 0xFFFF);
                    }
                }
                case INT32, UINT32 -> MemorySegment.copy(src, 4 * from, dst, dstOffset, 4 * n);
                default -> {
                    for (long j = 0; j < n; j++) {
                        dst.set(I32, dstOffset + 4 * j, (int) get(src, type, from + j));
                    }
                }
            }
        } else {
            throw new IllegalArgumentException("token batches are int64 or int32, not " + out.label());
        }
    }

    /** Writes {@code n} copies of {@code token} as {@code out}. */
    static void fill(long token, long n, MemorySegment dst, long dstOffset, DType out) {
        if (out == DType.INT64) {
            for (long j = 0; j < n; j++) {
                dst.set(I64, dstOffset + 8 * j, token);
            }
        } else {
            for (long j = 0; j < n; j++) {
                dst.set(I32, dstOffset + 4 * j, (int) token);
            }
        }
    }
}
