package dev.stoker.formats.arrow;

import dev.stoker.CorruptRecordException;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.io.MappedFile;
import dev.stoker.formats.io.Parts;
import dev.stoker.formats.records.RecordSource;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.BodyCompression;
import org.apache.arrow.flatbuf.CompressionType;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.Field;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.FixedSizeBinary;
import org.apache.arrow.flatbuf.FixedSizeList;
import org.apache.arrow.flatbuf.FloatingPoint;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.Int;
import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.Precision;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flatbuf.Schema;
import org.apache.arrow.flatbuf.Type;

/**
 * An Arrow IPC file read as it is, mapped, rows by index: the stream format (what Hugging Face
 * {@code datasets} writes, with or without the continuation marker of writers before 0.15) and the
 * file format ({@code ARROW1}, read by its footer).
 *
 * <p>NOTE [Arrow]: the messages' metadata are flatbuffers, read with {@code arrow-format}'s
 * generated classes; the bodies are never copied: each column of each record batch is a set of
 * views of the mapped file ({@link ArrowColumn}), laid out as the columnar format says (a validity
 * bitmap, then values, or offsets and data, per field in depth-first order). A row is found by the
 * batches' cumulative lengths. Dictionary batches replace their dictionary for the batches that
 * follow, or extend it (deltas). Compressed bodies (LZ4 frame, zstd) are decompressed per buffer.
 * Every length, offset and buffer is checked against the file before it is used; a type Stoker
 * does not read, or a big-endian file, is refused when the schema is read.
 */
