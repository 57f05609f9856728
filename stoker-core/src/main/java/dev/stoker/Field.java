package dev.stoker;

import java.util.Arrays;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One named field of a sample, and so one column of a {@link Batch}.
 *
 * <p>A field is either a <em>tensor</em> of fixed {@link #dtype()} and per-sample {@link #shape()}
 * (the batch column then has shape {@code [rows, shape...]}), or <em>variable-length</em>: a batch
 * column of {@code rows + 1} int64 byte offsets and a byte region. A variable-length field holds
 * either bytes (raw bytes, strings: {@link #bytes}) or a <em>ragged</em> list of numbers of one
 * dtype per sample ({@link #ragged}: a jet's particles, an event's pulses), whose region holds
 * the values little-endian and whose offsets are multiples of the dtype's size. For
 * variable-length fields {@link #bytesHint()} is the expected bytes per sample, used to size the
 * byte region; the region grows when a batch needs more.
 */
public final class Field {
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.\\-]*");

    private final String name;
    private final DType dtype;
    private final long[] shape;
    private final boolean variable;
    private final long bytesHint;
    private final boolean ragged;

    private Field(String name, DType dtype, long[] shape, boolean variable, long bytesHint, boolean ragged) {
        Objects.requireNonNull(name, "name");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("field name must match " + NAME + ": '" + name + "'");
        }
        this.name = name;
        this.dtype = dtype;
        this.shape = shape;
        this.variable = variable;
        this.bytesHint = bytesHint;
        this.ragged = ragged;
    }

    /** A tensor field: every sample holds {@code dtype[shape]}; an empty shape is a scalar. */
    public static Field tensor(String name, DType dtype, long... shape) {
        Objects.requireNonNull(dtype, "dtype");
        for (long d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("field '" + name + "': negative dimension in " + Arrays.toString(shape));
            }
        }
        long elements = 1;
        for (long d : shape) {
            elements = Math.multiplyExact(elements, d);
        }
        Math.multiplyExact(elements, (long) dtype.byteSize());
        return new Field(name, dtype, shape.clone(), false, 0, false);
    }

    /** A scalar field, e.g. a class label. */
    public static Field scalar(String name, DType dtype) {
        return tensor(name, dtype);
    }

    /** A variable-length bytes field; {@code bytesHint} is the expected size of one sample. */
    public static Field bytes(String name, long bytesHint) {
        if (bytesHint < 0) {
            throw new IllegalArgumentException("field '" + name + "': bytesHint must be >= 0, got " + bytesHint);
        }
        return new Field(name, DType.UINT8, new long[0], true, bytesHint, false);
    }

    /**
     * A ragged field: every sample holds a list of any length of {@code dtype} values;
     * {@code bytesHint} is the expected size of one sample's list in bytes.
     */
    public static Field ragged(String name, DType dtype, long bytesHint) {
        Objects.requireNonNull(dtype, "dtype");
        if (bytesHint < 0) {
            throw new IllegalArgumentException("field '" + name + "': bytesHint must be >= 0, got " + bytesHint);
        }
        return new Field(name, dtype, new long[0], true, bytesHint, true);
    }

    public String name() {
        return name;
    }

    /** The element type; {@link DType#UINT8} for a bytes field, the values' type for a ragged one. */
    public DType dtype() {
        return dtype;
    }

    /** The per-sample shape (a copy); empty for scalars and variable-length fields. */
    public long[] shape() {
        return shape.clone();
    }

    public boolean isVariable() {
        return variable;
    }

    /** Whether this is a variable-length list of numbers ({@link #ragged}) rather than bytes. */
    public boolean isRagged() {
        return variable && ragged;
    }

    public long bytesHint() {
        return bytesHint;
    }

    /** Elements per sample of a tensor field. */
    public long elements() {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    /** Bytes per sample of a tensor field. */
    public long sampleBytes() {
        if (variable) {
            throw new IllegalStateException("field '" + name + "' is variable-length");
        }
        return elements() * dtype.byteSize();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Field f && name.equals(f.name) && dtype == f.dtype
                && Arrays.equals(shape, f.shape) && variable == f.variable && ragged == f.ragged && bytesHint == f.bytesHint;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, dtype, Arrays.hashCode(shape), variable);
    }

    @Override
    public String toString() {
        return ragged ? name + ": " + dtype.label() + "[]" : variable ? name + ": bytes"
                : name + ": " + dtype.label() + Arrays.toString(shape);
    }
}
