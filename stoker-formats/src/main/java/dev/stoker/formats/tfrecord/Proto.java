package dev.stoker.formats.tfrecord;

import dev.stoker.DType;
import dev.stoker.formats.records.Numbers;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The protocol-buffer messages a TFRecord file holds, decoded from their wire form:
 * {@code tf.train.Example} and {@code SequenceExample} ({@code example.proto}, {@code feature.proto}).
 * A feature becomes {@link Numbers} of int64 ({@code int64_list}) or float32 ({@code float_list}),
 * a list of {@code byte[]} ({@code bytes_list}), or null when no kind is set; features come sorted by
 * name (the map has no order), a repeated key keeping its last value as protobuf's maps do, a
 * list given twice merging as protobuf merges messages, another kind of the oneof replacing it.
 * Packed and unpacked repeated numbers are both read; unknown fields are skipped.
 * IllegalArgumentException names what is malformed.
 */
final class Proto {
    private final byte[] b;
    private int at;
    private final int end;

    private Proto(byte[] b, int from, int to) {
        this.b = b;
        this.at = from;
        this.end = to;
    }

    /** A {@code tf.train.Example}: feature name -> values. */
    static Map<String, Object> example(byte[] record) {
        Proto p = new Proto(record, 0, record.length);
        Map<String, Object> features = new TreeMap<>();
        while (p.more()) {
            int tag = p.tag();
            if (tag >>> 3 == 1 && (tag & 7) == 2) {
                p.sub().features(features);
            } else {
                p.skip(tag);
            }
        }
        return new LinkedHashMap<>(features);
    }