public final class ArrowFile implements RecordSource {
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);

    private final String name;
    private final MappedFile file;
    private final List<String> names = new ArrayList<>();
    private final List<ArrowType> types = new ArrayList<>();
    private final Map<String, String> metadata = new LinkedHashMap<>();
    private final List<ArrowColumn[]> batches = new ArrayList<>();
    private long[] starts = {0};
    /** Per column, {@link #fixedWidth}. */
    private long[] widths;
    /** Each top-level column's index, by name. */
    private final Map<String, Integer> columnOf = new HashMap<>();
    private final Map<Long, List<ArrowColumn>> dictionaries = new HashMap<>();
    private final long fingerprint;

    private ArrowFile(String name, MappedFile file) {
        this.name = name;
        this.file = file;
        this.fingerprint = Fingerprints.ends(file.segment());
    }

    public static ArrowFile open(Path path) throws IOException {
        MappedFile f = MappedFile.open(path);
        ArrowFile a = new ArrowFile(path.toString(), f);
        try {
            a.read();
        } catch (IOException | RuntimeException e) {
            f.close();
            throw e;
        }
        return a;
    }

    private void read() throws CorruptShardException {
        MemorySegment s = file.segment();
        long size = s.byteSize();
        boolean fileFormat = size >= 8 && startsWithMagic(s, 0);
        if (fileFormat) {
            readByFooter(s, size);
        } else {
            long pos = 0;
            while (pos < size) {
                long next = message(s, pos, true);
                if (next < 0) {
                    break; // end of stream
                }
                pos = next;
            }
        }
        if (types.isEmpty() && names.isEmpty()) {
            throw new CorruptShardException(name, 0, "not an Arrow IPC file: no schema message");
        }
        long[] st = new long[batches.size() + 1];
        for (int i = 0; i < batches.size(); i++) {
            ArrowColumn[] b = batches.get(i);
            st[i + 1] = st[i] + (b.length == 0 ? 0 : b[0].length);
        }
        starts = st;
        widths = new long[names.size()];
        for (int c = 0; c < widths.length; c++) {
            widths[c] = width(c);
            columnOf.putIfAbsent(names.get(c), c);
        }
    }

    private static boolean startsWithMagic(MemorySegment s, long at) {
        for (int i = 0; i < MAGIC.length; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, at + i) != MAGIC[i]) {
                return false;
            }
        }
        return true;
    }

    private void readByFooter(MemorySegment s, long size) throws CorruptShardException {
        if (size < 18 || !startsWithMagic(s, size - 6)) {
            throw new CorruptShardException(name, size, "an Arrow file (ARROW1 at its start) that does not end with ARROW1: "
                    + "a truncated file?");
        }
        int footerLength = s.get(I32, size - 10);
        long footerAt = size - 10 - footerLength;
        if (footerLength <= 0 || footerAt < 8) {
            throw new CorruptShardException(name, size - 10, "a footer of " + footerLength + " bytes in a file of " + size);
        }
        Footer footer;
        try {
            footer = Footer.getRootAsFooter(s.asSlice(footerAt, footerLength).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN));
            Schema schema = footer.schema();
            if (schema == null) {
                throw new CorruptShardException(name, footerAt, "the footer has no schema");
            }
            schema(schema, footerAt);
            List<Block> blocks = new ArrayList<>();
            for (int i = 0; i < footer.dictionariesLength(); i++) {
                blocks.add(footer.dictionaries(i));
            }
            for (int i = 0; i < footer.recordBatchesLength(); i++) {
                blocks.add(footer.recordBatches(i));
            }
            for (Block b : blocks) {
                if (b.offset() < 8 || b.offset() >= footerAt) {
                    throw new CorruptShardException(name, footerAt, "the footer puts a message at " + b.offset()
                            + ", outside the file's messages [8, " + footerAt + ")");
                }
                message(s, b.offset(), false);
            }
        } catch (IndexOutOfBoundsException | IllegalArgumentException | java.nio.BufferUnderflowException | NullPointerException e) {
            throw new CorruptShardException(name, footerAt, "the footer is not a valid Arrow footer: " + why(e));
        }
    }

    /**
     * Reads the message at {@code pos}; returns where the next begins, or -1 at the end of the
     * stream. {@code stream}: a schema message is expected first.
     */
    private long message(MemorySegment s, long pos, boolean stream) throws CorruptShardException {
        long size = s.byteSize();
        if (size - pos < 4) {
            throw new CorruptShardException(name, pos, "a message cut short: " + (size - pos) + " bytes left (a truncated file?)");
        }
        int first = s.get(I32, pos);
        long at = pos + 4;
        int length = first;
        if (first == -1) { // the continuation marker; writers before Arrow 0.15 write the length alone
            if (size - pos < 8) {
                throw new CorruptShardException(name, pos, "a message cut short after its marker (a truncated file?)");
            }
            length = s.get(I32, pos + 4);
            at = pos + 8;
        }
        if (length == 0) {
            return -1;
        }
        if (length < 0 || length > size - at) {
            throw new CorruptShardException(name, pos, "a message of " + length + " bytes where " + (size - at)
                    + " are left (a truncated or corrupt file?)");
        }
        Message m;
        long bodyLength;
        byte type;
        try {
            m = Message.getRootAsMessage(s.asSlice(at, length).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN));
            bodyLength = m.bodyLength();
            type = m.headerType();
        } catch (IndexOutOfBoundsException | IllegalArgumentException | NullPointerException e) {
            throw new CorruptShardException(name, pos, "a message that is not an Arrow message: " + why(e));
        }
        long bodyAt = at + length;
        if (bodyLength < 0 || bodyLength > size - bodyAt) {
            throw new CorruptShardException(name, pos, "a message body of " + bodyLength + " bytes where " + (size - bodyAt)
                    + " are left (a truncated file?)");
        }
        MemorySegment body = s.asSlice(bodyAt, bodyLength);
        try {
            switch (type) {
                case MessageHeader.Schema -> {
                    if (stream && !names.isEmpty()) {
                        throw new CorruptShardException(name, pos, "a second schema message");
                    }
                    if (stream) {
                        schema((Schema) m.header(new Schema()), pos);
                    }
                }
                case MessageHeader.RecordBatch -> {
                    need(pos);
                    RecordBatch rb = (RecordBatch) m.header(new RecordBatch());
                    batches.add(batch(rb, body, types, pos, true));
                }
                case MessageHeader.DictionaryBatch -> {
                    need(pos);
                    dictionary((DictionaryBatch) m.header(new DictionaryBatch()), body, pos);
                }
                default -> throw new CorruptShardException(name, pos, "a message of type "
                        + headerName(type) + ", which Stoker does not read");
            }
        } catch (IndexOutOfBoundsException | IllegalArgumentException | NullPointerException e) {
            throw new CorruptShardException(name, pos, "a malformed " + headerName(type) + " message: "
                    + why(e));
        }
        return bodyAt + bodyLength;
    }

    /**
     * What a flatbuffer read of damaged bytes ran into, in words: its offsets point out of the
     * buffer (an index out of bounds), or a table it needs is absent (flatbuffers' accessors then
     * give null, met as a NullPointerException).
     */
    private static String why(RuntimeException e) {
        if (e instanceof NullPointerException) {
            return "a part it needs is missing";
        }
        if (e instanceof IllegalArgumentException && e.getMessage() != null) {
            return e.getMessage();
        }
        return e.getMessage() != null ? "an offset out of place (" + e.getMessage() + ")" : "an offset out of place";
    }

    /** A message header type's name, or its number when it is none Arrow defines (a corrupt message). */
    private static String headerName(byte type) {
        return type >= 0 && type < MessageHeader.names.length ? MessageHeader.name(type) : "unknown (" + type + ")";
    }

    private void need(long pos) throws CorruptShardException {
        if (names.isEmpty()) {
            throw new CorruptShardException(name, pos, "data before the schema message");
        }
    }

    private void schema(Schema schema, long pos) throws CorruptShardException {
        if (schema.endianness() != Endianness.Little) {
            throw new CorruptShardException(name, pos, "a big-endian Arrow file, which Stoker does not read");
        }
        for (int i = 0; i < schema.customMetadataLength(); i++) {
            KeyValue kv = schema.customMetadata(i);
            metadata.put(kv.key(), kv.value());
        }
        for (int i = 0; i < schema.fieldsLength(); i++) {
            Field f = schema.fields(i);
            names.add(f.name());
            types.add(type(f, f.name(), pos));
        }
    }

    private ArrowType type(Field f, String path, long pos) throws CorruptShardException {
        List<ArrowType> children = new ArrayList<>();
        for (int i = 0; i < f.childrenLength(); i++) {
            Field c = f.children(i);
            children.add(type(c, path + "." + c.name(), pos));
        }
        ArrowType.Dictionary dict = null;
        if (f.dictionary() != null) {
            Int index = f.dictionary().indexType();
            dict = new ArrowType.Dictionary(f.dictionary().id(), index == null ? DType.INT32 : integer(index, path, pos));
        }
        byte t = f.typeType();
        ArrowType.Kind kind;
        DType dtype = null;
        long size = 0;
        switch (t) {
            case Type.Null -> kind = ArrowType.Kind.NULL;
            case Type.Bool -> kind = ArrowType.Kind.BOOL;
            case Type.Int -> {
                kind = ArrowType.Kind.INT;
                dtype = integer((Int) f.type(new Int()), path, pos);
            }
            case Type.FloatingPoint -> {
                kind = ArrowType.Kind.FLOAT;
                dtype = switch (((FloatingPoint) f.type(new FloatingPoint())).precision()) {
                    case Precision.HALF -> DType.FLOAT16;
                    case Precision.SINGLE -> DType.FLOAT32;
                    default -> DType.FLOAT64;
                };
            }
            case Type.Utf8 -> kind = ArrowType.Kind.UTF8;
            case Type.LargeUtf8 -> kind = ArrowType.Kind.LARGE_UTF8;
            case Type.Binary -> kind = ArrowType.Kind.BINARY;
            case Type.LargeBinary -> kind = ArrowType.Kind.LARGE_BINARY;
            case Type.FixedSizeBinary -> {
                kind = ArrowType.Kind.FIXED_BINARY;
                size = ((FixedSizeBinary) f.type(new FixedSizeBinary())).byteWidth();
            }
            case Type.List -> kind = ArrowType.Kind.LIST;
            case Type.LargeList -> kind = ArrowType.Kind.LARGE_LIST;
            case Type.FixedSizeList -> {
                kind = ArrowType.Kind.FIXED_LIST;
                size = ((FixedSizeList) f.type(new FixedSizeList())).listSize();
            }
            case Type.Struct_ -> kind = ArrowType.Kind.STRUCT;
            default -> throw new CorruptShardException(name, pos, "column '" + path + "' has Arrow type "
                    + (t >= 0 && t < Type.names.length ? Type.names[t] : String.valueOf(t)) + ", which Stoker does not read");
        }
        int want = switch (kind) {
            case LIST, LARGE_LIST, FIXED_LIST -> 1;
            case STRUCT -> children.size();
            default -> 0;
        };
        if (children.size() != want || size < 0) {
            throw new CorruptShardException(name, pos, "column '" + path + "' (" + kind + ") has " + children.size() + " children");
        }
        return new ArrowType(path, f.name(), kind, dtype, size, List.copyOf(children), dict);
    }

    private DType integer(Int i, String path, long pos) throws CorruptShardException {
        return switch (i.bitWidth()) {
            case 8 -> i.isSigned() ? DType.INT8 : DType.UINT8;
            case 16 -> i.isSigned() ? DType.INT16 : DType.UINT16;
            case 32 -> i.isSigned() ? DType.INT32 : DType.UINT32;
            case 64 -> i.isSigned() ? DType.INT64 : DType.UINT64;
            default -> throw new CorruptShardException(name, pos, "column '" + path + "' has integers of " + i.bitWidth() + " bits");
        };
    }

    /** The columns of a record batch (or a dictionary's, {@code withDictionaries} false), views of its body. */
    private ArrowColumn[] batch(RecordBatch rb, MemorySegment body, List<ArrowType> fields, long pos, boolean withDictionaries)
            throws CorruptShardException {
        BodyCompression c = rb.compression();
        int[] cursor = {0, 0}; // next node, next buffer
        ArrowColumn[] out = new ArrowColumn[fields.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = column(rb, body, c, fields.get(i), cursor, pos, withDictionaries);
            if (out[i].length != rb.length()) {
                throw new CorruptShardException(name, pos, "column '" + fields.get(i).name() + "' has " + out[i].length
                        + " rows in a record batch of " + rb.length());
            }
        }
        return out;
    }

    private ArrowColumn column(RecordBatch rb, MemorySegment body, BodyCompression c, ArrowType t, int[] cursor, long pos,
                               boolean withDictionaries) throws CorruptShardException {
        if (cursor[0] >= rb.nodesLength()) {
            throw new CorruptShardException(name, pos, "a record batch with " + rb.nodesLength() + " field nodes, fewer than its schema's");
        }
        FieldNode node = rb.nodes(cursor[0]++);
        MemorySegment validity = null;
        if (t.hasValidity()) {
            MemorySegment v = buffer(rb, body, c, cursor, pos, t);
            validity = v.byteSize() == 0 ? null : v;
            if (node.nullCount() > 0 && (validity == null || validity.byteSize() * 8 < node.length())) {
                throw new CorruptShardException(name, pos, "column '" + t.name() + "' has " + node.nullCount()
                        + " nulls and a validity bitmap of " + (validity == null ? 0 : validity.byteSize()) + " bytes");
            }
        }
        boolean encoded = t.dictionary() != null && withDictionaries;
        ArrowType layout = encoded ? t : new ArrowType(t.name(), t.field(), t.kind(), t.dtype(), t.size(), t.children(), null);
        MemorySegment[] buffers = new MemorySegment[layout.buffers()];
        for (int i = 0; i < buffers.length; i++) {
            buffers[i] = buffer(rb, body, c, cursor, pos, t);
        }
        ArrowColumn[] children = new ArrowColumn[encoded ? 0 : t.children().size()];
        for (int i = 0; i < children.length; i++) {
            children[i] = column(rb, body, c, t.children().get(i), cursor, pos, withDictionaries);
        }
        ArrowColumn col = new ArrowColumn(layout, node.length(), node.nullCount(), validity, buffers, children);
        if (encoded) {
            col.dictionary = dictionaries.get(t.dictionary().id());
        }
        return col;
    }

    private MemorySegment buffer(RecordBatch rb, MemorySegment body, BodyCompression c, int[] cursor, long pos, ArrowType t)
            throws CorruptShardException {
        if (cursor[1] >= rb.buffersLength()) {
            throw new CorruptShardException(name, pos, "a record batch with " + rb.buffersLength() + " buffers, fewer than its "
                    + "schema needs (at column '" + t.name() + "')");
        }
        var b = rb.buffers(cursor[1]++);
        if (b.offset() < 0 || b.length() < 0 || b.offset() > body.byteSize() - b.length()) {
            throw new CorruptShardException(name, pos, "column '" + t.name() + "': a buffer at [" + b.offset() + ", "
                    + (b.offset() + b.length()) + ") of a body of " + body.byteSize() + " bytes (a truncated file?)");
        }
        MemorySegment raw = body.asSlice(b.offset(), b.length());
        return c == null || raw.byteSize() == 0 ? raw : decompress(raw, c.codec(), pos, t);
    }

    /** A compressed buffer: its uncompressed length (-1: stored as it is), then an LZ4 frame or a zstd frame. */
    private MemorySegment decompress(MemorySegment raw, byte codec, long pos, ArrowType t) throws CorruptShardException {
        if (raw.byteSize() < 8) {
            throw new CorruptShardException(name, pos, "column '" + t.name() + "': a compressed buffer of " + raw.byteSize() + " bytes");
        }
        long n = raw.get(I64, 0);
        MemorySegment data = raw.asSlice(8);
        if (n == -1) {
            return data;
        }
        if (n < 0 || n > Integer.MAX_VALUE - 16) {
            throw new CorruptShardException(name, pos, "column '" + t.name() + "': a buffer that decompresses to " + n + " bytes");
        }
        byte[] in = data.toArray(ValueLayout.JAVA_BYTE);
        dev.stoker.formats.io.Compression c = codec == CompressionType.ZSTD ? dev.stoker.formats.io.Compression.ZSTD
                : dev.stoker.formats.io.Compression.LZ4;
        return MemorySegment.ofArray(c.block(in, 0, in.length, (int) n, name + " column '" + t.name() + "'", pos));
    }

    private void dictionary(DictionaryBatch d, MemorySegment body, long pos) throws CorruptShardException {
        ArrowType valueType = null;
        for (ArrowType t : types) {
            valueType = valueType != null ? valueType : find(t, d.id());
        }
        if (valueType == null) {
            throw new CorruptShardException(name, pos, "a dictionary batch for id " + d.id() + ", which no column uses");
        }
        ArrowColumn values = batch(d.data(), body, List.of(valueType), pos, false)[0];
        List<ArrowColumn> chunks = d.isDelta() && dictionaries.containsKey(d.id())
                ? new ArrayList<>(dictionaries.get(d.id())) : new ArrayList<>();
        chunks.add(values);
        dictionaries.put(d.id(), List.copyOf(chunks)); // batches read before keep the dictionary they were read with
    }

    private static ArrowType find(ArrowType t, long id) {
        if (t.dictionary() != null && t.dictionary().id() == id) {
            return t;
        }
        for (ArrowType c : t.children()) {
            ArrowType f = find(c, id);
            if (f != null) {
                return f;
            }
        }
        return null;
    }

    @Override
    public DType raggedType(String field) {
        ArrowType t = null;
        List<ArrowType> level = types;
        for (String part : field.split("\\.", -1)) {
            t = null;
            for (ArrowType c : level) {
                if (c.field().equals(part)) {
                    t = c;
                }
            }
            if (t == null) {
                return null;
            }
            level = t.children();
        }
        boolean list = t.kind() == ArrowType.Kind.LIST || t.kind() == ArrowType.Kind.LARGE_LIST;
        ArrowType item = list ? t.children().get(0) : null;
        return item != null && item.dictionary() == null && (item.kind() == ArrowType.Kind.INT || item.kind() == ArrowType.Kind.FLOAT)
                ? item.dtype() : null;
    }

    /**
     * A top-level column of integers or floats, or of fixed-size lists of them, with no nulls in
     * any record batch: stored as its values' bytes, {@code width} per row.
     */
    @Override
    public long fixedWidth(String field) {
        Integer c = columnOf.get(field);
        return c == null ? -1 : widths[c];
    }

    private long width(int c) {
        ArrowType t = types.get(c);
        long elements = 1;
        ArrowType values = t;
        if (t.kind() == ArrowType.Kind.FIXED_LIST && t.dictionary() == null) {
            elements = t.size();
            values = t.children().get(0);
        }
        if (values.dictionary() != null || t.dictionary() != null
                || values.kind() != ArrowType.Kind.INT && values.kind() != ArrowType.Kind.FLOAT) {
            return -1;
        }
        for (ArrowColumn[] b : batches) {
            ArrowColumn col = b[c];
            if (col.nullCount > 0 || values != t && col.children[0].nullCount > 0) {
                return -1;
            }
        }
        return elements * values.dtype().byteSize();
    }

    @Override
    public void copyFixed(String field, long index, int count, MemorySegment dst, long at) throws IOException {
        int c = columnOf.get(field);
        long width = widths[c];
        int b = batchOf(index);
        while (count > 0) {
            ArrowColumn col = batches.get(b)[c];
            long row = index - starts[b];
            int n = (int) Math.min(count, col.length - row);
            MemorySegment values = col.type.kind() == ArrowType.Kind.FIXED_LIST ? col.children[0].buffers[0] : col.buffers[0];
            if ((row + n) * width > values.byteSize()) {
                throw new CorruptRecordException(name, -1, "column '" + field + "' of record batch " + b + ": rows up to "
                        + (row + n) + " need " + (row + n) * width + " bytes; its buffer has " + values.byteSize());
            }
            MemorySegment.copy(values, row * width, dst, at, n * width);
            index += n;
            count -= n;
            at += n * width;
            b++;
        }
    }

    private int batchOf(long index) {
        return Parts.of(starts, index);
    }

    /** The schema's custom metadata (Hugging Face's features are under {@code huggingface}). */
    public Map<String, String> metadata() {
        return metadata;
    }

    /** The top-level columns' names. */
    public List<String> columns() {
        return List.copyOf(names);
    }

    @Override
    public long size() {
        return starts[starts.length - 1];
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
    public Map<String, Object> get(long index) throws IOException {
        if (index < 0 || index >= size()) {
            throw new IndexOutOfBoundsException("row " + index + " of " + size());
        }
        int lo = batchOf(index);
        ArrowColumn[] cols = batches.get(lo);
        long row = index - starts[lo];
        Map<String, Object> out = new LinkedHashMap<>();
        for (int c = 0; c < cols.length; c++) {
            try {
                out.put(names.get(c), cols[c].value(row));
            } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
                throw new CorruptRecordException(name, -1, "row " + index + " (record batch " + lo + ", row " + row
                        + "), column '" + names.get(c) + "': " + e.getMessage());
            }
        }
        return out;
    }

    @Override
    public String where(long index) {
        return name + " row " + index;
    }

    @Override
    public void close() {
        file.close();
    }
}
