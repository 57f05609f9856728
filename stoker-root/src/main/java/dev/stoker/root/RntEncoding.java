package dev.stoker.root;

import dev.stoker.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * RNTuple column types and how a page of each decodes: split (byte-transposed) pages, zigzag for
 * signed integers, delta for index (offset) columns, packed bits, truncated and quantized reals.
 * A page decodes to its column's natural little-endian type ({@link #natural}): index columns to
 * int64, every 32-bit real (and Real16) to float32.
 */
final class RntEncoding {
    private RntEncoding() {
    }

    static final int BIT = 0x00;
    static final int BYTE = 0x01;
    static final int CHAR = 0x02;
    static final int INT8 = 0x03;
    static final int UINT8 = 0x04;
    static final int INT16 = 0x05;
    static final int UINT16 = 0x06;
    static final int INT32 = 0x07;
    static final int UINT32 = 0x08;
    static final int INT64 = 0x09;
    static final int UINT64 = 0x0A;
    static final int REAL16 = 0x0B;
    static final int REAL32 = 0x0C;
    static final int REAL64 = 0x0D;
    static final int INDEX32 = 0x0E;
    static final int INDEX64 = 0x0F;
    static final int SWITCH = 0x10;
    static final int SPLIT_INT16 = 0x11;
    static final int SPLIT_UINT16 = 0x12;
    static final int SPLIT_INT32 = 0x13;
    static final int SPLIT_UINT32 = 0x14;
    static final int SPLIT_INT64 = 0x15;
    static final int SPLIT_UINT64 = 0x16;
    static final int SPLIT_REAL16 = 0x17;
    static final int SPLIT_REAL32 = 0x18;
    static final int SPLIT_REAL64 = 0x19;
    static final int SPLIT_INDEX32 = 0x1A;
    static final int SPLIT_INDEX64 = 0x1B;
    static final int REAL32_TRUNC = 0x1C;
    static final int REAL32_QUANT = 0x1D;

    private static final String[] NAMES = {"Bit", "Byte", "Char", "Int8", "UInt8", "Int16", "UInt16", "Int32",
        "UInt32", "Int64", "UInt64", "Real16", "Real32", "Real64", "Index32", "Index64", "Switch", "SplitInt16",
        "SplitUInt16", "SplitInt32", "SplitUInt32", "SplitInt64", "SplitUInt64", "SplitReal16", "SplitReal32",
        "SplitReal64", "SplitIndex32", "SplitIndex64", "Real32Trunc", "Real32Quant"};

    private static final int[] BITS = {1, 8, 8, 8, 8, 16, 16, 32, 32, 64, 64, 16, 32, 64, 32, 64, 96, 16, 16, 32,
        32, 64, 64, 16, 32, 64, 32, 64, -1, -1};

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 =
            ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    static String name(int type) {
        return type >= 0 && type < NAMES.length ? NAMES[type] : "type 0x" + Integer.toHexString(type);
    }

    /** Whether this reader decodes the type (every 1.0 type but Switch). */
    static boolean known(int type) {
        return type >= 0 && type < NAMES.length && type != SWITCH;
    }

    /** Whether {@code bits} is a valid bits-on-storage for the type. */
    static boolean validBits(int type, int bits) {
        return switch (type) {
            case REAL32_TRUNC -> bits >= 10 && bits <= 31;
            case REAL32_QUANT -> bits >= 1 && bits <= 32;
            default -> known(type) && BITS[type] == bits;
        };
    }

    static boolean isIndex(int type) {
        return type == INDEX32 || type == INDEX64 || type == SPLIT_INDEX32 || type == SPLIT_INDEX64;
    }

    /** The type a page decodes to. */
    static DType natural(int type) {
        return switch (type) {
            case BIT -> DType.BOOL;
            case BYTE, UINT8 -> DType.UINT8;
            case CHAR, INT8 -> DType.INT8;
            case INT16, SPLIT_INT16 -> DType.INT16;
            case UINT16, SPLIT_UINT16 -> DType.UINT16;
            case INT32, SPLIT_INT32 -> DType.INT32;
            case UINT32, SPLIT_UINT32 -> DType.UINT32;
            case INT64, SPLIT_INT64, INDEX32, INDEX64, SPLIT_INDEX32, SPLIT_INDEX64 -> DType.INT64;
            case UINT64, SPLIT_UINT64 -> DType.UINT64;
            case REAL16, SPLIT_REAL16, REAL32, SPLIT_REAL32, REAL32_TRUNC, REAL32_QUANT -> DType.FLOAT32;
            case REAL64, SPLIT_REAL64 -> DType.FLOAT64;
            default -> throw new IllegalArgumentException("no natural type for column " + name(type));
        };
    }

    /** The bytes a page of {@code n} elements of {@code bits} bits occupies once decompressed. */
    static long pageBytes(long n, int bits) {
        return (n * bits + 7) / 8;
    }