    /** A {@code tf.train.SequenceExample}: {@code {"context": features, "feature_lists": name -> [features]}}. */
    static Map<String, Object> sequenceExample(byte[] record) {
        Proto p = new Proto(record, 0, record.length);
        Map<String, Object> context = new TreeMap<>();
        Map<String, Object> lists = new TreeMap<>();
        while (p.more()) {
            int tag = p.tag();
            if (tag >>> 3 == 1 && (tag & 7) == 2) {
                p.sub().features(context);
            } else if (tag >>> 3 == 2 && (tag & 7) == 2) {
                Proto fl = p.sub(); // FeatureLists { map<string, FeatureList> feature_list = 1; }
                while (fl.more()) {
                    int t = fl.tag();
                    if (t >>> 3 == 1 && (t & 7) == 2) {
                        fl.sub().entry(lists, true);
                    } else {
                        fl.skip(t);
                    }
                }
            } else {
                p.skip(tag);
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("context", new LinkedHashMap<>(context));
        out.put("feature_lists", new LinkedHashMap<>(lists));
        return out;
    }

    /** Features { map<string, Feature> feature = 1; } into {@code out}. */
    private void features(Map<String, Object> out) {
        while (more()) {
            int t = tag();
            if (t >>> 3 == 1 && (t & 7) == 2) {
                sub().entry(out, false);
            } else {
                skip(t);
            }
        }
    }

    /** A map entry {key = 1; value = 2} whose value is a Feature, or a FeatureList ({@code list}). */
    private void entry(Map<String, Object> out, boolean list) {
        String key = "";
        Object value = list ? List.of() : null;
        while (more()) {
            int t = tag();
            if (t >>> 3 == 1 && (t & 7) == 2) {
                Proto k = sub();
                key = new String(k.b, k.at, k.end - k.at, java.nio.charset.StandardCharsets.UTF_8);
            } else if (t >>> 3 == 2 && (t & 7) == 2) {
                value = list ? sub().featureList() : sub().feature();
            } else {
                skip(t);
            }
        }
        out.put(key, value);
    }

    /** FeatureList { repeated Feature feature = 1; } */
    private List<Object> featureList() {
        List<Object> out = new ArrayList<>();
        while (more()) {
            int t = tag();
            if (t >>> 3 == 1 && (t & 7) == 2) {
                out.add(sub().feature());
            } else {
                skip(t);
            }
        }
        return out;
    }

    /** Feature { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } } */
    private Object feature() {
        Object kind = null;
        int kindField = 0;
        while (more()) {
            int t = tag();
            int field = t >>> 3;
            if ((t & 7) == 2 && field >= 1 && field <= 3) {
                Proto list = sub();
                Object values = switch (field) {
                    case 1 -> list.bytesList();
                    case 2 -> list.floatList();
                    default -> list.int64List();
                };
                if (field == kindField) { // the same message twice merges: its repeated values join
                    kind = join(kind, values);
                } else { // another kind of the oneof replaces it
                    kind = values;
                    kindField = field;
                }
            } else {
                skip(t);
            }
        }
        return kind;
    }

    private static Object join(Object a, Object b) {
        if (a instanceof Numbers x && b instanceof Numbers y) {
            byte[] both = Arrays.copyOf(x.data(), x.data().length + y.data().length);
            System.arraycopy(y.data(), 0, both, x.data().length, y.data().length);
            return new Numbers(x.dtype(), both);
        }
        List<Object> out = new ArrayList<>((List<?>) a);
        out.addAll((List<?>) b);
        return out;
    }

    private List<Object> bytesList() {
        List<Object> out = new ArrayList<>();
        while (more()) {
            int t = tag();
            if (t >>> 3 == 1 && (t & 7) == 2) {
                Proto v = sub();
                out.add(Arrays.copyOfRange(v.b, v.at, v.end));
            } else {
                skip(t);
            }
        }
        return out;
    }

    /** A FloatList's values, packed or not, as little-endian float32s. */
    private Numbers floatList() {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(end - at);
        while (more()) {
            int t = tag();
            if (t >>> 3 == 1 && (t & 7) == 2) { // packed: already little-endian float32s
                Proto v = sub();
                if ((v.end - v.at) % 4 != 0) {
                    throw new IllegalArgumentException("a packed float list of " + (v.end - v.at) + " bytes");
                }
                out.write(v.b, v.at, v.end - v.at);
            } else if (t >>> 3 == 1 && (t & 7) == 5) {
                if (end - at < 4) {
                    throw new IllegalArgumentException("a 4-byte value runs past the end of its message at byte " + at);
                }
                out.write(b, at, 4);
                at += 4;
            } else {
                skip(t);
            }
        }
        return new Numbers(DType.FLOAT32, out.toByteArray());
    }

    /** An Int64List's values, packed or not, as little-endian int64s. */
    private Numbers int64List() {
        ByteBuffer out = ByteBuffer.allocate(8 * Math.max(1, end - at)).order(ByteOrder.LITTLE_ENDIAN);
        while (more()) {
            int t = tag();
            if (t >>> 3 == 1 && (t & 7) == 2) { // packed
                Proto v = sub();
                while (v.more()) {
                    out.putLong(v.varint());
                }
            } else if (t >>> 3 == 1 && (t & 7) == 0) {
                out.putLong(varint());
            } else {
                skip(t);
            }
        }
        return new Numbers(DType.INT64, Arrays.copyOf(out.array(), out.position()));
    }

    private boolean more() {
        return at < end;
    }

    private int tag() {
        long t = varint();
        if (t <= 0 || t > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("field tag " + t + " at byte " + at);
        }
        return (int) t;
    }

    private long varint() {
        long v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (at >= end) {
                throw new IllegalArgumentException("a varint runs past the end of its message at byte " + at);
            }
            byte x = b[at++];
            v |= (long) (x & 0x7F) << shift;
            if (x >= 0) {
                return v;
            }
        }
        throw new IllegalArgumentException("a varint of more than 10 bytes at byte " + at);
    }

    private int fixed32() {
        if (end - at < 4) {
            throw new IllegalArgumentException("a 4-byte value runs past the end of its message at byte " + at);
        }
        int v = (b[at] & 0xFF) | (b[at + 1] & 0xFF) << 8 | (b[at + 2] & 0xFF) << 16 | (b[at + 3] & 0xFF) << 24;
        at += 4;
        return v;
    }

    /** The length-delimited value at the cursor, as a message of its own; the cursor moves past it. */
    private Proto sub() {
        long n = varint();
        if (n < 0 || n > end - at) {
            throw new IllegalArgumentException("a field of " + n + " bytes at byte " + at + " runs past its message's end at " + end);
        }
        Proto p = new Proto(b, at, at + (int) n);
        at += (int) n;
        return p;
    }

    private void skip(int tag) {
        switch (tag & 7) {
            case 0 -> varint();
            case 1 -> {
                if (end - at < 8) {
                    throw new IllegalArgumentException("an 8-byte value runs past its message's end at byte " + at);
                }
                at += 8;
            }
            case 2 -> sub();
            case 5 -> fixed32();
            default -> throw new IllegalArgumentException("wire type " + (tag & 7) + " (field " + (tag >>> 3) + ") at byte " + at);
        }
    }
}
