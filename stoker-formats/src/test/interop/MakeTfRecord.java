// Writes Stoker's TFRecord interop fixtures with the real TensorFlow Java classes
// (org.tensorflow:tensorflow-hadoop:1.15.0 TFRecordWriter/TFRecordReader, org.tensorflow:proto:1.15.0
// Example/SequenceExample on protobuf-java 3.5.1, hadoop-common 2.6.0 PureJavaCrc32C), then reads every
// fixture back with TFRecordReader (CRC checks on) + the proto classes and checks it against the
// .expected.jsonl it wrote. Not part of the Stoker build.
//
// Run (scratch project; needs Maven Central):
//   mkdir -p /tmp/tfrecord-gen/src/main/java
//   cp stoker-formats/src/test/interop/tfrecord-pom.xml /tmp/tfrecord-gen/pom.xml
//   cp stoker-formats/src/test/interop/MakeTfRecord.java /tmp/tfrecord-gen/src/main/java/
//   (cd /tmp/tfrecord-gen && mvn -q -B compile exec:java \
//       -Dexec.args="$PWD/stoker-formats/src/test/resources/interop/tfrecord")
// Output is deterministic (fixed seed, GZIP mtime 0): rerunning rewrites identical bytes.

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import org.tensorflow.example.BytesList;
import org.tensorflow.example.Example;
import org.tensorflow.example.Feature;
import org.tensorflow.example.FeatureList;
import org.tensorflow.example.FeatureLists;
import org.tensorflow.example.Features;
import org.tensorflow.example.FloatList;
import org.tensorflow.example.Int64List;
import org.tensorflow.example.SequenceExample;
import org.tensorflow.hadoop.util.TFRecordReader;
import org.tensorflow.hadoop.util.TFRecordWriter;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.zip.CRC32C;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.InflaterInputStream;

public final class MakeTfRecord {

    // ---------------------------------------------------------------- value model (= expected JSON)

    enum Kind { NONE, INT64, FLOAT, BYTES }

    /** One tf.train.Feature: kind + values (Long / Float / byte[]). NONE = no kind set (JSON null). */
    record Feat(Kind kind, List<?> values) {}

    static final Feat NOKIND = new Feat(Kind.NONE, List.of());

    static Feat ints(long... v) {
        List<Long> l = new ArrayList<>();
        for (long x : v) l.add(x);
        return new Feat(Kind.INT64, l);
    }

    static Feat floats(float... v) {
        List<Float> l = new ArrayList<>();
        for (float x : v) l.add(x);
        return new Feat(Kind.FLOAT, l);
    }

    static Feat bytes(byte[]... v) {
        return new Feat(Kind.BYTES, new ArrayList<>(Arrays.asList(v)));
    }

    static Feat text(String... v) {
        List<byte[]> l = new ArrayList<>();
        for (String s : v) l.add(s.getBytes(StandardCharsets.UTF_8));
        return new Feat(Kind.BYTES, l);
    }

    /** Example model: insertion-ordered (this is the order the proto classes serialize map entries in). */
    static final class Ex extends LinkedHashMap<String, Feat> {
        Ex f(String name, Feat f) { put(name, f); return this; }
    }

    /** SequenceExample model. */
    record Seq(Ex context, LinkedHashMap<String, List<Feat>> lists) {
        Seq() { this(new Ex(), new LinkedHashMap<>()); }
        Seq c(String name, Feat f) { context.put(name, f); return this; }
        Seq l(String name, Feat... fs) { lists.put(name, new ArrayList<>(Arrays.asList(fs))); return this; }
    }

    // ---------------------------------------------------------------- JSON (sorted keys)

