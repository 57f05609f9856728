package dev.stoker.formats.riegeli;

import dev.stoker.CorruptRecordException;
import dev.stoker.CorruptShardException;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.io.MappedFile;
import dev.stoker.formats.io.Parts;
import dev.stoker.formats.records.RecordSource;
import dev.stoker.formats.tfrecord.TfRecordFile;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An ArrayRecord file (Grain's format) read as it is, by index: its records decoded as
 * {@code tf.train.Example}s or kept raw ({@link TfRecordFile.Decode}).
 *
 * <p>NOTE [ArrayRecord]: the file is Riegeli/records ({@link Riegeli}): data chunks of
 * {@code group_size} records each, then a footer chunk, then in the last 64 KiB block the
 * postscript, a simple chunk holding {@code RiegeliPostscript{footer_offset, magic}}. The footer's
 * first record is {@code RiegeliFooterMetadata} (version, chunk and record counts, the writer's
 * options) and each further one an {@code ArrayRecordFooter{chunk_offset, decoded_data_size,
 * num_records}}, so record {@code i} is found by the chunks' cumulative record counts. All of this
 * is checked when the file is opened; a chunk's hashes when it is read. Files written with
 * {@code transpose:true} are refused when opened.
 */
public final class ArrayRecordFile implements RecordSource {
    static final long MAGIC = 0x71930e704fdae05eL;
    private static final int CACHED_CHUNKS = 8;

    private final String name;
    private final MappedFile file;
    private final long[] chunkOffsets;
    private final long[] starts;
    private final TfRecordFile.Decode decode;
    private final long fingerprint;
    private final LinkedHashMap<Integer, List<byte[]>> cache = new LinkedHashMap<>(16, 0.75f, true);

    private ArrayRecordFile(String name, MappedFile file, long[] chunkOffsets, long[] starts, TfRecordFile.Decode decode) {
        this.name = name;
        this.file = file;
        this.chunkOffsets = chunkOffsets;
        this.starts = starts;
        this.decode = decode;
        this.fingerprint = Fingerprints.ends(file.segment());
    }

    public static ArrayRecordFile open(Path path, TfRecordFile.Decode decode) throws IOException {
        MappedFile f = MappedFile.open(path);
        try {
            String name = path.toString();
            MemorySegment s = f.segment();
            long size = s.byteSize();
            if (size < 2L * Riegeli.BLOCK || size % Riegeli.BLOCK != 0) {
                throw new CorruptShardException(name, -1, "not an ArrayRecord file: " + size + " bytes, where ArrayRecord "
                        + "files are a multiple of 64 KiB ending in the postscript's block (a truncated file?)");
            }
            long postscriptAt = size - Riegeli.BLOCK;
            List<byte[]> ps;
            try {
                ps = Riegeli.records(name, Riegeli.chunk(name, s, postscriptAt));
            } catch (CorruptShardException e) {
                throw new CorruptShardException(name, postscriptAt, "not an ArrayRecord file: no postscript in its last "
                        + "64 KiB block (" + e.getMessage() + ")");
            }
            if (ps.isEmpty()) {
                throw new CorruptShardException(name, postscriptAt, "not an ArrayRecord file: its postscript chunk is empty");
            }
            Map<Integer, List<Object>> postscript = fields(name, postscriptAt, ps.get(0));
            if (number(postscript, 2) != MAGIC) {
                throw new CorruptShardException(name, postscriptAt, "not an ArrayRecord file: the postscript's magic is "
                        + Long.toHexString(number(postscript, 2)));
            }
            long footerAt = number(postscript, 1);
            if (footerAt < 0 || footerAt >= postscriptAt) {
                throw new CorruptShardException(name, postscriptAt, "the postscript puts the footer at " + footerAt
                        + ", outside the file's " + postscriptAt + " bytes of chunks");
            }
            List<byte[]> footer = Riegeli.records(name, Riegeli.chunk(name, s, footerAt));
            if (footer.isEmpty()) {
                throw new CorruptShardException(name, footerAt, "the footer chunk holds no records");
            }
            Map<Integer, List<Object>> meta = fields(name, footerAt, footer.get(0));
            if (!meta.containsKey(1)) {
                throw new CorruptShardException(name, footerAt, "the footer's first record has no array_record_metadata");
            }
            Map<Integer, List<Object>> m = fields(name, footerAt, (byte[]) meta.get(1).get(0));
            long version = number(m, 1);
            long chunks = number(m, 2);
            long records = number(m, 3);
            String options = m.containsKey(4) ? new String((byte[]) m.get(4).get(0), java.nio.charset.StandardCharsets.UTF_8) : "";
            if (version != 1) {
                throw new CorruptShardException(name, footerAt, "ArrayRecord version " + version + "; Stoker reads version 1");
            }
            if (options.contains("transpose:true")) {
                throw new CorruptShardException(name, -1, "written with transpose:true (transposed chunks), which Stoker does "
                        + "not read; write the file without transpose");
            }
            if (chunks != footer.size() - 1) {
                throw new CorruptShardException(name, footerAt, "the footer says " + chunks + " chunks and lists " + (footer.size() - 1));
            }
            long[] offsets = new long[(int) chunks];
            long[] starts = new long[(int) chunks + 1];
            long previous = -1;
            for (int i = 0; i < chunks; i++) {
                Map<Integer, List<Object>> e = fields(name, footerAt, footer.get(i + 1));
                offsets[i] = number(e, 1);
                long n = number(e, 3);
                if (offsets[i] <= previous || offsets[i] >= footerAt || n < 0) {
                    throw new CorruptShardException(name, footerAt, "footer entry " + i + ": chunk at " + offsets[i] + " with "
                            + n + " records (chunks come in order, before the footer at " + footerAt + ")");
                }
                previous = offsets[i];
                starts[i + 1] = starts[i] + n;
            }
            if (starts[(int) chunks] != records) {
                throw new CorruptShardException(name, footerAt, "the footer's chunks hold " + starts[(int) chunks]
                        + " records; its metadata says " + records);
            }
            return new ArrayRecordFile(name, f, offsets, starts, decode);
        } catch (IOException | RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /** A message's fields: number -> values (varints and fixed64s as Long, length-delimited as byte[]). */
    private static Map<Integer, List<Object>> fields(String name, long at, byte[] b) throws CorruptShardException {
        Map<Integer, List<Object>> out = new LinkedHashMap<>();
        int[] p = {0};
        while (p[0] < b.length) {
            long tag = Riegeli.varint(name, at, b, p, b.length);
            int field = (int) (tag >>> 3);
            Object v = switch ((int) (tag & 7)) {
                case 0 -> Riegeli.varint(name, at, b, p, b.length);
                case 1 -> {
                    if (b.length - p[0] < 8) {
                        throw new CorruptShardException(name, at, "a protocol buffer cut short");
                    }
                    long x = MemorySegment.ofArray(b).get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED
                            .withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), p[0]);
                    p[0] += 8;
                    yield x;
                }
                case 2 -> {
                    long n = Riegeli.varint(name, at, b, p, b.length);
                    if (n < 0 || n > b.length - p[0]) {
                        throw new CorruptShardException(name, at, "a protocol buffer field runs past its message");
                    }
                    byte[] x = java.util.Arrays.copyOfRange(b, p[0], p[0] + (int) n);
                    p[0] += (int) n;
                    yield x;
                }
                case 5 -> {
                    if (b.length - p[0] < 4) {
                        throw new CorruptShardException(name, at, "a protocol buffer cut short");
                    }
                    p[0] += 4;
                    yield 0L;
                }
                default -> throw new CorruptShardException(name, at, "a protocol buffer with wire type " + (tag & 7));
            };
            out.computeIfAbsent(field, k -> new ArrayList<>()).add(v);
        }
        return out;
    }

    private static long number(Map<Integer, List<Object>> m, int field) {
        List<Object> v = m.get(field);
        return v == null || !(v.get(v.size() - 1) instanceof Long l) ? 0 : l;
    }

    @Override
    public long size() {
        return starts[chunkOffsets.length];
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long fingerprint() {
        return fingerprint;
    }

    private int chunkOf(long index) {
        return Parts.of(starts, index);
    }

    /** Record {@code index}'s bytes. */
    public byte[] raw(long index) throws IOException {
        int c = chunkOf(index);
        List<byte[]> records;
        synchronized (cache) {
            records = cache.get(c);
        }
        if (records == null) {
            Riegeli.Chunk chunk = Riegeli.chunk(name, file.segment(), chunkOffsets[c]);
            records = Riegeli.records(name, chunk);
            if (records.size() != starts[c + 1] - starts[c]) {
                throw new CorruptShardException(name, chunkOffsets[c], "the chunk holds " + records.size()
                        + " records; the footer says " + (starts[c + 1] - starts[c]));
            }
            synchronized (cache) {
                cache.put(c, records);
                if (cache.size() > CACHED_CHUNKS) {
                    cache.remove(cache.keySet().iterator().next());
                }
            }
        }
        return records.get((int) (index - starts[c]));
    }

    @Override
    public Map<String, Object> get(long index) throws IOException {
        byte[] r = raw(index);
        try {
            return decode.fields(r);
        } catch (IllegalArgumentException e) {
            throw new CorruptRecordException(name, -1, "record " + index + " is not a " + decode.what() + ": "
                    + e.getMessage());
        }
    }

    @Override
    public void close() {
        file.close();
    }
}
