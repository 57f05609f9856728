package dev.stoker.formats.riegeli;

import dev.stoker.CorruptShardException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Chunks of a Riegeli/records file (the layout ArrayRecord files are made of), read from a mapped
 * file: 64 KiB blocks whose 24-byte headers interrupt whatever lies at each block's start; chunks
 * of a 40-byte header and their data, each hashed with HighwayHash, both hashes checked. Simple
 * chunks ({@code r}) are decoded, uncompressed or zstd; brotli and snappy chunks, and transposed
 * chunks ({@code t}, from {@code transpose:true}), are refused by name.
 */
final class Riegeli {
    static final int BLOCK = 1 << 16;
    static final int BLOCK_HEADER = 24;
    static final int USABLE = BLOCK - BLOCK_HEADER;
    static final int CHUNK_HEADER = 40;
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Riegeli() {
    }

    /** A chunk: where it begins and ends in the file, its type, record count, and data. */
    public record Chunk(long begin, long end, char type, long records, long decodedSize, byte[] data) {
    }

    /** The chunk beginning at {@code begin} of {@code file} (named {@code name}), its hashes checked. */
    public static Chunk chunk(String name, MemorySegment file, long begin) throws CorruptShardException {
        byte[] header = logical(name, file, begin, CHUNK_HEADER, "the chunk header");
        long headerHash = le(header, 0);
        long computed = HighwayHash.hash64(HighwayHash.RIEGELI_KEY, header, 8, 32);
        if (headerHash != computed) {
            throw new CorruptShardException(name, begin, "the chunk header's hash does not match (a corrupt file, or no "
                    + "chunk begins here)");
        }
        long dataSize = le(header, 8);
        long dataHash = le(header, 16);
        char type = (char) (header[24] & 0xFF);
        long records = le(header, 24) >>> 8;
        long decoded = le(header, 32);
        if (dataSize < 0 || dataSize > Integer.MAX_VALUE - 16 || decoded < 0) {
            throw new CorruptShardException(name, begin, "a chunk of " + Long.toUnsignedString(dataSize)
                    + " bytes, decoded to " + Long.toUnsignedString(decoded) + "; Stoker reads chunks under 2 GiB");
        }
        long dataAt = addWithOverhead(begin, CHUNK_HEADER);
        byte[] data = logical(name, file, dataAt, (int) dataSize, "the chunk's data");
        if (HighwayHash.hash64(HighwayHash.RIEGELI_KEY, data, 0, data.length) != dataHash) {
            throw new CorruptShardException(name, begin, "the data hash of the chunk does not match (its data is corrupt)");
        }
        long end = Math.max(addWithOverhead(begin, CHUNK_HEADER + dataSize), roundUpToChunkBoundary(begin + records));
        return new Chunk(begin, end, type, records, decoded, data);
    }

    /** The records of a chunk: none for signature, metadata and padding chunks; a simple chunk's decoded. */
    public static List<byte[]> records(String name, Chunk c) throws CorruptShardException {
        switch (c.type()) {
            case 's', 'm', 'p' -> {
                return List.of();
            }
            case 't' -> throw new CorruptShardException(name, c.begin(), "a transposed chunk (written with transpose:true), "
                    + "which Stoker does not read; write the file without transpose");
            case 'r' -> {
                return simple(name, c);
            }
            default -> throw new CorruptShardException(name, c.begin(), "a chunk of unknown type '" + c.type() + "'");
        }
    }

    private static List<byte[]> simple(String name, Chunk c) throws CorruptShardException {
        byte[] d = c.data();
        if (d.length < 1) {
            throw new CorruptShardException(name, c.begin(), "a simple chunk with no data");
        }
        int compression = d[0] & 0xFF;
        int[] at = {1};
        long sizesSize = varint(name, c.begin(), d, at, d.length);
        if (sizesSize < 0 || sizesSize > d.length - at[0]) {
            throw new CorruptShardException(name, c.begin(), "a simple chunk's sizes of " + sizesSize + " bytes run past its "
                    + "data of " + d.length);
        }
        int sizesEnd = at[0] + (int) sizesSize;
        byte[] sizes = decompress(name, c, compression, d, at[0], sizesEnd, -1);
        byte[] values = decompress(name, c, compression, d, sizesEnd, d.length, c.decodedSize());
        if (values.length != c.decodedSize()) {
            throw new CorruptShardException(name, c.begin(), "a simple chunk's values are " + values.length
                    + " bytes; its header says " + c.decodedSize());
        }
        List<byte[]> out = new ArrayList<>();
        int[] s = {0};
        int v = 0;
        for (long r = 0; r < c.records(); r++) {
            long n = varint(name, c.begin(), sizes, s, sizes.length);
            if (n < 0 || n > values.length - v) {
                throw new CorruptShardException(name, c.begin(), "record " + r + " of the chunk is " + Long.toUnsignedString(n)
                        + " bytes; only " + (values.length - v) + " are left");
            }
            out.add(Arrays.copyOfRange(values, v, v + (int) n));
            v += (int) n;
        }
        if (v != values.length || s[0] != sizes.length) {
            throw new CorruptShardException(name, c.begin(), "a simple chunk's " + c.records() + " records leave "
                    + (values.length - v) + " value bytes and " + (sizes.length - s[0]) + " size bytes over");
        }
        return out;
    }