    static String json(Feat f) {
        if (f.kind() == Kind.NONE) return "null";
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < f.values().size(); i++) {
            if (i > 0) sb.append(", ");
            Object v = f.values().get(i);
            switch (f.kind()) {
                case INT64 -> sb.append((long) (Long) v);
                case FLOAT -> {
                    float x = (Float) v;
                    if (Float.isNaN(x)) sb.append("\"nan\"");
                    else if (x == Float.POSITIVE_INFINITY) sb.append("\"inf\"");
                    else if (x == Float.NEGATIVE_INFINITY) sb.append("\"-inf\"");
                    else sb.append(Double.toString((double) x)); // exact value of the float
                }
                case BYTES -> {
                    byte[] b = (byte[]) v;
                    sb.append("{\"bytes\": ").append(b.length).append(", \"sha256\": \"")
                      .append(sha256(b)).append("\"}");
                }
                default -> throw new AssertionError();
            }
        }
        return sb.append(']').toString();
    }

    static String json(Map<String, Feat> ex) {
        StringBuilder sb = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<String, Feat> e : new TreeMap<>(ex).entrySet()) {
            if (!first) sb.append(", ");
            first = false;
            sb.append(jstr(e.getKey())).append(": ").append(json(e.getValue()));
        }
        return sb.append('}').toString();
    }

    static String json(Seq s) {
        StringBuilder sb = new StringBuilder("{\"context\": ").append(json(s.context())).append(", \"feature_lists\": {");
        boolean first = true;
        for (Map.Entry<String, List<Feat>> e : new TreeMap<>(s.lists()).entrySet()) {
            if (!first) sb.append(", ");
            first = false;
            sb.append(jstr(e.getKey())).append(": [");
            for (int i = 0; i < e.getValue().size(); i++) {
                if (i > 0) sb.append(", ");
                sb.append(json(e.getValue().get(i)));
            }
            sb.append(']');
        }
        return sb.append("}}").toString();
    }

    static String jstr(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') sb.append('\\').append(c);
            else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
            else sb.append(c);
        }
        return sb.append('"').toString();
    }

    static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    // ---------------------------------------------------------------- model <-> generated proto classes

    @SuppressWarnings("unchecked")
    static Feature toProto(Feat f) {
        return switch (f.kind()) {
            case NONE -> Feature.getDefaultInstance();
            case INT64 -> Feature.newBuilder().setInt64List(
                    Int64List.newBuilder().addAllValue((List<Long>) f.values())).build();
            case FLOAT -> Feature.newBuilder().setFloatList(
                    FloatList.newBuilder().addAllValue((List<Float>) f.values())).build();
            case BYTES -> {
                BytesList.Builder b = BytesList.newBuilder();
                for (Object v : f.values()) b.addValue(ByteString.copyFrom((byte[]) v));
                yield Feature.newBuilder().setBytesList(b).build();
            }
        };
    }

    static Features toProto(Map<String, Feat> ex) {
        Features.Builder b = Features.newBuilder();
        ex.forEach((k, v) -> b.putFeature(k, toProto(v)));
        return b.build();
    }

    static Feat fromProto(Feature f) {
        return switch (f.getKindCase()) {
            case KIND_NOT_SET -> NOKIND;
            case INT64_LIST -> new Feat(Kind.INT64, new ArrayList<>(f.getInt64List().getValueList()));
            case FLOAT_LIST -> new Feat(Kind.FLOAT, new ArrayList<>(f.getFloatList().getValueList()));
            case BYTES_LIST -> {
                List<byte[]> l = new ArrayList<>();
                for (ByteString s : f.getBytesList().getValueList()) l.add(s.toByteArray());
                yield new Feat(Kind.BYTES, l);
            }
        };
    }

    static Ex fromProto(Features fs) {
        Ex ex = new Ex();
        fs.getFeatureMap().forEach((k, v) -> ex.put(k, fromProto(v)));
        return ex;
    }

    static Seq fromProto(SequenceExample s) {
        Seq q = new Seq();
        q.context().putAll(fromProto(s.getContext()));
        s.getFeatureLists().getFeatureListMap().forEach((k, v) -> {
            List<Feat> l = new ArrayList<>();
            for (Feature f : v.getFeatureList()) l.add(fromProto(f));
            q.lists().put(k, l);
        });
        return q;
    }

    static byte[] exampleBytes(Ex ex) {
        return Example.newBuilder().setFeatures(toProto(ex)).build().toByteArray();
    }

    // ---------------------------------------------------------------- hand-written protobuf wire bytes

    interface Body { void write(CodedOutputStream o) throws IOException; }

    static byte[] wire(Body body) {
        try {
            ByteArrayOutputStream bo = new ByteArrayOutputStream();
            CodedOutputStream o = CodedOutputStream.newInstance(bo);
            body.write(o);
            o.flush();
            return bo.toByteArray();
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    static byte[] cat(byte[]... parts) {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        for (byte[] p : parts) bo.writeBytes(p);
        return bo.toByteArray();
    }

    /** field number {@code num}, wire type 2, payload. */
    static byte[] len(int num, byte[] payload) { return wire(o -> o.writeByteArray(num, payload)); }

    /** Int64List.value unpacked: one (tag 0x08, varint) per value. */
    static byte[] i64Unpacked(long... v) { return wire(o -> { for (long x : v) o.writeInt64(1, x); }); }

    /** Int64List.value packed: tag 0x0a, length, varints. */
    static byte[] i64Packed(long... v) {
        return wire(o -> {
            int n = 0;
            for (long x : v) n += CodedOutputStream.computeInt64SizeNoTag(x);
            o.writeTag(1, WireFormat.WIRETYPE_LENGTH_DELIMITED);
            o.writeUInt32NoTag(n);
            for (long x : v) o.writeInt64NoTag(x);
        });
    }

    /** FloatList.value unpacked: one (tag 0x0d, fixed32) per value. */
    static byte[] f32Unpacked(float... v) { return wire(o -> { for (float x : v) o.writeFloat(1, x); }); }

    static byte[] f32Packed(float... v) {
        return wire(o -> {
            o.writeTag(1, WireFormat.WIRETYPE_LENGTH_DELIMITED);
            o.writeUInt32NoTag(4 * v.length);
            for (float x : v) o.writeFloatNoTag(x);
        });
    }

    static byte[] bytesListWire(String... v) {
        return wire(o -> { for (String s : v) o.writeByteArray(1, s.getBytes(StandardCharsets.UTF_8)); });
    }

    static byte[] featBytes(byte[] list) { return len(1, list); }   // Feature.bytes_list
    static byte[] featFloat(byte[] list) { return len(2, list); }   // Feature.float_list
    static byte[] featInt64(byte[] list) { return len(3, list); }   // Feature.int64_list

    /** One Features.feature map entry (field 1 of Features): key=1, value=2. */
    static byte[] entry(String key, byte[] feature) {
        return len(1, cat(wire(o -> o.writeString(1, key)), len(2, feature)));
    }

    static byte[] exampleWire(byte[]... entries) { return len(1, cat(entries)); }

    // ---------------------------------------------------------------- fixtures' contents

    static final Random RND = new Random(20261126L);

    static byte[] rnd(int n) {
        byte[] b = new byte[n];
        RND.nextBytes(b);
        return b;
    }

    static List<Ex> examples() {
        List<Ex> l = new ArrayList<>();
        // 0: the special values
        l.add(new Ex()
                .f("id", ints(0))
                .f("ints", ints(1, -1, 0, Long.MIN_VALUE, Long.MAX_VALUE, -2))
                .f("floats", floats(0.1f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, -0.0f, 1.5f))
                .f("text", text("hello", "h\u00e9llo w\u00f6rld \u2713", ""))
                .f("image/encoded", bytes(rnd(100), rnd(3)))
                .f("label", ints(1)));
        // 1: empty int64_list, float extremes, 4-byte UTF-8, a 9000-byte value (larger than 8 KiB buffers)
        l.add(new Ex()
                .f("id", ints(1))
                .f("ints", ints())
                .f("floats", floats(Float.MIN_VALUE, Float.MAX_VALUE, -Float.MIN_NORMAL, 3.4028235e38f * -1))
                .f("text", text("emoji \uD83D\uDE00 (4-byte UTF-8)"))
                .f("image/encoded", bytes(rnd(9000))));
        // 2: varint-length edge values; empty float_list and bytes_list; a zero-length bytes value
        l.add(new Ex()
                .f("label", ints(0))
                .f("image/encoded", bytes(new byte[0]))
                .f("text", text())
                .f("floats", floats())
                .f("ints", ints(Integer.MIN_VALUE, 1L << 31, -300, 300, 127, 128, -128, 1L << 56, -(1L << 56)))
                .f("id", ints(2)));
        // 3: empty Example -> 0 data bytes
        l.add(new Ex());
        // 4: Example with features set to an empty Features -> 2 data bytes (0a 00); see examples() writer
        l.add(new Ex());
        // 5: a feature with no kind set; 50 random int64/float
        long[] li = new long[50];
        float[] lf = new float[50];
        for (int i = 0; i < 50; i++) { li[i] = RND.nextLong(); lf[i] = (float) RND.nextGaussian() * 1000f; }
        l.add(new Ex()
                .f("id", ints(5))
                .f("nokind", NOKIND)
                .f("ints", ints(li))
                .f("floats", floats(lf))
                .f("label", ints(1)));
        // 6: only id
        l.add(new Ex().f("id", ints(6)));
        // 7: many bytes values
        l.add(new Ex()
                .f("id", ints(7))
                .f("text", text("one", "two", "three", "\u56db", "f\u00fcnf"))
                .f("image/encoded", bytes(rnd(1), rnd(17), rnd(128), rnd(300)))
                .f("label", ints(0)));
        // 8: NaNs with other bit patterns (all expected as "nan"), near-extreme int64
        l.add(new Ex()
                .f("id", ints(8))
                .f("floats", floats(Float.intBitsToFloat(0x7fc00001), Float.intBitsToFloat(0xffc00000),
                        Float.intBitsToFloat(0x7f800001), 1e-40f, -1e30f))
                .f("ints", ints(Long.MIN_VALUE + 1, Long.MAX_VALUE - 1, -(1L << 62), 1L << 62)));
        // 9: long lists (packed payload length needs a 2-byte varint)
        long[] bi = new long[300];
        float[] bf = new float[300];
        for (int i = 0; i < 300; i++) { bi[i] = RND.nextLong() >> RND.nextInt(64); bf[i] = RND.nextFloat() - 0.5f; }
        l.add(new Ex()
                .f("id", ints(9))
                .f("ints", ints(bi))
                .f("floats", floats(bf))
                .f("label", ints(1)));
        return l;
    }

    static List<byte[]> exampleRecords(List<Ex> exs) {
        List<byte[]> recs = new ArrayList<>();
        for (int i = 0; i < exs.size(); i++) {
            if (i == 3) recs.add(Example.getDefaultInstance().toByteArray());
            else if (i == 4) recs.add(Example.newBuilder().setFeatures(Features.getDefaultInstance()).build().toByteArray());
            else recs.add(exampleBytes(exs.get(i)));
        }
        return recs;
    }

    static List<Seq> sequences() {
        List<Seq> l = new ArrayList<>();
        l.add(new Seq()
                .c("length", ints(3)).c("name", text("seq0")).c("score", floats(0.5f))
                .l("tokens", ints(1, 2, 3), ints(4), ints(5, 6))
                .l("weights", floats(0.1f), floats(0.2f, 0.3f), floats()));
        l.add(new Seq()
                .c("length", ints(0)).c("name", text("empty feature lists"))
                .l("tokens")
                .l("weights"));
        l.add(new Seq()
                .l("tokens", ints(-1, Long.MIN_VALUE), ints(), ints(Long.MAX_VALUE), ints(7, 8, 9, 10, 11))
                .l("weights", floats(Float.NaN, Float.POSITIVE_INFINITY), floats(Float.NEGATIVE_INFINITY))
                .l("words", text("a", "b"), text("\u00e7"), bytes(rnd(40))));
        l.add(new Seq()); // empty SequenceExample -> 0 data bytes
        l.add(new Seq().c("length", ints(4)).c("name", text("context only")).c("score", floats(-2.25f)));
        Feat[] w = new Feat[8];
        for (int i = 0; i < w.length; i++) {
            float[] v = new float[i * 3];
            for (int j = 0; j < v.length; j++) v[j] = RND.nextFloat();
            w[i] = floats(v);
        }
        l.add(new Seq()
                .c("length", ints(8))
                .l("tokens", ints(100), NOKIND, ints(200, 201))
                .l("weights", w));
        return l;
    }

    static byte[] sequenceBytes(Seq s) {
        SequenceExample.Builder b = SequenceExample.newBuilder();
        if (!s.context().isEmpty()) b.setContext(toProto(s.context()));
        if (!s.lists().isEmpty()) {
            FeatureLists.Builder flb = FeatureLists.newBuilder();
            s.lists().forEach((k, v) -> {
                FeatureList.Builder fl = FeatureList.newBuilder();
                for (Feat f : v) fl.addFeature(toProto(f));
                flb.putFeatureList(k, fl.build());
            });
            b.setFeatureLists(flb);
        }
        return b.build().toByteArray();
    }

    /** unpacked.tfrecord: value model + hand-written wire bytes (non-canonical encodings). */
    static void unpacked(List<Ex> model, List<byte[]> recs) {
        // 0: everything unpacked
        model.add(new Ex()
                .f("ints", ints(1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0))
                .f("floats", floats(0.1f, Float.NaN, Float.NEGATIVE_INFINITY, -0.0f))
                .f("text", text("unpacked")));
        recs.add(exampleWire(
                entry("ints", featInt64(i64Unpacked(1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0))),
                entry("floats", featFloat(f32Unpacked(0.1f, Float.NaN, Float.NEGATIVE_INFINITY, -0.0f))),
                entry("text", featBytes(bytesListWire("unpacked")))));
        // 1: packed and unpacked chunks mixed within one list (parsers must concatenate them in order)
        model.add(new Ex()
                .f("ints", ints(1, 2, 3, 4, 5, -6))
                .f("floats", floats(1.0f, 2.0f, 3.0f, 4.5f)));
        recs.add(exampleWire(
                entry("ints", featInt64(cat(i64Packed(1, 2), i64Unpacked(3), i64Packed(4, 5), i64Unpacked(-6)))),
                entry("floats", featFloat(cat(f32Unpacked(1.0f), f32Packed(2.0f, 3.0f), f32Unpacked(4.5f))))));
        // 2: single unpacked values, an empty int64_list (no value fields at all), a packed field of length 0
        model.add(new Ex()
                .f("one_int", ints(-42))
                .f("one_float", floats(0.25f))
                .f("no_ints", ints())
                .f("packed_empty", floats()));
        recs.add(exampleWire(
                entry("one_int", featInt64(i64Unpacked(-42))),
                entry("one_float", featFloat(f32Unpacked(0.25f))),
                entry("no_ints", featInt64(new byte[0])),
                entry("packed_empty", featFloat(f32Packed()))));
        // 3: long unpacked lists
        long[] li = new long[40];
        float[] lf = new float[40];
        for (int i = 0; i < 40; i++) { li[i] = RND.nextLong(); lf[i] = RND.nextFloat() * 100f - 50f; }
        model.add(new Ex().f("ints", ints(li)).f("floats", floats(lf)).f("id", ints(3)));
        recs.add(exampleWire(
                entry("ints", featInt64(i64Unpacked(li))),
                entry("floats", featFloat(f32Unpacked(lf))),
                entry("id", featInt64(i64Unpacked(3)))));
    }

    /** wire_edge.tfrecord: legal-but-unusual protobuf encodings no TF writer emits. */
    static void wireEdge(List<Ex> model, List<byte[]> recs) {
        // 0: duplicate map key -> the last entry wins
        model.add(new Ex().f("x", ints(2)).f("y", text("kept")));
        recs.add(exampleWire(
                entry("x", featInt64(i64Packed(1))),
                entry("y", featBytes(bytesListWire("kept"))),
                entry("x", featInt64(i64Packed(2)))));
        // 1: map entry with value (2) before key (1); unknown fields at every level
        byte[] unkVarint = wire(o -> o.writeUInt64(15, 12345));
        byte[] unkFixed32 = wire(o -> o.writeFixed32(7, 0xdeadbeef));
        byte[] unkFixed64 = wire(o -> o.writeFixed64(9, 0x0123456789abcdefL));
        byte[] unkLen = len(100, "unknown".getBytes(StandardCharsets.UTF_8));
        byte[] reversedEntry = len(1, cat(len(2, featInt64(i64Packed(7, 8))), wire(o -> o.writeString(1, "rev"))));
        byte[] withUnknowns = len(1, cat(
                wire(o -> o.writeString(1, "unk")),
                unkFixed32,
                len(2, cat(unkFixed64, featFloat(cat(f32Packed(1.5f), unkVarint)), unkLen))));
        model.add(new Ex().f("rev", ints(7, 8)).f("unk", floats(1.5f)));
        recs.add(cat(unkVarint, len(1, cat(reversedEntry, unkFixed32, withUnknowns)), unkLen));
        // 2: the same kind field twice in one Feature -> the two lists are merged (concatenated);
        //    Example.features twice -> the two maps are merged
        model.add(new Ex().f("merged", ints(1, 2, 3)).f("a", text("first")).f("b", text("second")));
        recs.add(cat(
                exampleWire(entry("merged", cat(featInt64(i64Packed(1, 2)), featInt64(i64Packed(3)))),
                        entry("a", featBytes(bytesListWire("first")))),
                exampleWire(entry("b", featBytes(bytesListWire("second"))))));
        // 3: map entry without a value field -> Feature with no kind (null); entry without key -> name ""
        model.add(new Ex().f("novalue", NOKIND).f("", ints(9)));
        recs.add(exampleWire(
                len(1, wire(o -> o.writeString(1, "novalue"))),
                len(1, len(2, featInt64(i64Packed(9))))));
        // 4: oneof set twice with different kinds -> the last one wins (float_list)
        model.add(new Ex().f("oneof", floats(2.5f)));
        recs.add(exampleWire(entry("oneof", cat(featInt64(i64Packed(1, 2)), featFloat(f32Packed(2.5f))))));
    }

    // ---------------------------------------------------------------- writing

    static byte[] frame(List<byte[]> recs) throws IOException {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bo);
        TFRecordWriter w = new TFRecordWriter(out);
        for (byte[] r : recs) w.write(r);
        out.flush();
        return bo.toByteArray();
    }

    static byte[] frameWrapped(List<byte[]> recs, Function<OutputStream, OutputStream> wrap) throws IOException {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        OutputStream z = wrap.apply(bo);
        DataOutputStream out = new DataOutputStream(z);
        TFRecordWriter w = new TFRecordWriter(out);
        for (byte[] r : recs) w.write(r);
        out.close();
        return bo.toByteArray();
    }

    static OutputStream gzip(OutputStream o) {
        try { return new GZIPOutputStream(o); } catch (IOException e) { throw new RuntimeException(e); }
    }

    static Path dir;
    static final List<String> written = new ArrayList<>();

    static void put(String name, byte[] data) throws IOException {
        Files.write(dir.resolve(name), data);
        written.add(name);
    }

    static void putLines(String name, List<String> lines) throws IOException {
        put(name, (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    // ---------------------------------------------------------------- reading back

    static InputStream open(String name) throws IOException {
        InputStream in = Files.newInputStream(dir.resolve(name));
        if (name.endsWith(".gz")) return new GZIPInputStream(in);
        if (name.endsWith(".zlib")) return new InflaterInputStream(in);
        return in;
    }

    static List<byte[]> readAll(String name) throws IOException {
        try (InputStream in = open(name)) {
            TFRecordReader r = new TFRecordReader(in, true);
            List<byte[]> recs = new ArrayList<>();
            for (byte[] b; (b = r.read()) != null; ) recs.add(b);
            return recs;
        }
    }

    static int maskedCrc(byte[] b, int off, int n) {
        CRC32C c = new CRC32C();
        c.update(b, off, n);
        int v = (int) c.getValue();
        return ((v >>> 15) | (v << 17)) + 0xa282ead8;
    }

    /** Independent framing walk with java.util.zip.CRC32C; returns record start offsets (+ end). */
    static List<Long> walk(byte[] file) {
        ByteBuffer bb = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        List<Long> starts = new ArrayList<>();
        int p = 0;
        while (p < file.length) {
            starts.add((long) p);
            long n = bb.getLong(p);
            check(bb.getInt(p + 8) == maskedCrc(file, p, 8), "length crc (JDK CRC32C) at " + p);
            check(bb.getInt(p + 12 + (int) n) == maskedCrc(file, p + 12, (int) n), "data crc (JDK CRC32C) at " + p);
            p += 12 + (int) n + 4;
        }
        check(p == file.length, "EOF on record boundary");
        starts.add((long) p);
        return starts;
    }

    static byte[] uncompressed(String name) throws IOException {
        try (InputStream in = open(name)) { return in.readAllBytes(); }
    }

    static void verify(String name, List<byte[]> recs, List<String> expected, boolean sequence) throws IOException {
        List<byte[]> got = readAll(name);
        check(got.size() == recs.size(), name + ": record count " + got.size() + " != " + recs.size());
        List<String> lines = Files.readAllLines(dir.resolve(name + ".expected.jsonl"), StandardCharsets.UTF_8);
        check(lines.equals(expected), name + ": expected.jsonl differs from the model");
        check(lines.size() == got.size(), name + ": jsonl line count");
        for (int i = 0; i < got.size(); i++) {
            check(Arrays.equals(got.get(i), recs.get(i)), name + ": record " + i + " bytes differ");
            String js = sequence ? json(fromProto(SequenceExample.parseFrom(got.get(i))))
                                 : json(fromProto(Example.parseFrom(got.get(i)).getFeatures()));
            check(js.equals(lines.get(i)), name + ": record " + i + " parses to\n  " + js + "\nexpected\n  " + lines.get(i));
        }
        List<Long> starts = walk(uncompressed(name));
        System.out.printf("OK   %-28s %3d records, %6d bytes on disk%s%n", name, got.size(),
                Files.size(dir.resolve(name)), name.endsWith("z") || name.endsWith("zlib")
                        ? ", " + starts.get(starts.size() - 1) + " uncompressed" : "");
    }

    static String expectFailure(String name) throws IOException {
        int n = 0;
        try (InputStream in = open(name)) {
            TFRecordReader r = new TFRecordReader(in, true);
            while (r.read() != null) n++;
        } catch (IOException e) {
            String msg = e.getClass().getSimpleName() + ": " + e.getMessage();
            System.out.printf("FAIL %-28s (as intended) after %d good records: %s%n", name, n, msg);
            return msg;
        }
        throw new IllegalStateException(name + ": TFRecordReader read " + n + " records without an error");
    }

    static void check(boolean ok, String what) {
        if (!ok) throw new IllegalStateException("check failed: " + what);
    }

    // ---------------------------------------------------------------- main

    public static void main(String[] args) throws Exception {
        dir = Path.of(args.length > 0 ? args[0] : "out");
        Files.createDirectories(dir);

        // 1/2. examples (+ gzip, zlib)
        List<Ex> exs = examples();
        List<byte[]> exRecs = exampleRecords(exs);
        check(exRecs.get(3).length == 0, "empty Example is 0 bytes");
        check(exRecs.get(4).length == 2, "Example{features{}} is 2 bytes");
        List<String> exJson = new ArrayList<>();
        for (Ex e : exs) exJson.add(json(e));
        byte[] exFile = frame(exRecs);
        put("examples.tfrecord", exFile);
        putLines("examples.tfrecord.expected.jsonl", exJson);
        put("examples.tfrecord.gz", frameWrapped(exRecs, MakeTfRecord::gzip));
        putLines("examples.tfrecord.gz.expected.jsonl", exJson);
        put("examples.tfrecord.zlib", frameWrapped(exRecs, DeflaterOutputStream::new));
        putLines("examples.tfrecord.zlib.expected.jsonl", exJson);

        // 3. sequence examples
        List<Seq> seqs = sequences();
        List<byte[]> seqRecs = new ArrayList<>();
        List<String> seqJson = new ArrayList<>();
        for (Seq s : seqs) { seqRecs.add(sequenceBytes(s)); seqJson.add(json(s)); }
        check(seqRecs.get(3).length == 0, "empty SequenceExample is 0 bytes");
        put("sequence.tfrecord", frame(seqRecs));
        putLines("sequence.tfrecord.expected.jsonl", seqJson);

        // 4. unpacked + wire edge cases (hand-written record bytes, framed by the real writer)
        List<Ex> upModel = new ArrayList<>();
        List<byte[]> upRecs = new ArrayList<>();
        unpacked(upModel, upRecs);
        List<String> upJson = new ArrayList<>();
        for (Ex e : upModel) upJson.add(json(e));
        put("unpacked.tfrecord", frame(upRecs));
        putLines("unpacked.tfrecord.expected.jsonl", upJson);

        List<Ex> weModel = new ArrayList<>();
        List<byte[]> weRecs = new ArrayList<>();
        wireEdge(weModel, weRecs);
        List<String> weJson = new ArrayList<>();
        for (Ex e : weModel) weJson.add(json(e));
        put("wire_edge.tfrecord", frame(weRecs));
        putLines("wire_edge.tfrecord.expected.jsonl", weJson);

        // 5. corrupt copies of examples.tfrecord
        List<Long> starts = walk(exFile);
        int bad = 2;                                   // corrupt record index 2
        long recStart = starts.get(bad);
        long dataByte = recStart + 12 + exRecs.get(bad).length / 2;
        byte[] c1 = exFile.clone();
        c1[(int) dataByte] ^= 0x01;
        put("corrupt_data_crc.tfrecord", c1);
        long lenByte = recStart;                       // least significant byte of the u64 length
        byte[] c2 = exFile.clone();
        c2[(int) lenByte] ^= 0x01;
        put("corrupt_length_crc.tfrecord", c2);
        int cut = 5;                                   // truncated inside record 5's data
        long cutAt = starts.get(cut) + 12 + exRecs.get(cut).length / 2;
        put("truncated.tfrecord", Arrays.copyOf(exFile, (int) cutAt));
        long cutHdr = starts.get(cut) + 4;             // truncated inside record 5's length field
        put("truncated_header.tfrecord", Arrays.copyOf(exFile, (int) cutHdr));

        // ---- read everything back with the real reader
        verify("examples.tfrecord", exRecs, exJson, false);
        verify("examples.tfrecord.gz", exRecs, exJson, false);
        verify("examples.tfrecord.zlib", exRecs, exJson, false);
        verify("sequence.tfrecord", seqRecs, seqJson, true);
        verify("unpacked.tfrecord", upRecs, upJson, false);
        verify("wire_edge.tfrecord", weRecs, weJson, false);
        for (int i = 0; i < upRecs.size(); i++) {   // really non-canonical: re-serializing changes the bytes
            check(!Arrays.equals(Example.parseFrom(upRecs.get(i)).toByteArray(), upRecs.get(i)), "unpacked " + i + " is canonical");
        }
        String m1 = expectFailure("corrupt_data_crc.tfrecord");
        String m2 = expectFailure("corrupt_length_crc.tfrecord");
        String m3 = expectFailure("truncated.tfrecord");
        // TFRecordReader 1.15.0 treats a short read of the 8-byte length as a clean EOF (returns null),
        // so it does NOT flag truncated_header.tfrecord; TF's C++ reader reports "truncated record at N".
        check(readAll("truncated_header.tfrecord").size() == cut, "truncated_header: Java reader stops at record " + cut);
        System.out.println("NOTE truncated_header.tfrecord: TFRecordReader returns " + cut
                + " records and a silent EOF (C++ TF: DataLossError truncated record)");

        StringBuilder rs = new StringBuilder();
        rs.append("| record | offset | data length |\n|---|---|---|\n");
        for (int i = 0; i < exRecs.size(); i++) {
            rs.append("| ").append(i).append(" | ").append(starts.get(i)).append(" | ").append(exRecs.get(i).length).append(" |\n");
        }
        rs.append("| (EOF) | ").append(exFile.length).append(" | |\n");
        String layout = rs.toString();

        long dataStart = recStart + 12;
        long cutData = starts.get(cut) + 12;
        String corrupt = """
                | file | what | TFRecordReader 1.15.0 (CRC checks on) | TF C++ `RecordReader` (from `record_reader.cc`, not run) |
                |---|---|---|---|
                | `corrupt_data_crc.tfrecord` | byte at offset %d (inside record %d's data; record starts at %d, data at %d) XOR 0x01 | records 0..%d read, then `%s` | `DataLossError: corrupted record at %d` |
                | `corrupt_length_crc.tfrecord` | byte at offset %d (least significant byte of record %d's u64 length: %d becomes %d) XOR 0x01 | records 0..%d read, then `%s` | `DataLossError: corrupted record at %d` |
                | `truncated.tfrecord` | file cut to %d bytes: inside record %d's data (record starts at %d, data at %d, data length %d) | records 0..%d read, then `%s` | `DataLossError: truncated record at %d` |
                | `truncated_header.tfrecord` | file cut to %d bytes: 4 bytes into record %d's 8-byte length | records 0..%d read, then **silent EOF**: the Java reader treats any short read of the length as end of file | `DataLossError: truncated record at %d` — Stoker should fail here too |

                Any reader must fail on all four, naming the file, the record index and the offset.
                """.formatted(
                dataByte, bad, recStart, dataStart, bad - 1, m1, dataStart,
                lenByte, bad, exRecs.get(bad).length, exRecs.get(bad).length ^ 1, bad - 1, m2, recStart,
                cutAt, cut, starts.get(cut), cutData, exRecs.get(cut).length, cut - 1, m3, cutData,
                cutHdr, cut, cut - 1, starts.get(cut));

        StringBuilder sizes = new StringBuilder();
        for (String n : written) sizes.append("| `").append(n).append("` | ").append(Files.size(dir.resolve(n))).append(" |\n");

        String readme = README.replace("@LAYOUT@", layout).replace("@CORRUPT@", corrupt).replace("@SIZES@", sizes);
        Files.writeString(dir.resolve("README.md"), readme);
        System.out.println("all fixtures verified; written to " + dir.toAbsolutePath());
    }

    static final String README = """
            # TFRecord interop fixtures

            Written by the real TensorFlow Java classes and read back with them (CRC checks on):

            - `org.tensorflow:tensorflow-hadoop:1.15.0` — `org.tensorflow.hadoop.util.TFRecordWriter` (framing,
              masked CRC-32C via `Crc32C` → `org.apache.hadoop.util.PureJavaCrc32C`) and `TFRecordReader`.
            - `org.tensorflow:proto:1.15.0` — generated `org.tensorflow.example.Example`, `SequenceExample`,
              `Features`, `Feature`, `FeatureLists`, ... on `com.google.protobuf:protobuf-java:3.5.1`.
            - `org.apache.hadoop:hadoop-common:2.6.0` with all of its transitive dependencies excluded (only
              `PureJavaCrc32C` is used).
            - GZIP / ZLIB: `java.util.zip.GZIPOutputStream` / `DeflaterOutputStream` (RFC 1952 / RFC 1950, one
              stream around the whole file — what TF's `compression_type="GZIP"` / `"ZLIB"` produce).

            Generator: `stoker-formats/src/test/interop/MakeTfRecord.java`, pom:
            `stoker-formats/src/test/interop/tfrecord-pom.xml` (run instructions at the top of both). The
            generator is deterministic (fixed seed): rerunning it rewrites identical files. Every framing was also
            re-walked with `java.util.zip.CRC32C` (agrees with `PureJavaCrc32C`).

            ## Expected values: `NAME.expected.jsonl`

            One JSON object per record, in file order (`NAME` is the full fixture file name, e.g.
            `examples.tfrecord.gz.expected.jsonl`).

            - Example: `{feature_name: value, ...}`, names sorted (Java `String` order; all names are ASCII).
            - value: `null` for a `Feature` with no kind set; otherwise a JSON array:
              `int64_list` → integers; `float_list` → the float's exact value as a number (Java
              `Double.toString((double) f)`, e.g. `0.1f` → `0.10000000149011612`, `-0.0f` → `-0.0`), NaN (any bit
              pattern) / +Inf / -Inf → the strings `"nan"`, `"inf"`, `"-inf"`; `bytes_list` → `{"bytes": N,
              "sha256": "lowercase hex"}` per value.
            - SequenceExample: `{"context": {features as above}, "feature_lists": {name: [feature, ...]}}`,
              names sorted; each feature inside a list is rendered as a value above (array or `null`).
            - An empty list (`[]`) and no kind (`null`) are different and both occur.

            ## Files

            | file | bytes |
            |---|---|
            @SIZES@
            ### `examples.tfrecord` (+ `.gz`, `.zlib`: the same 10 records)

            10 `tf.train.Example` written with the generated classes (packed repeated scalars, map entries in
            insertion order — not sorted). Features: `id`, `ints` (negatives, `Long.MIN_VALUE`,
            `Long.MAX_VALUE`, an empty list in record 1, 10-byte varints, 300 values in record 9), `floats`
            (NaN with several bit patterns, ±Inf, 0.1f, -0.0f, subnormals, `Float.MAX_VALUE`, empty list in
            record 2), `text` (UTF-8 incl. 4-byte sequences and an empty string; empty list in record 2),
            `image/encoded` (random binary, several values, a 9000-byte value in record 1, a zero-length value in
            record 2), `label` (present only in records 0, 2, 5, 7, 9), `nokind` (record 5 only: Feature with no
            kind → `null`). Record 3 is an empty Example (**0 data bytes**); record 4 is `Example{features: {}}`
            (2 data bytes `0a 00`); both expect `{}`.

            Record layout of `examples.tfrecord` (offset = start of the 12-byte header):

            @LAYOUT@
            ### `sequence.tfrecord`

            6 `tf.train.SequenceExample`: context (`length` int64, `name` bytes, `score` float) and feature_lists
            `tokens` (int64 features of lengths 0..5, one with no kind → `null`), `weights` (float features of
            lengths 0..21, NaN/±Inf), `words` (bytes features). Record 1 has feature lists with zero features;
            record 3 is an empty SequenceExample (**0 data bytes**, expects `{"context": {}, "feature_lists": {}}`);
            record 4 has a context only.

            ### `unpacked.tfrecord`

            4 Example records whose bytes were written by hand (`CodedOutputStream`, explicit tags) and framed by
            the real `TFRecordWriter`: int64 values UNPACKED (tag `0x08`, wire type 0, one per value) and float
            values UNPACKED (tag `0x0d`, wire type 5); record 1 mixes packed and unpacked chunks inside one list
            (a parser must concatenate them in order); record 2 has an `int64_list` with no value fields and a
            packed float field of length 0 (both `[]`). The generated proto classes parse all of them to the
            expected values (re-serializing changes the bytes, i.e. they really are non-canonical).

            ### `wire_edge.tfrecord` (extra: legal protobuf that no TF writer emits)

            5 Example records, hand-written; expected values are what protobuf-java 3.5.1 parses them to
            (and what any conforming protobuf parser must produce):

            0. duplicate map key `x` → the last entry wins (`[2]`);
            1. map entry with value before key; unknown fields (varint field 15, fixed32 field 7, fixed64 field 9,
               length-delimited field 100) in Example, Features, map entry, Feature and FloatList → skipped;
            2. `int64_list` field twice in one Feature → merged `[1, 2, 3]`; `Example.features` twice → maps merged;
            3. map entry with no value field → Feature with no kind (`null`); entry with no key → name `""`;
            4. Feature with `int64_list` then `float_list` (oneof set twice) → the last wins: `[2.5]`.

            Stoker may choose to refuse some of these; if so, drop the case and say why.

            ### Corrupt copies of `examples.tfrecord` (no expected.jsonl)

            @CORRUPT@
            """;
}
