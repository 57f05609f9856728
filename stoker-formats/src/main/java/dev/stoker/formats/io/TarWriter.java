package dev.stoker.formats.io;

import dev.stoker.storage.io.PendingFile;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes one WebDataset tar shard: each sample's fields as members {@code KEY.FIELD}, sorted by
 * field name, in POSIX ustar format (PAX headers for names or sizes ustar can not hold), with a
 * fixed mtime, uid and gid 0 and mode 0644, so the same samples always give the same bytes.
 * Python's {@code tarfile} and GNU tar read it. Written under a temporary name and renamed into
 * place on {@link #close()}.
 */
public final class TarWriter implements AutoCloseable {
    /** The mtime of every member: 2023-11-14, as fixed as any other. */
    public static final long MTIME = 1_700_000_000L;
    private static final int RECORD = 20 * TarReader.BLOCK;

    private final PendingFile file;
    private final OutputStream out;
    private long bytes;
    private long samples;
    private boolean closed;

    public TarWriter(Path target) throws IOException {
        this.file = new PendingFile(target);
        this.out = file.out();
    }

    /** Appends a sample; field names must not be empty, keys must not contain a dot in their file name. */
    public void write(String key, Map<String, byte[]> fields) throws IOException {
        String base = key.substring(key.lastIndexOf('/') + 1);
        if (base.isEmpty() || base.contains(".") || key.indexOf('/') < 0 && key.startsWith("__")) {
            throw new IllegalArgumentException("a key needs a file name with no dot (and, at the top level, not starting "
                    + "with __, which readers skip): '" + key + "'");
        }
        java.util.Set<String> lower = new java.util.HashSet<>();
        for (Map.Entry<String, byte[]> e : new TreeMap<>(fields).entrySet()) {
            String f = e.getKey();
            if (f.isEmpty() || f.contains("/") || !lower.add(f.toLowerCase(java.util.Locale.ROOT))) {
                throw new IllegalArgumentException("field '" + f + "' of sample '" + key + "' is empty, has a '/', or "
                        + "differs from another only in case (readers lower-case field names)");
            }
            member(key + "." + e.getKey(), e.getValue());
        }
        samples++;
    }

    private void member(String name, byte[] data) throws IOException {
        byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        String[] split = ustarSplit(nameBytes);
        boolean pax = split == null || data.length > 077777777777L;
        if (pax) {
            byte[] rec = paxRecords(name, data.length);
            header("PaxHeader/" + Math.abs(name.hashCode()), "", rec.length, (byte) 'x');
            write(rec);
        }
        if (split == null) {
            String shortName = new String(nameBytes, 0, Math.min(nameBytes.length, 99), StandardCharsets.UTF_8);
            header(shortName.replace('\uFFFD', '_'), "", data.length, (byte) '0');
        } else {
            header(split[1], split[0], data.length, (byte) '0');
        }
        write(data);
    }

    /** [prefix, name] for ustar's two name fields, or null when the name does not fit them. */
    private static String[] ustarSplit(byte[] name) {
        if (name.length <= 100) {
            return new String[] {"", new String(name, StandardCharsets.UTF_8)};
        }
        for (int i = name.length - 1; i > 0; i--) {
            if (name[i] == '/' && i <= 155 && name.length - i - 1 <= 100 && name.length - i - 1 > 0) {
                return new String[] {new String(name, 0, i, StandardCharsets.UTF_8),
                    new String(name, i + 1, name.length - i - 1, StandardCharsets.UTF_8)};
            }
        }
        return null;
    }

    private static byte[] paxRecords(String path, long size) {
        StringBuilder b = new StringBuilder();
        b.append(record("path", path));
        if (size > 077777777777L) {
            b.append(record("size", Long.toString(size)));
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** A PAX record "LEN key=value\n", where LEN counts itself. */
    private static String record(String key, String value) {
        int body = (" " + key + "=" + value + "\n").getBytes(StandardCharsets.UTF_8).length;
        int len = body + Integer.toString(body).length();
        if (Integer.toString(len).length() != Integer.toString(body).length()) {
            len++;
        }
        return len + " " + key + "=" + value + "\n";
    }

    private void header(String name, String prefix, long size, byte type) throws IOException {
        byte[] h = new byte[TarReader.BLOCK];
        put(h, 0, name, 100);
        put(h, 100, "0000644", 8);
        put(h, 108, "0000000", 8);
        put(h, 116, "0000000", 8);
        put(h, 124, String.format("%011o", Math.min(size, 077777777777L)), 12);
        put(h, 136, String.format("%011o", MTIME), 12);
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        h[156] = type;
        put(h, 257, "ustar", 6);
        h[263] = '0';
        h[264] = '0';
        put(h, 345, prefix, 155);
        long sum = 0;
        for (byte x : h) {
            sum += x & 0xFF;
        }
        put(h, 148, String.format("%06o", sum), 7);
        h[155] = ' ';
        write(h);
    }

    private static void put(byte[] h, int at, String s, int max) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(b, 0, h, at, Math.min(b.length, max));
    }

    private void write(byte[] data) throws IOException {
        out.write(data);
        bytes += data.length;
        int pad = (int) ((TarReader.BLOCK - data.length % TarReader.BLOCK) % TarReader.BLOCK);
        if (pad > 0) {
            out.write(new byte[pad]);
            bytes += pad;
        }
    }

    /** Bytes written so far (headers and padding included). */
    public long bytes() {
        return bytes;
    }

    public long samples() {
        return samples;
    }

    @Override
    public void close() throws IOException {
        finish();
        try {
            file.commit();
        } finally {
            file.abandon();
        }
    }

    /**
     * Ends the archive and flushes it to disk under its temporary name, for a set of shards
     * published together: {@link #close()} (or the returned file's {@code commit()}) then renames
     * it into place, {@link #abandon()} deletes it.
     */
    public PendingFile finish() throws IOException {
        if (closed) {
            return file;
        }
        closed = true;
        try {
            long end = bytes + 2L * TarReader.BLOCK;
            long padded = (end + RECORD - 1) / RECORD * RECORD;
            out.write(new byte[(int) (padded - bytes)]);
            file.finish();
        } catch (IOException | RuntimeException e) {
            file.abandon();
            throw e;
        }
        return file;
    }

    /** Leaves nothing behind: for a writer that failed half-way (or a set of shards not published). */
    public void abandon() throws IOException {
        closed = true;
        file.abandon();
    }
}
