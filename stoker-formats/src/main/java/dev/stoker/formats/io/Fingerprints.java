package dev.stoker.formats.io;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Content fingerprints for {@link dev.stoker.Dataset#fingerprint()}: a CRC-32C of a file's first
 * and last 64 KiB with its size, which tells another file of the same length apart in practice
 * and costs two reads however large the file; formats add what they know of their structure.
 * The same for a file in memory and on disk. Public for Stoker's format modules built on this one
 * (HDF5); not a user's API.
 */
public final class Fingerprints {
    /** The bytes at each end that a fingerprint covers. */
    public static final int ENDS = 64 << 10;

    private Fingerprints() {
    }

    /** Of bytes in memory (a mapped file). */
    public static long ends(MemorySegment s) {
        long n = s.byteSize();
        int ends = (int) Math.min(n, ENDS);
        CRC32C crc = new CRC32C();
        crc.update(s.asSlice(0, ends).asByteBuffer());
        crc.update(s.asSlice(n - ends, ends).asByteBuffer());
        return crc.getValue() << 32 ^ n;
    }

    /** Of a file, by two reads. */
    public static long ends(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long n = ch.size();
            int ends = (int) Math.min(n, ENDS);
            CRC32C crc = new CRC32C();
            crc.update(read(ch, 0, ends));
            crc.update(read(ch, n - ends, ends));
            return crc.getValue() << 32 ^ n;
        }
    }

    /**
     * Of shards read as a stream, by their names alone (the last part of each path or URL, in
     * order) and their number: a stream may start from object storage, where the ends of every
     * shard would cost two requests each before the first batch, and its state must resume on a
     * staged copy, which keeps the names. It tells other shards apart, not a shard rewritten
     * under the same name.
     */
    public static long names(java.util.List<String> names) {
        CRC32C crc = new CRC32C();
        for (String n : names) {
            crc.update(dev.stoker.storage.Locations.baseName(n).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            crc.update(0);
        }
        return crc.getValue() << 32 ^ names.size();
    }

    /** A fingerprint extended by {@code more} (order-sensitive): the formats' one rule for it. */
    public static long and(long fingerprint, long more) {
        return fingerprint * 31 + more;
    }

    /** {@code n} bytes of a file from {@code at} (fewer where it ends first). */
    public static ByteBuffer read(FileChannel ch, long at, int n) throws IOException {
        return read(ch, at, ByteBuffer.allocate(n));
    }

    /** Bytes of a file from {@code at} into {@code into}, up to its limit (fewer where the file ends first); flipped. */
    public static ByteBuffer read(FileChannel ch, long at, ByteBuffer into) throws IOException {
        int from = into.position();
        while (into.hasRemaining() && ch.read(into, at + into.position() - from) > 0) {
            // until full, or the file ends early (then the hash differs)
        }
        return into.flip();
    }
}
