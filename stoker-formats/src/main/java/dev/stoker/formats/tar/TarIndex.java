package dev.stoker.formats.tar;

import dev.stoker.formats.io.Compression;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.io.PositionedInputStream;
import dev.stoker.formats.io.TarGrouping;
import dev.stoker.formats.io.TarReader;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Where every sample of an uncompressed tar shard lies: for each sample its key and, per field,
 * the byte offset and size of the member's data. Built by one pass over the headers (the data
 * is skipped) and kept in its folder's {@link TarCatalog}, which trusts a stored index only for a
 * shard of the same {@link TarCatalog.Stat} (size, mtime, and where the file system keeps them,
 * ctime and inode); a shard's {@link #fingerprint} (its first and last 4 KiB and the headers of
 * sixteen of the members the index lists) is checked when it is first read, so that a shard
 * rewritten since the dataset opened, or where there is no ctime, is indexed again instead of
 * read at stale offsets.
 */
final class TarIndex {
    /** The members whose header blocks the fingerprint covers, spread evenly over the index. */
    private static final int SAMPLED_HEADERS = 16;
    /** The bytes at each end of a shard that the fingerprint covers: its first member's header, and the end-of-archive blocks. */
    static final int ENDS = 4 << 10;

    final String[] keys;
    final int[] firstField;     // sample s has fields [firstField[s], firstField[s + 1])
    final String[] fieldNames;
    final long[] offsets;
    final long[] sizes;
    /** The size and {@link #fingerprint} of the shard as it was read to build this index. */
    long size;
    long fingerprint;

    private TarIndex(String[] keys, int[] firstField, String[] fieldNames, long[] offsets, long[] sizes) {
        this.keys = keys;
        this.firstField = firstField;
        this.fieldNames = fieldNames;
        this.offsets = offsets;
        this.sizes = sizes;
    }

    public int samples() {
        return keys.length;
    }

    /**
     * Scans the headers of an uncompressed tar shard by positioned reads (a skip moves a position;
     * no mapping, which would serialize threads indexing many shards at once on the process's
     * memory-map lock), and takes the shard's {@link #fingerprint} from the same open file.
     */
    public static TarIndex build(Path shard) throws IOException {
        ByteBuffer scratch = SCRATCH.get();
        try (FileChannel ch = FileChannel.open(shard, StandardOpenOption.READ)) {
            long size = ch.size();
            int ends = (int) Math.min(size, ENDS);
            CRC32C crc = new CRC32C();
            ByteBuffer first = Fingerprints.read(ch, 0, scratch.clear().limit(ends));
            if (Compression.of(java.util.Arrays.copyOf(first.array(), Math.min(Compression.MAGIC_BYTES, first.limit()))) != null) {
                throw new TarDataset.CompressedShardException(shard + ": a compressed shard has no random access; read it as a "
                        + "stream (TarShards) or store it uncompressed");
            }
            crc.update(first);
            List<Integer> headers = new ArrayList<>();
            TarIndex idx = scan(new PositionedInputStream(ch, size, scratch), shard.toString(), headers);
            crc.update(Fingerprints.read(ch, size - ends, scratch.clear().limit(ends)));
            idx.size = size;
            // the sampled headers' CRCs from the scan's own reads: two reads of the file's ends are all the fingerprint adds
            idx.fingerprint = fingerprint(crc, size, headers.size(), headers::get);
            return idx;
        }
    }

    /** A buffer for each thread that indexes: thousands of small shards need not each allocate their own. */
    private static final ThreadLocal<ByteBuffer> SCRATCH = ThreadLocal.withInitial(() -> ByteBuffer.allocate(ENDS));

    private static TarIndex scan(InputStream in, String shard, List<Integer> headerCrcs) throws IOException {
        List<String> keys = new ArrayList<>();
        List<Integer> first = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        List<Long> sizes = new ArrayList<>();
        Map<String, String> intern = new HashMap<>();
        TarReader r = new TarReader(in, shard);
        TarGrouping grouping = new TarGrouping(shard);
        for (TarReader.Member m; (m = r.next(false)) != null; ) {
            String[] kf = TarGrouping.keyAndField(m);
            if (kf == null) {
                continue;
            }
            if (grouping.starts(kf[0])) {
                keys.add(kf[0]);
                first.add(names.size());
            }
            grouping.add(kf, m);
            names.add(intern.computeIfAbsent(kf[1], k -> k));
            offsets.add(m.dataOffset());
            sizes.add(m.size());
            headerCrcs.add(r.headerCrc());
        }
        first.add(names.size());
        return new TarIndex(keys.toArray(String[]::new), first.stream().mapToInt(Integer::intValue).toArray(),
                names.toArray(String[]::new), offsets.stream().mapToLong(Long::longValue).toArray(),
                sizes.stream().mapToLong(Long::longValue).toArray());
    }

    /** Reads {@code length} bytes of a shard at {@code position}. */
    @FunctionalInterface
    interface Bytes {
        ByteBuffer read(long position, int length) throws IOException;

        static Bytes of(FileChannel ch) {
            return (position, length) -> Fingerprints.read(ch, position, length);
        }

        static Bytes of(MemorySegment mapped) {
            return (position, length) -> mapped.asSlice(position, length).asByteBuffer();
        }
    }

    /** The CRC-32C of member {@code k}'s header block. */
    @FunctionalInterface
    interface HeaderCrc {
        int of(int k) throws IOException;
    }

    /**
     * A hash of what shows whether an index with the data {@code offsets} is the shard's,
     * computed from the shard as it is now: its first and last {@link #ENDS} bytes, and the
     * header blocks (the 512 bytes before the data) of {@link #SAMPLED_HEADERS} of the members,
     * spread evenly. A shard rewritten with other members moves or changes those headers; one
     * cut or extended changes its end.
     */
    static long fingerprint(Bytes shard, long size, long[] offsets) throws IOException {
        int ends = (int) Math.min(size, ENDS);
        CRC32C crc = new CRC32C();
        crc.update(shard.read(0, ends));
        crc.update(shard.read(size - ends, ends));
        CRC32C block = new CRC32C();
        return fingerprint(crc, size, offsets.length, k -> {
            block.reset();
            block.update(shard.read(Math.max(0, offsets[k] - TarReader.BLOCK), TarReader.BLOCK));
            return (int) block.getValue();
        });
    }

    /**
     * The fingerprint from {@code ends}, a CRC over the shard's first and last {@link #ENDS}
     * bytes, and its {@code members} members' header CRCs (only the sampled are asked for).
     */
    private static long fingerprint(CRC32C ends, long size, int members, HeaderCrc headers) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(4);
        int sampled = Math.min(members, SAMPLED_HEADERS);
        for (int i = 0; i < sampled; i++) {
            ends.update(b.clear().putInt(headers.of((int) ((long) i * members / sampled))).flip());
        }
        return ends.getValue() ^ size << 32;
    }
}
