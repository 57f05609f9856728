package dev.stoker.formats.tar;

import dev.stoker.formats.io.Compression;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.io.Sidecar;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Where every sample of an uncompressed tar shard lies: for each sample its key and, per field,
 * the byte offset and size of the member's data. Built by one pass over the headers (the data
 * is skipped), kept beside the shard as {@code SHARD.stkidx} (or, when that folder is read-only,
 * in {@code ~/.cache/stoker/index}), and rebuilt whenever it does not prove it belongs to the
 * shard: the shard's size and mtime, and a {@link #fingerprint} of its content (its first and
 * last 64 KiB and the headers of sixteen of the members the index lists), so that a shard
 * rewritten with the same size and mtime is indexed again instead of read at stale offsets.
 */
final class TarIndex {
    private static final long MAGIC = 0x53544b4944583032L; // "STKIDX02" (01: no fingerprint, and a shard cut between members was accepted)
    /** The members whose header blocks the fingerprint covers, spread evenly over the index. */
    private static final int SAMPLED_HEADERS = 16;

    final String[] keys;
    final int[] firstField;     // sample s has fields [firstField[s], firstField[s + 1])
    final String[] fieldNames;
    final long[] offsets;
    final long[] sizes;
    /** The fingerprint of the shard this index was built from, as its stored file holds it. */
    private long stored;

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

    /** The index of {@code shard}, from its stored file when that is current, else built and stored. */
    public static TarIndex of(Path shard) throws IOException {
        long size = Files.size(shard);
        long mtime = Files.getLastModifiedTime(shard).toMillis();
        return Sidecar.of(shard, "stkidx", p -> {
            TarIndex idx = load(p, size, mtime);
            return idx != null && idx.stored == idx.fingerprint(shard, size) ? idx : null;
        }, () -> {
            TarIndex idx = build(shard);
            idx.stored = idx.fingerprint(shard, size);
            return idx;
        }, (idx, out) -> idx.store(out, size, mtime));
    }

    /** Scans the headers of an uncompressed tar shard. */
    public static TarIndex build(Path shard) throws IOException {
        List<String> keys = new ArrayList<>();
        List<Integer> first = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        List<Long> sizes = new ArrayList<>();
        Map<String, String> intern = new HashMap<>();
        try (InputStream raw = Files.newInputStream(shard)) {
            InputStream in = Compression.decompress(raw);
            if (!(in instanceof java.io.BufferedInputStream)) {
                throw new IllegalArgumentException(shard + ": a compressed shard has no random access; read it as a stream "
                        + "(TarShards) or store it uncompressed");
            }
            TarReader r = new TarReader(in, shard.toString());
            TarGrouping grouping = new TarGrouping(shard.toString());
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
            }
        }
        first.add(names.size());
        return new TarIndex(keys.toArray(String[]::new), first.stream().mapToInt(Integer::intValue).toArray(),
                names.toArray(String[]::new), offsets.stream().mapToLong(Long::longValue).toArray(),
                sizes.stream().mapToLong(Long::longValue).toArray());
    }

    /**
     * A hash of what shows whether this index is the shard's: the shard's first and last
     * {@link Fingerprints#ENDS} bytes, and the header blocks (the 512 bytes before the data) of
     * {@link #SAMPLED_HEADERS} of the members listed, spread evenly. A shard rewritten with other
     * members moves or changes those headers; one cut or extended changes its end.
     */
    long fingerprint(Path shard, long size) throws IOException {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(shard, java.nio.file.StandardOpenOption.READ)) {
            int ends = (int) Math.min(size, Fingerprints.ENDS);
            crc.update(Fingerprints.read(ch, 0, ends));
            crc.update(Fingerprints.read(ch, size - ends, ends));
            int n = offsets.length;
            for (int i = 0; i < Math.min(n, SAMPLED_HEADERS); i++) {
                long data = offsets[(int) ((long) i * n / Math.min(n, SAMPLED_HEADERS))];
                crc.update(Fingerprints.read(ch, Math.max(0, data - TarReader.BLOCK), TarReader.BLOCK));
            }
        }
        return crc.getValue() ^ size << 32;
    }

    private void store(java.io.OutputStream o, long size, long mtime) throws IOException {
        DataOutputStream out = new DataOutputStream(o);
        out.writeLong(MAGIC);
        out.writeLong(size);
        out.writeLong(mtime);
        out.writeLong(stored);
        out.writeInt(keys.length);
        out.writeInt(fieldNames.length);
        for (String k : keys) {
            out.writeUTF(k);
        }
        for (int f : firstField) {
            out.writeInt(f);
        }
        for (int i = 0; i < fieldNames.length; i++) {
            out.writeUTF(fieldNames[i]);
            out.writeLong(offsets[i]);
            out.writeLong(sizes[i]);
        }
        out.flush();
    }

    /** The stored index, or null when it is stale or unreadable (it is then rebuilt). */
    private static TarIndex load(Path p, long size, long mtime) {
        try (DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(p)))) {
            if (in.readLong() != MAGIC || in.readLong() != size || in.readLong() != mtime) {
                return null;
            }
            long fingerprint = in.readLong();
            int n = in.readInt();
            int f = in.readInt();
            if (n < 0 || f < 0 || n > size / 512 || f > size / 512) {
                return null; // every member takes at least a 512-byte header: these counts are not this shard's
            }
            String[] keys = new String[n];
            for (int i = 0; i < n; i++) {
                keys[i] = in.readUTF();
            }
            int[] first = new int[n + 1];
            for (int i = 0; i <= n; i++) {
                first[i] = in.readInt();
            }
            String[] names = new String[f];
            long[] offsets = new long[f];
            long[] sizes = new long[f];
            Map<String, String> intern = new HashMap<>();
            for (int i = 0; i < f; i++) {
                names[i] = intern.computeIfAbsent(in.readUTF(), k -> k);
                offsets[i] = in.readLong();
                sizes[i] = in.readLong();
            }
            TarIndex idx = new TarIndex(keys, first, names, offsets, sizes);
            idx.stored = fingerprint;
            return idx;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
