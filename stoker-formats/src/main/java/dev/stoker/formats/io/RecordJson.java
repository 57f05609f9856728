package dev.stoker.formats.io;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.stoker.DType;
import dev.stoker.formats.records.JsonText;
import dev.stoker.formats.records.Numbers;
import dev.stoker.formats.records.Tensor;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * A record as {@code stoker cat} prints it, one JSON object: integers as JSON integers (uint64
 * unsigned, exact), floats as numbers ({@code "nan"}, {@code "inf"}, {@code "-inf"} as strings),
 * strings as strings, bytes as {@code {"bytes": N, "sha256": HEX}}, arrays as
 * {@code {"dtype", "shape", "sha256"}} of their C-order little-endian bytes plus {@code "values"}
 * when they have at most {@value #VALUES} elements, lists as arrays, structs as objects, nulls as
 * null.
 */
public final class RecordJson {
    /** Arrays of at most this many elements are printed with their values. */
    public static final int VALUES = 16;
    private static final HexFormat HEX = HexFormat.of();

    private RecordJson() {
    }

    /** Writes {@code record} as one JSON object. */
    public static void write(JsonGenerator g, Map<String, ?> record) throws IOException {
        g.writeStartObject();
        for (Map.Entry<String, ?> e : record.entrySet()) {
            g.writeFieldName(e.getKey());
            value(g, e.getValue());
        }
        g.writeEndObject();
    }

    /** Writes one value, as the class comment says. */
    public static void value(JsonGenerator g, Object v) throws IOException {
        switch (v) {
            case null -> g.writeNull();
            case Long l -> g.writeNumber(l);
            case Integer i -> g.writeNumber(i);
            case BigInteger b -> g.writeNumber(b);
            case java.math.BigDecimal d -> g.writeNumber(d);
            case Double d -> real(g, d);
            case Float f -> real(g, f);
            case Boolean b -> g.writeBoolean(b);
            case String s -> g.writeString(s);
            case JsonText j -> g.writeRawValue(j.text());
            case byte[] b -> bytes(g, b);
            case Tensor t -> tensor(g, t);
            case Numbers n -> {
                ByteBuffer data = ByteBuffer.wrap(n.data()).order(ByteOrder.LITTLE_ENDIAN);
                g.writeStartArray();
                for (int i = 0; i < n.size(); i++) {
                    element(g, n.dtype(), data, i);
                }
                g.writeEndArray();
            }
            case List<?> l -> {
                g.writeStartArray();
                for (Object o : l) {
                    value(g, o);
                }
                g.writeEndArray();
            }
            case Map<?, ?> m -> {
                g.writeStartObject();
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    g.writeFieldName(String.valueOf(e.getKey()));
                    value(g, e.getValue());
                }
                g.writeEndObject();
            }
            default -> throw new IllegalArgumentException("no JSON form for a " + v.getClass().getName());
        }
    }

    private static void real(JsonGenerator g, double d) throws IOException {
        if (Double.isNaN(d)) {
            g.writeString("nan");
        } else if (Double.isInfinite(d)) {
            g.writeString(d > 0 ? "inf" : "-inf");
        } else {
            g.writeNumber(d);
        }
    }

    private static void real(JsonGenerator g, float f) throws IOException {
        if (Float.isNaN(f) || Float.isInfinite(f)) {
            real(g, (double) f);
        } else {
            g.writeNumber(f);
        }
    }

    private static void bytes(JsonGenerator g, byte[] b) throws IOException {
        g.writeStartObject();
        g.writeNumberField("bytes", b.length);
        g.writeStringField("sha256", sha256(b));
        g.writeEndObject();
    }

    private static void tensor(JsonGenerator g, Tensor t) throws IOException {
        ByteBuffer data = ByteBuffer.wrap(t.data()).order(ByteOrder.LITTLE_ENDIAN);
        if (t.shape().length == 0) {
            element(g, t.dtype(), data, 0);
            return;
        }
        g.writeStartObject();
        g.writeStringField("dtype", t.dtype().label());
        g.writeArrayFieldStart("shape");
        for (long d : t.shape()) {
            g.writeNumber(d);
        }
        g.writeEndArray();
        g.writeStringField("sha256", sha256(t.data()));
        long n = t.elements();
        if (n <= VALUES) {
            g.writeArrayFieldStart("values");
            for (int i = 0; i < n; i++) {
                element(g, t.dtype(), data, i);
            }
            g.writeEndArray();
        }
        g.writeEndObject();
    }

    /** Element {@code i} of little-endian {@code data} of type {@code dtype}. */
    private static void element(JsonGenerator g, DType dtype, ByteBuffer data, int i) throws IOException {
        int at = i * dtype.byteSize();
        switch (dtype) {
            case BOOL -> g.writeBoolean(data.get(at) != 0);
            case INT8 -> g.writeNumber(data.get(at));
            case UINT8 -> g.writeNumber(data.get(at) & 0xFF);
            case INT16 -> g.writeNumber(data.getShort(at));
            case UINT16 -> g.writeNumber(data.getShort(at) & 0xFFFF);
            case INT32 -> g.writeNumber(data.getInt(at));
            case UINT32 -> g.writeNumber(data.getInt(at) & 0xFFFFFFFFL);
            case INT64 -> g.writeNumber(data.getLong(at));
            case UINT64 -> {
                long v = data.getLong(at);
                if (v >= 0) {
                    g.writeNumber(v);
                } else {
                    g.writeNumber(new BigInteger(Long.toUnsignedString(v)));
                }
            }
            case FLOAT16 -> real(g, Float.float16ToFloat(data.getShort(at)));
            case BFLOAT16 -> real(g, Float.intBitsToFloat((data.getShort(at) & 0xFFFF) << 16));
            case FLOAT32 -> real(g, data.getFloat(at));
            case FLOAT64 -> real(g, data.getDouble(at));
        }
    }

    /** The SHA-256 of {@code b}, in lower-case hex. */
    public static String sha256(byte[] b) {
        try {
            return HEX.formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
