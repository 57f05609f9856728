package dev.stoker.formats.tensors;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.io.MappedFile;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.npy.NpyArray;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a safetensors file: an 8-byte little-endian header length, a JSON header
 * ({@code {"NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}, "__metadata__": {...}}}),
 * then the tensors' bytes, little-endian and in C order, each mapped in place. Checked as the
 * reference implementation checks it, and refused with the file and the tensor named otherwise:
 * a header within the file (and at most 100 MB), valid UTF-8 JSON without duplicate names, a
 * known dtype, a size of {@code product(shape) × itemsize} for each tensor, and the tensors'
 * ranges laid end to end from the first data byte to the file's end, with neither overlap nor
 * gap.
 */
final class SafeTensors {
    /** The reference implementation's bound on the header. */
    private static final long MAX_HEADER = 100_000_000;
    private static final ObjectMapper JSON = JsonMapper.builder().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION).build();

    private SafeTensors() {
    }

    /** Whether {@code path} begins as a safetensors file does: a header length within the file, then {@code '{'}. */
    public static boolean looksLike(Path path) throws IOException {
        try (var ch = java.nio.channels.FileChannel.open(path)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN);
            while (b.hasRemaining() && ch.read(b) > 0) {
                // the first nine bytes, or fewer for a shorter file
            }
            if (b.position() < 9) {
                return false;
            }
            long n = b.getLong(0);
            return b.get(8) == '{' && n >= 2 && n <= ch.size() - 8;
        }
    }

    /** Reads the tensors of a safetensors file. */
    public static TensorFile open(Path path) throws IOException {
        String file = path.toString();
        MappedFile f = MappedFile.open(path);
        try {
            MemorySegment s = f.segment();
            long size = s.byteSize();
            if (size < 8) {
                throw new CorruptShardException(file, 0, "a safetensors file of " + size + " bytes (its header length alone is 8)");
            }
            long n = s.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
            if (n < 0 || n > size - 8) {
                throw new CorruptShardException(file, 0, "a header of " + Long.toUnsignedString(n) + " bytes in a file of " + size
                        + ": not a safetensors file, or a truncated one");
            }
            if (n > MAX_HEADER) {
                throw new CorruptShardException(file, 0, "a header of " + n + " bytes (safetensors allows " + MAX_HEADER + ")");
            }
            byte[] text = s.asSlice(8, n).toArray(ValueLayout.JAVA_BYTE);
            JsonNode header;
            try {
                var decoder = StandardCharsets.UTF_8.newDecoder();
                header = JSON.readTree(decoder.decode(java.nio.ByteBuffer.wrap(text)).toString());
            } catch (java.nio.charset.CharacterCodingException e) {
                throw new CorruptShardException(file, 8, "the header is not UTF-8");
            } catch (JsonProcessingException e) {
                throw new CorruptShardException(file, 8, "the header is not JSON: " + e.getOriginalMessage());
            }
            if (header == null || !header.isObject()) {
                throw new CorruptShardException(file, 8, "the header is not a JSON object");
            }
            long base = 8 + n;
            long dataSize = size - base;
            record Range(String name, DType dtype, long[] shape, long begin, long end) {
            }
            List<Range> ranges = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = header.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String name = e.getKey();
                JsonNode t = e.getValue();
                if (name.equals("__metadata__")) {
                    if (!t.isObject()) {
                        throw new CorruptShardException(file, 8, "__metadata__ is not an object of strings");
                    }
                    continue;
                }
                if (!t.isObject() || !t.path("dtype").isTextual() || !t.path("shape").isArray() || !t.path("data_offsets").isArray()
                        || t.path("data_offsets").size() != 2) {
                    throw new CorruptShardException(file, 8, "tensor '" + name + "': expected {\"dtype\", \"shape\", \"data_offsets\": [begin, end]}");
                }
                DType dtype = dtype(t.get("dtype").asText(), name, file);
                long[] shape = new long[t.get("shape").size()];
                long elements = 1;
                try {
                    for (int i = 0; i < shape.length; i++) {
                        JsonNode d = t.get("shape").get(i);
                        if (!d.canConvertToExactIntegral() || !d.canConvertToLong() || d.asLong() < 0) {
                            throw new CorruptShardException(file, 8, "tensor '" + name + "': shape " + t.get("shape") + " must hold sizes >= 0");
                        }
                        shape[i] = d.asLong();
                        elements = Math.multiplyExact(elements, shape[i]);
                    }
                    elements = Math.multiplyExact(elements, (long) dtype.byteSize());
                } catch (ArithmeticException x) {
                    throw new CorruptShardException(file, 8, "tensor '" + name + "': shape " + t.get("shape") + " is larger than any file");
                }
                JsonNode o = t.get("data_offsets");
                if (!o.get(0).canConvertToExactIntegral() || !o.get(1).canConvertToExactIntegral() || !o.get(0).canConvertToLong()
                        || !o.get(1).canConvertToLong()) {
                    throw new CorruptShardException(file, 8, "tensor '" + name + "': data_offsets " + o + " are not two integers");
                }
                long begin = o.get(0).asLong();
                long end = o.get(1).asLong();
                if (begin < 0 || end < begin || end > dataSize) {
                    throw new CorruptShardException(file, 8, "tensor '" + name + "': data_offsets [" + begin + ", " + end
                            + "] lie outside the " + dataSize + " data bytes");
                }
                if (end - begin != elements) {
                    throw new CorruptShardException(file, base + begin, "tensor '" + name + "': shape " + t.get("shape") + " of "
                            + t.get("dtype").asText() + " is " + elements + " bytes, its data_offsets give " + (end - begin));
                }
                ranges.add(new Range(name, dtype, shape, begin, end));
            }
            List<Range> sorted = new ArrayList<>(ranges);
            sorted.sort(java.util.Comparator.comparingLong(Range::begin).thenComparingLong(Range::end));
            long expect = 0;
            for (Range r : sorted) {
                if (r.begin() != expect) {
                    throw new CorruptShardException(file, base + r.begin(), "tensor '" + r.name() + "' begins at data byte "
                            + r.begin() + " where " + expect + " was expected (" + (r.begin() < expect ? "it overlaps the tensor before it"
                            : "a gap of " + (r.begin() - expect) + " bytes no tensor holds") + ")");
                }
                expect = r.end();
            }
            if (expect != dataSize) {
                throw new CorruptShardException(file, base + expect, "the tensors end at data byte " + expect + " of " + dataSize
                        + ": bytes no tensor holds");
            }
            Map<String, NpyArray> arrays = new LinkedHashMap<>();
            for (Range r : ranges) {
                arrays.put(r.name(), Npy.view(file + "!" + r.name(), r.dtype(), ByteOrder.LITTLE_ENDIAN, r.shape(),
                        s.asSlice(base + r.begin(), r.end() - r.begin()), () -> { }));
            }
            return new TensorFile(file, "safetensors", arrays, false, List.of(f));
        } catch (IOException | RuntimeException e) {
            f.close();
            throw e;
        }
    }

    private static DType dtype(String code, String name, String file) throws CorruptShardException {
        return switch (code) {
            case "BOOL" -> DType.BOOL;
            case "U8" -> DType.UINT8;
            case "I8" -> DType.INT8;
            case "I16" -> DType.INT16;
            case "U16" -> DType.UINT16;
            case "I32" -> DType.INT32;
            case "U32" -> DType.UINT32;
            case "I64" -> DType.INT64;
            case "U64" -> DType.UINT64;
            case "F16" -> DType.FLOAT16;
            case "BF16" -> DType.BFLOAT16;
            case "F32" -> DType.FLOAT32;
            case "F64" -> DType.FLOAT64;
            default -> throw new CorruptShardException(file, 8, "tensor '" + name + "': dtype '" + code + "' is not read "
                    + "(BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64 are)");
        };
    }
}
