package dev.stoker;

/**
 * Element types of batch fields, named as numpy names them so that files and batches
 * can be described the same way ({@link #numpy()} gives the little-endian type string).
 */
public enum DType {
    BOOL(1, "|b1"),
    INT8(1, "|i1"),
    UINT8(1, "|u1"),
    INT16(2, "<i2"),
    UINT16(2, "<u2"),
    INT32(4, "<i4"),
    UINT32(4, "<u4"),
    INT64(8, "<i8"),
    UINT64(8, "<u8"),
    FLOAT16(2, "<f2"),
    BFLOAT16(2, "<V2"),
    FLOAT32(4, "<f4"),
    FLOAT64(8, "<f8");

    private final int byteSize;
    private final String numpy;

    DType(int byteSize, String numpy) {
        this.byteSize = byteSize;
        this.numpy = numpy;
    }

    /** Bytes per element. */
    public int byteSize() {
        return byteSize;
    }

    /** The numpy type string of this type in little-endian byte order, e.g. {@code <u2}. */
    public String numpy() {
        return numpy;
    }

    /** The name used in schemas and JSON, e.g. {@code uint16}. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
