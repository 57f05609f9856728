package dev.stoker.formats.tensors;

import dev.stoker.CorruptShardException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The entries of a zip archive held in memory (a mapped file), read from its central directory
 * (ZIP64 too: a {@code torch.save} of more than 4 GiB writes it), each with where its data
 * starts, found from its local header. Every offset and size is checked against the archive's
 * size before it is used, so a damaged archive is named, never read past its end.
 */
final class ZipDirectory {
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** One entry: its compression method (0 stored, 8 deflated), sizes, and the offset of its data in the archive. */
    record Entry(String name, int method, long compressedSize, long size, long dataOffset) {
    }

    private ZipDirectory() {
    }

    /** The entries of the archive {@code zip}, by name, in the central directory's order; {@code file} names it in errors. */
    static Map<String, Entry> read(MemorySegment zip, String file) throws CorruptShardException {
        long size = zip.byteSize();
        long eocd = -1;
        for (long at = size - 22; at >= Math.max(0, size - 22 - 0xFFFF); at--) {
            if (u32(zip, at) == 0x06054b50L) {
                eocd = at;
                break;
            }
        }
        if (eocd < 0) {
            throw new CorruptShardException(file, -1, "not a complete zip archive: no end of central directory record "
                    + "(a truncated file?)");
        }
        long entries = u16(zip, eocd + 10);
        long cdSize = u32(zip, eocd + 12);
        long cdOffset = u32(zip, eocd + 16);
        if (entries == 0xFFFF || cdSize == 0xFFFF_FFFFL || cdOffset == 0xFFFF_FFFFL) {
            long locator = eocd - 20;
            if (locator < 0 || u32(zip, locator) != 0x07064b50L) {
                throw new CorruptShardException(file, eocd, "a ZIP64 archive without its ZIP64 locator");
            }
            long z = zip.get(U64, locator + 8);
            if (z < 0 || z > size - 56 || u32(zip, z) != 0x06064b50L) {
                throw new CorruptShardException(file, locator, "the ZIP64 end of central directory is not where its locator says ("
                        + z + ")");
            }
            entries = zip.get(U64, z + 32);
            cdSize = zip.get(U64, z + 40);
            cdOffset = zip.get(U64, z + 48);
        }
        if (cdOffset < 0 || cdSize < 0 || cdOffset > size || cdSize > size - cdOffset) {
            throw new CorruptShardException(file, eocd, "the central directory (" + cdSize + " bytes at " + cdOffset
                    + ") lies outside the file (" + size + " bytes)");
        }
        if (entries < 0 || entries > cdSize / 46) {
            throw new CorruptShardException(file, eocd, entries + " entries cannot fit a central directory of " + cdSize + " bytes");
        }
        Map<String, Entry> out = new LinkedHashMap<>();
        long at = cdOffset;
        long end = cdOffset + cdSize;
        for (long i = 0; i < entries; i++) {
            if (end - at < 46 || u32(zip, at) != 0x02014b50L) {
                throw new CorruptShardException(file, at, "expected central directory entry " + i + " of " + entries);
            }
            int flags = u16(zip, at + 8);
            int method = u16(zip, at + 10);
            long compressed = u32(zip, at + 20);
            long plain = u32(zip, at + 24);
            int nameLen = u16(zip, at + 28);
            int extraLen = u16(zip, at + 30);
            int commentLen = u16(zip, at + 32);
            long local = u32(zip, at + 42);
            if (46L + nameLen + extraLen + commentLen > end - at) {
                throw new CorruptShardException(file, at, "central directory entry " + i + " runs past the directory's end");
            }
            String name = new String(zip.asSlice(at + 46, nameLen).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
            // ZIP64 extended information: the fields that read 0xFFFFFFFF, in this order
            long x = at + 46 + nameLen;
            long xEnd = x + extraLen;
            while (xEnd - x >= 4) {
                int id = u16(zip, x);
                int len = u16(zip, x + 2);
                if (len > xEnd - x - 4) {
                    break;
                }
                if (id == 1) {
                    long f = x + 4;
                    long fEnd = f + len;
                    if (plain == 0xFFFF_FFFFL && fEnd - f >= 8) {
                        plain = zip.get(U64, f);
                        f += 8;
                    }
                    if (compressed == 0xFFFF_FFFFL && fEnd - f >= 8) {
                        compressed = zip.get(U64, f);
                        f += 8;
                    }
                    if (local == 0xFFFF_FFFFL && fEnd - f >= 8) {
                        local = zip.get(U64, f);
                    }
                }
                x += 4 + len;
            }
            if ((flags & 1) != 0) {
                throw new CorruptShardException(file, at, "entry '" + name + "' is encrypted");
            }
            if (local < 0 || local > size - 30 || u32(zip, local) != 0x04034b50L) {
                throw new CorruptShardException(file, at, "entry '" + name + "': no local header at " + local);
            }
            long data = local + 30 + u16(zip, local + 26) + u16(zip, local + 28);
            if (compressed < 0 || plain < 0 || data > size || compressed > size - data) {
                throw new CorruptShardException(file, local, "entry '" + name + "' (" + compressed + " bytes from byte " + data
                        + ") runs past the end of the file (" + size + " bytes)");
            }
            if (method == 0 && compressed != plain) {
                throw new CorruptShardException(file, at, "stored entry '" + name + "' says " + compressed + " bytes stored for "
                        + plain + " bytes of data");
            }
            if (out.put(name, new Entry(name, method, compressed, plain, data)) != null) {
                throw new CorruptShardException(file, at, "entry '" + name + "' appears twice");
            }
            at += 46L + nameLen + extraLen + commentLen;
        }
        return out;
    }

    private static int u16(MemorySegment s, long at) {
        return s.get(U16, at) & 0xFFFF;
    }

    private static long u32(MemorySegment s, long at) {
        return s.get(U32, at) & 0xFFFF_FFFFL;
    }
}