    /**
     * Decodes a page of {@code n} elements from {@code src} (its {@link #pageBytes} bytes) into
     * {@code dst} at {@code at}, {@code n} elements of {@link #natural}. {@code min}, {@code max}
     * are a quantized column's range.
     */
    static void decode(int type, int bits, long n, MemorySegment src, MemorySegment dst, long at, double min,
            double max) {
        switch (type) {
            case BIT -> {
                for (long i = 0; i < n; i++) {
                    int b = src.get(ValueLayout.JAVA_BYTE, i >>> 3);
                    dst.set(ValueLayout.JAVA_BYTE, at + i, (byte) ((b >>> (i & 7)) & 1));
                }
            }
            case BYTE, CHAR, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, REAL32, REAL64 ->
                MemorySegment.copy(src, 0, dst, at, n * (bits / 8));
            case REAL16 -> {
                for (long i = 0; i < n; i++) {
                    dst.set(F32, at + 4 * i, Float.float16ToFloat(src.get(I16, 2 * i)));
                }
            }
            case INDEX32 -> {
                for (long i = 0; i < n; i++) {
                    dst.set(I64, at + 8 * i, src.get(I32, 4 * i) & 0xFFFFFFFFL);
                }
            }
            case INDEX64 -> MemorySegment.copy(src, 0, dst, at, n * 8);
            case SPLIT_UINT16, SPLIT_UINT32, SPLIT_UINT64, SPLIT_REAL32, SPLIT_REAL64 ->
                unsplit(src, dst, at, n, bits / 8);
            case SPLIT_REAL16 -> {
                for (long i = 0; i < n; i++) {
                    int lo = src.get(ValueLayout.JAVA_BYTE, i) & 0xFF;
                    int hi = src.get(ValueLayout.JAVA_BYTE, n + i) & 0xFF;
                    dst.set(F32, at + 4 * i, Float.float16ToFloat((short) (lo | hi << 8)));
                }
            }
            case SPLIT_INT16 -> {
                unsplit(src, dst, at, n, 2);
                for (long i = 0; i < n; i++) {
                    int u = dst.get(I16, at + 2 * i) & 0xFFFF;
                    dst.set(I16, at + 2 * i, (short) ((u >>> 1) ^ -(u & 1)));
                }
            }
            case SPLIT_INT32 -> {
                unsplit(src, dst, at, n, 4);
                for (long i = 0; i < n; i++) {
                    int u = dst.get(I32, at + 4 * i);
                    dst.set(I32, at + 4 * i, (u >>> 1) ^ -(u & 1));
                }
            }
            case SPLIT_INT64 -> {
                unsplit(src, dst, at, n, 8);
                for (long i = 0; i < n; i++) {
                    long u = dst.get(I64, at + 8 * i);
                    dst.set(I64, at + 8 * i, (u >>> 1) ^ -(u & 1));
                }
            }
            case SPLIT_INDEX32 -> {
                long sum = 0;
                for (long i = 0; i < n; i++) {
                    int v = 0;
                    for (int j = 0; j < 4; j++) {
                        v |= (src.get(ValueLayout.JAVA_BYTE, j * n + i) & 0xFF) << (8 * j);
                    }
                    sum += v & 0xFFFFFFFFL;
                    dst.set(I64, at + 8 * i, sum);
                }
            }
            case SPLIT_INDEX64 -> {
                unsplit(src, dst, at, n, 8);
                long sum = 0;
                for (long i = 0; i < n; i++) {
                    sum += dst.get(I64, at + 8 * i);
                    dst.set(I64, at + 8 * i, sum);
                }
            }
            case REAL32_TRUNC -> {
                for (long i = 0; i < n; i++) {
                    int v = (int) unpack(src, i * bits, bits);
                    dst.set(I32, at + 4 * i, v << (32 - bits));
                }
            }
            case REAL32_QUANT -> {
                double scale = (max - min) / ((1L << bits) - 1);
                for (long i = 0; i < n; i++) {
                    long q = unpack(src, i * bits, bits);
                    dst.set(F32, at + 4 * i, (float) (min + q * scale));
                }
            }
            default -> throw new IllegalArgumentException("cannot decode column " + name(type));
        }
    }

    /** Bytes of element i, byte j are at {@code src[j * n + i]}: each element gathered and written once. */
    private static void unsplit(MemorySegment src, MemorySegment dst, long at, long n, int w) {
        switch (w) {
            case 2 -> {
                for (long i = 0; i < n; i++) {
                    int v = (src.get(ValueLayout.JAVA_BYTE, i) & 0xFF) | (src.get(ValueLayout.JAVA_BYTE, n + i) & 0xFF) << 8;
                    dst.set(I16, at + 2 * i, (short) v);
                }
            }
            case 4 -> {
                long n2 = 2 * n;
                long n3 = 3 * n;
                for (long i = 0; i < n; i++) {
                    int v = (src.get(ValueLayout.JAVA_BYTE, i) & 0xFF)
                            | (src.get(ValueLayout.JAVA_BYTE, n + i) & 0xFF) << 8
                            | (src.get(ValueLayout.JAVA_BYTE, n2 + i) & 0xFF) << 16
                            | (src.get(ValueLayout.JAVA_BYTE, n3 + i) & 0xFF) << 24;
                    dst.set(I32, at + 4 * i, v);
                }
            }
            default -> {
                for (long i = 0; i < n; i++) {
                    long v = 0;
                    for (int j = 0; j < w; j++) {
                        v |= (src.get(ValueLayout.JAVA_BYTE, j * n + i) & 0xFFL) << (8 * j);
                    }
                    dst.set(I64, at + 8 * i, v);
                }
            }
        }
    }

    /** {@code bits} (at most 32) bits starting at bit {@code pos} of a little-endian, LSB-first bit stream. */
    private static long unpack(MemorySegment src, long pos, int bits) {
        long v = 0;
        long size = src.byteSize();
        long first = pos >>> 3;
        int shift = (int) (pos & 7);
        int need = (shift + bits + 7) >>> 3;
        for (int k = 0; k < need && first + k < size; k++) {
            v |= (src.get(ValueLayout.JAVA_BYTE, first + k) & 0xFFL) << (8 * k);
        }
        return (v >>> shift) & ((1L << bits) - 1);
    }
}
