package dev.stoker.formats.tfrecord;

import dev.stoker.CorruptRecordException;
import dev.stoker.CorruptShardException;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.io.MappedFile;
import dev.stoker.formats.records.RecordSource;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * A TFRecord file read as it is: plain (mapped), or GZIP or ZLIB compressed as a whole
 * (decompressed into memory when opened, up to 2 GiB), its records decoded as
 * {@code tf.train.Example} (feature name -> values), {@code SequenceExample}, or kept raw
 * ({@code {"record": bytes}}).
 *
 * <p>NOTE [TFRecord]: a record is {@code u64 length}, {@code u32 masked_crc32c(length)},
 * {@code data}, {@code u32 masked_crc32c(data)}, with no header, count or index. Opening walks
 * the lengths once (each length's CRC checked, the file's end on a record's end) and keeps each
 * record's offset, so records are then read by index; a record's data CRC is checked when it is
 * read. Which compression a file has is said by the {@code compression} option, or by its name
 * ({@code .gz}, {@code .zlib}), or else found: gzip's magic, then a plain first record whose
 * length CRC holds, then a zlib header.
 */
public final class TfRecordFile implements RecordSource {
    /** How the file is compressed. */
    public enum Compression { AUTO, NONE, GZIP, ZLIB }

    /**
     * How a record's bytes become named fields: as TensorFlow's protocol buffers
     * ({@code tf.train.Example}, {@code SequenceExample}) or as raw bytes; TFRecord and ArrayRecord
     * files' records alike.
     */
    public enum Decode {
        /** {@code tf.train.Example}: feature name -> list of values. */
        EXAMPLE,
        /** {@code tf.train.SequenceExample}: {@code context} and {@code feature_lists}. */
        SEQUENCE_EXAMPLE,
        /** The record's bytes, as the one field {@code record}. */
        RAW;

        /** The record's fields; IllegalArgumentException when it is not the message this says. */
        public Map<String, Object> fields(byte[] record) {
            return switch (this) {
                case EXAMPLE -> Proto.example(record);
                case SEQUENCE_EXAMPLE -> Proto.sequenceExample(record);
                case RAW -> {
                    Map<String, Object> m = new java.util.LinkedHashMap<>();
                    m.put("record", record);
                    yield m;
                }
            };
        }

        /** What this expects, for errors. */
        public String what() {
            return switch (this) {
                case EXAMPLE -> "tf.train.Example";
                case SEQUENCE_EXAMPLE -> "tf.train.SequenceExample";
                case RAW -> "record";
            };
        }
    }

    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int MASK_DELTA = 0xa282ead8;

    private final String name;
    private final MappedFile mapped;
    private final MemorySegment data;
    private final long[] offsets;
    private final TfRecordFile.Decode decode;
    private final long fingerprint;

    private TfRecordFile(String name, MappedFile mapped, MemorySegment data, long[] offsets, TfRecordFile.Decode decode, long fingerprint) {
        this.name = name;
        this.mapped = mapped;
        this.data = data;
        this.offsets = offsets;
        this.decode = decode;
        this.fingerprint = fingerprint;
    }

    public static TfRecordFile open(Path file, Compression compression, TfRecordFile.Decode decode) throws IOException {
        String name = file.toString();
        MappedFile f = MappedFile.open(file);
        try {
            Compression c = compression == Compression.AUTO ? sniff(file, f.segment()) : compression;
            long fingerprint = Fingerprints.ends(f.segment());
            MemorySegment data = f.segment();
            if (c != Compression.NONE) {
                data = MemorySegment.ofArray(inflate(name, f.segment(), c));
                f.close();
                f = null;
            }
            return new TfRecordFile(name, f, data, scan(name, data, c != Compression.NONE), decode, fingerprint);
        } catch (IOException | RuntimeException e) {
            if (f != null) {
                f.close();
            }
            throw e;
        }
    }

    private static Compression sniff(Path file, MemorySegment s) {
        String n = file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (n.endsWith(".gz") || n.endsWith(".gzip")) {
            return Compression.GZIP;
        }
        if (n.endsWith(".zlib") || n.endsWith(".zz")) {
            return Compression.ZLIB;
        }
        long size = s.byteSize();
        if (size >= 2 && (s.get(ValueLayout.JAVA_BYTE, 0) & 0xFF) == 0x1F && (s.get(ValueLayout.JAVA_BYTE, 1) & 0xFF) == 0x8B) {
            return Compression.GZIP;
        }
        if (size < 12 || masked(s, 0, 8) == s.get(U32, 8)) {
            return Compression.NONE;
        }
        int cmf = s.get(ValueLayout.JAVA_BYTE, 0) & 0xFF;
        int flg = s.get(ValueLayout.JAVA_BYTE, 1) & 0xFF;
        return (cmf & 0x0F) == 8 && (cmf * 256 + flg) % 31 == 0 ? Compression.ZLIB : Compression.NONE;
    }

    private static byte[] inflate(String name, MemorySegment s, Compression c) throws IOException {
        if (s.byteSize() > Integer.MAX_VALUE) {
            throw new CorruptShardException(name, -1, "a " + c + " file of more than 2 GiB; decompress it first");
        }
        byte[] zipped = s.toArray(ValueLayout.JAVA_BYTE);
        dev.stoker.formats.io.Compression codec = c == Compression.GZIP ? dev.stoker.formats.io.Compression.GZIP
                : dev.stoker.formats.io.Compression.ZLIB;
        try (InputStream in = codec.stream(new ByteArrayInputStream(zipped), name)) { // failures named (NOTE [Codec errors])
            byte[] out = in.readNBytes(Integer.MAX_VALUE - 16);
            if (in.read() >= 0) {
                throw new CorruptShardException(name, -1, "decompresses to more than 2 GiB; decompress it first");
            }
            return out;
        }
    }

    /** Each record's offset, walking the lengths (NOTE [TFRecord]). */
    private static long[] scan(String name, MemorySegment s, boolean decompressed) throws CorruptShardException {
        long size = s.byteSize();
        long[] out = new long[1024];
        int n = 0;
        long at = 0;
        String in = decompressed ? " of the decompressed data" : "";
        while (at < size) {
            if (size - at < 12) {
                throw new CorruptShardException(name, at, "record " + n + " is cut short: its 12-byte header has "
                        + (size - at) + " bytes" + in + " (a truncated file?)");
            }
            long length = s.get(U64, at);
            if (masked(s, at, 8) != s.get(U32, at + 8)) {
                throw new CorruptShardException(name, at, "record " + n + ": its length's CRC does not match (a corrupt "
                        + "record, or not a TFRecord file" + (decompressed ? "" : ", or a compressed one: give compression=") + ")");
            }
            if (length < 0 || length > size - at - 16) {
                throw new CorruptShardException(name, at, "record " + n + " of " + Long.toUnsignedString(length)
                        + " bytes runs past the end" + in + " at " + size + " (a truncated file?)");
            }
            if (n == out.length) {
                out = Arrays.copyOf(out, n * 2);
            }
            out[n++] = at;
            at += 16 + length;
        }
        return Arrays.copyOf(out, n);
    }

    /** TFRecord's masked CRC-32C of {@code n} bytes at {@code at}. */
    private static int masked(MemorySegment s, long at, long n) {
        CRC32C crc = new CRC32C();
        crc.update(s.asSlice(at, n).asByteBuffer());
        int c = (int) crc.getValue();
        return ((c >>> 15) | (c << 17)) + MASK_DELTA;
    }

    @Override
    public long size() {
        return offsets.length;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long fingerprint() {
        return fingerprint;
    }

    /** Record {@code index}'s bytes, their CRC checked. */
    public byte[] raw(long index) throws CorruptRecordException {
        long at = offsets[Math.toIntExact(index)];
        long length = data.get(U64, at);
        if (masked(data, at + 12, length) != data.get(U32, at + 12 + length)) {
            throw new CorruptRecordException(name, at, "record " + index + ": its data's CRC does not match (a corrupt record)");
        }
        if (length > Integer.MAX_VALUE - 16) {
            throw new CorruptRecordException(name, at, "record " + index + " of " + length + " bytes is larger than 2 GiB");
        }
        return data.asSlice(at + 12, length).toArray(ValueLayout.JAVA_BYTE);
    }

    @Override
    public Map<String, Object> get(long index) throws IOException {
        byte[] r = raw(index);
        try {
            return decode.fields(r);
        } catch (IllegalArgumentException e) {
            throw new CorruptRecordException(name, offsets[(int) index], "record " + index + " is not a "
                    + decode.what() + ": " + e.getMessage());
        }
    }

    @Override
    public String where(long index) {
        return name + " record " + index;
    }

    @Override
    public void close() {
        if (mapped != null) {
            mapped.close();
        }
    }
}