    private static byte[] decompress(String name, Chunk c, int compression, byte[] d, int from, int to, long expected)
            throws CorruptShardException {
        if (compression == 0) {
            return Arrays.copyOfRange(d, from, to);
        }
        if (compression != 'z') {
            String codec = compression == 'b' ? "brotli" : compression == 's' ? "snappy" : "compression " + compression;
            throw new CorruptShardException(name, c.begin(), "a chunk compressed with " + codec
                    + ", which Stoker does not decompress (it reads zstd and uncompressed chunks)");
        }
        int[] at = {from};
        long size = varint(name, c.begin(), d, at, to);
        if (size < 0 || size > Integer.MAX_VALUE - 16 || expected >= 0 && size != expected) {
            throw new CorruptShardException(name, c.begin(), "a compressed block of " + Long.toUnsignedString(size)
                    + " bytes" + (expected >= 0 ? "; the chunk header says " + expected : ""));
        }
        return dev.stoker.formats.io.Compression.ZSTD.block(d, at[0], to, (int) size, name, c.begin());
    }

    /**
     * The varint at {@code at[0]} of {@code b}, which ends at {@code end}; {@code at[0]} moves past it.
     * A varint that runs past the end, or past 10 bytes, is corrupt data of the file {@code name}
     * at {@code offset} (the chunk it was read from).
     */
    static long varint(String name, long offset, byte[] b, int[] at, int end) throws CorruptShardException {
        long v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (at[0] >= end) {
                throw new CorruptShardException(name, offset, "a varint runs past the end of its buffer");
            }
            byte x = b[at[0]++];
            v |= (long) (x & 0x7F) << shift;
            if (x >= 0) {
                return v;
            }
        }
        throw new CorruptShardException(name, offset, "a varint of more than 10 bytes");
    }

    /** {@code n} bytes of content from file position {@code pos}, block headers left out. */
    private static byte[] logical(String name, MemorySegment file, long pos, int n, String what) throws CorruptShardException {
        byte[] out = new byte[n];
        int got = 0;
        long p = pos;
        while (got < n) {
            if (p % BLOCK == 0) {
                p += BLOCK_HEADER;
            }
            int take = (int) Math.min(n - got, BLOCK - p % BLOCK);
            if (p + take > file.byteSize()) {
                throw new CorruptShardException(name, pos, what + " (" + n + " bytes) runs past the end of the file at "
                        + file.byteSize() + " (a truncated file?)");
            }
            MemorySegment.copy(file, ValueLayout.JAVA_BYTE, p, out, got, take);
            got += take;
            p += take;
        }
        return out;
    }

    static long addWithOverhead(long pos, long size) {
        long overhead = (size + (pos + USABLE - 1) % BLOCK) / USABLE;
        return pos + size + overhead * BLOCK_HEADER;
    }

    static long roundUpToChunkBoundary(long pos) {
        long remaining = BLOCK - 1 - (pos + BLOCK - 1) % BLOCK;
        return pos + Math.max(0, remaining - (USABLE - 1));
    }

    private static long le(byte[] b, int at) {
        return MemorySegment.ofArray(b).get(U64, at);
    }

    /** Every record of a plain Riegeli/records file, chunk after chunk from its start. */
    public static List<byte[]> readAll(String name, MemorySegment file) throws CorruptShardException {
        List<byte[]> out = new ArrayList<>();
        long pos = 0;
        while (pos < file.byteSize()) {
            Chunk c = chunk(name, file, pos);
            if (pos == 0 && c.type() != 's') {
                throw new CorruptShardException(name, 0, "not a Riegeli/records file: its first chunk is not the signature");
            }
            out.addAll(records(name, c));
            pos = c.end();
        }
        return out;
    }
}
