package dev.stoker.formats.tokens;

import dev.stoker.CorruptRecordException;
import dev.stoker.StreamingDataset;
import dev.stoker.storage.io.PendingFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

/**
 * A packed stream's windows kept in files between epochs, a file a shard: the first pass that
 * reads a shard to its end tokenizes and packs it and keeps its windows; every later one (in this
 * process, another on the node, or a later run) reads them back instead (NOTE [Window cache]).
 *
 * <p>NOTE [Window cache]: tokenizing and packing are deterministic, so a shard's windows are a
 * function of the shard's bytes and the stages' settings, which the staged dataset's fingerprint
 * covers; a file is named by that fingerprint, the shard count and the shard, so a loader finds
 * the file exactly when it would make the same windows. A reader that packs a shard writes its
 * windows as it hands them out into a temporary file beside the final one ({@link PendingFile}:
 * removed even if the process is stopped by a signal), and only a reader
 * that reaches the shard's end with nothing left out (no malformed record skipped: a skip policy
 * counts those, each epoch) seals it: a footer with the window count and a CRC-32C of the
 * windows, flushed to disk, then renamed into place. A pass cut short, a failure or a skipped
 * record leaves no file under the final name (the temporary one is deleted), so a cache written
 * by an interrupted epoch is never taken as complete. A file is checked whole (header, size,
 * every window record read as a replay reads it, their count against the footer's, their CRC,
 * and the digest of the shard's bytes it was made from) before its first window is handed out,
 * once a process while neither it nor the shard's file changes; one that fails is deleted,
 * counted, and its shard packed again. One that changes after its check (cut short while a pass
 * reads it: another program's doing) is dropped the same way, and the shard packed again from
 * its source past the windows already handed out, which are the same ones: never a failed run.
 * Two processes packing one shard write a file each and rename the same bytes into place.
 */
public final class WindowCache implements StreamingDataset<Pack.Window> {
    private static final long MAGIC = 0x314e49574b5453L; // "STKWIN1"
    private static final int VERSION = 1;
    private static final int HEADER = 64;
    private static final int FOOTER = 16;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final StreamingDataset<Pack.Window> packed;
    private final Pack pack;
    private final Path folder;
    private final long fingerprint;
    private final ShardDigest digest;
    private final AtomicLong hits = new AtomicLong();
    private final AtomicLong kept = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    /** Files this cache checked whole, by shard: the file (its identity, size, time) and the source digest it holds. */
    private final java.util.concurrent.ConcurrentHashMap<Integer, Checked> checked = new java.util.concurrent.ConcurrentHashMap<>();

    private record Checked(Object file, long size, long modified, long source) {
        static Checked of(Path f, long source) throws IOException {
            var a = Files.readAttributes(f, java.nio.file.attribute.BasicFileAttributes.class);
            return new Checked(a.fileKey(), a.size(), a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS), source);
        }
    }

    /** A digest of a shard's source bytes: a kept file is used only while they are the same. */
    public interface ShardDigest {
        long of(int shard) throws IOException;
    }

    /**
     * The windows of {@code packed} (a stream read through {@code pack}), kept in {@code folder};
     * each file is used only while {@code digest} of its shard is the one it was made from.
     *
     * @throws IllegalArgumentException when {@code packed} gives no fingerprint to name its files by
     */
    public WindowCache(StreamingDataset<Pack.Window> packed, Pack pack, Path folder, ShardDigest digest) throws IOException {
        this.packed = packed;
        this.pack = pack;
        this.folder = folder;
        this.digest = digest;
        this.fingerprint = packed.fingerprint();
        if (fingerprint == 0) {
            throw new IllegalArgumentException(packed.name() + ": gives no fingerprint, so a window cache could not tell "
                    + "its files from other data's");
        }
        Files.createDirectories(folder);
    }

    /** The file shard {@code shard}'s windows are kept in. */
    public Path file(int shard) {
        return folder.resolve("stoker-windows-v" + VERSION + "-" + Long.toHexString(fingerprint) + "-" + packed.shards()
                + "-" + shard + ".win");
    }

    /** Bytes of the files this cache finds kept now (this data's, every shard's). */
    public long bytesKept() throws IOException {
        long n = 0;
        for (int s = 0; s < packed.shards(); s++) {
            Path f = file(s);
            if (Files.exists(f)) {
                n += Files.size(f);
            }
        }
        return n;
    }

    /** Shards read from their files. */
    public long hits() {
        return hits.get();
    }

    /** Shards whose files this process wrote. */
    public long kept() {
        return kept.get();
    }

    /** Files that failed their check, deleted, their shards packed again. */
    public long dropped() {
        return dropped.get();
    }

    @Override
    public int shards() {
        return packed.shards();
    }

    @Override
    public ShardReader<Pack.Window> open(int shard) throws IOException {
        Path f = file(shard);
        long source = digest.of(shard);
        if (Files.exists(f)) {
            FileChannel ch;
            try {
                ch = FileChannel.open(f, StandardOpenOption.READ);
            } catch (java.nio.file.NoSuchFileException gone) { // replaced by another process just now
                return new Recording(packed.open(shard), f, shard, source);
            }
            try {
                // a file this cache checked whole and that has not changed since is not read twice
                Checked now;
                try {
                    now = Checked.of(f, source);
                } catch (java.nio.file.NoSuchFileException gone) { // deleted by another process just now
                    ch.close();
                    return new Recording(packed.open(shard), f, shard, source);
                }
                String wrong = now.equals(checked.get(shard)) ? null : check(ch, f, shard, source);
                if (wrong == null) {
                    checked.put(shard, now);
                    hits.incrementAndGet();
                    return new Replay(ch, f, shard, source, read(ch, ch.size() - FOOTER, FOOTER, f).getLong(0));
                }
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
            checked.remove(shard);
            ch.close();
            Files.deleteIfExists(f);
            dropped.incrementAndGet();
        }
        return new Recording(packed.open(shard), f, shard, source);
    }

    @Override
    public void plan(int[] shards) {
        packed.plan(shards);
    }

    @Override
    public String shardName(int shard) {
        return packed.shardName(shard);
    }

    @Override
    public long fingerprint() {
        return fingerprint;
    }

    /** The source shard's: its windows are made from its bytes. */
    @Override
    public long shardCheck(int shard) throws IOException {
        return packed.shardCheck(shard);
    }

    @Override
    public String name() {
        return packed.name();
    }

    /**
     * Why file {@code f} is not shard {@code shard}'s windows (of the bytes of digest {@code
     * source}), or null when it is: its header, its footer, and every window record, their
     * count and CRC.
     */
    private String check(FileChannel ch, Path f, int shard, long source) throws IOException {
        long size = ch.size();
        if (size < HEADER + FOOTER) {
            return "not a window cache file";
        }
        ByteBuffer h = read(ch, 0, HEADER, null);
        ByteBuffer t = read(ch, size - FOOTER, FOOTER, null);
        if (h.getLong(0) != MAGIC || h.getInt(8) != VERSION) {
            return "not a window cache file";
        }
        if (h.getLong(16) != fingerprint || h.getInt(24) != shard || h.getInt(28) != pack.seqLen()
                || h.getInt(32) != packed.shards()) {
            return "another shard's or other settings' windows";
        }
        if (h.getLong(40) != source) {
            return "the windows of other bytes (the shard changed)";
        }
        long count = t.getLong(0);
        if (count < 0 || t.getInt(12) != (int) MAGIC) {
            return "no footer";
        }
        // every record read as a replay reads it, so a file that passes hands out its windows to the last
        Windows windows = new Windows(ch, f, size - FOOTER, new CRC32C());
        Pack.Window w = pack.window();
        long n = 0;
        try {
            while (windows.next(w)) {
                n++;
            }
        } catch (java.nio.channels.ClosedChannelException | java.io.InterruptedIOException e) {
            throw e; // the pass stopped while the file was checked: not the file's fault
        } catch (IOException e) {
            return e.getMessage();
        }
        if ((int) windows.crc.getValue() != t.getInt(8)) {
            return "its windows fail their CRC";
        }
        return n == count ? null : n + " windows, its footer says " + count;
    }

    private static ByteBuffer read(FileChannel ch, long at, int n, Path file) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (ch.read(b, at + b.position()) < 0) {
                throw new java.io.EOFException(file + ": cut short at byte " + (at + b.position()));
            }
        }
        return b.flip();
    }

    /**
     * A kept file's window records in order, read in large pieces into an array (a mapping would
     * fault its pages in again on each open of the shard: each epoch), each checked as it is read
     * ({@link Pack#read}), the bytes summed into {@code crc} when one is given.
     */
    private final class Windows {
        private final FileChannel channel;
        private final Path path;
        private final long end;
        private final CRC32C crc;
        private final byte[] bytes = new byte[Math.max(1 << 18, 2 * pack.recordBytesAtMost())];
        private final MemorySegment segment = MemorySegment.ofArray(bytes);
        /** The records read and not yet handed out: [at, limit) of {@code bytes}, from the file's byte {@code base + at}. */
        private int at;
        private int limit;
        private long base = HEADER;

        Windows(FileChannel channel, Path path, long end, CRC32C crc) {
            this.channel = channel;
            this.path = path;
            this.end = end;
            this.crc = crc;
        }

        /** True when every window has been read. */
        boolean atEnd() {
            return at == limit && base + limit >= end;
        }

        /**
         * The next window, into {@code w}; false at the windows' end.
         *
         * @throws IOException naming the file and the byte, when a record does not fit or the file is cut short
         */
        boolean next(Pack.Window w) throws IOException {
            if (atEnd()) {
                return false;
            }
            long next = base + limit;
            if (limit - at < pack.recordBytesAtMost() && next < end) {
                System.arraycopy(bytes, at, bytes, 0, limit - at);
                base += at;
                limit -= at;
                at = 0;
                ByteBuffer into = ByteBuffer.wrap(bytes, limit, (int) Math.min(bytes.length - limit, end - next));
                while (into.hasRemaining()) {
                    if (channel.read(into, base + into.position()) < 0) {
                        throw new IOException(path + ": cut short at byte " + (base + into.position()) + " of " + end);
                    }
                }
                if (crc != null) {
                    crc.update(bytes, limit, into.position() - limit);
                }
                limit = into.position();
            }
            at = (int) pack.read(w, segment, at, limit, base, path);
            return true;
        }
    }

    /**
     * Hands out a checked file's windows. A file that changes after its check (cut short, or
     * other bytes: another program's doing) is dropped, and the shard packed again from its
     * source past the windows already handed out, which are the same, packing being
     * deterministic (NOTE [Window cache]): never a failed run.
     */
    private final class Replay implements ShardReader<Pack.Window> {
        private final FileChannel channel;
        private final Path path;
        private final int shard;
        private final long source;
        private final Windows windows;
        /** The windows the footer says the file holds, and those handed out. */
        private final long count;
        private long read;
        /** The shard packed again, once the file failed. */
        private ShardReader<Pack.Window> again;

        Replay(FileChannel channel, Path path, int shard, long source, long count) throws IOException {
            this.channel = channel;
            this.path = path;
            this.shard = shard;
            this.source = source;
            this.windows = new Windows(channel, path, channel.size() - FOOTER, null);
            this.count = count;
        }

        @Override
        public Pack.Window next() throws IOException {
            if (again != null) {
                return again.next();
            }
            try {
                if (windows.atEnd()) {
                    if (read == count) {
                        return null;
                    }
                } else if (read < count) {
                    Pack.Window w = pack.window();
                    windows.next(w);
                    read++;
                    return w;
                }
            } catch (java.nio.channels.ClosedChannelException | java.io.InterruptedIOException e) {
                throw e; // the pass stopped (a worker interrupted): the file is as good as it was
            } catch (IOException e) {
                // the file changed since its check: below
            }
            again = packAgain();
            return again.next();
        }

        /** The file dropped, the shard packed again (and kept), the windows handed out already passed over. */
        private ShardReader<Pack.Window> packAgain() throws IOException {
            channel.close();
            checked.remove(shard);
            Files.deleteIfExists(path);
            dropped.incrementAndGet();
            ShardReader<Pack.Window> r = new Recording(packed.open(shard), path, shard, source);
            try {
                for (long i = 0; i < read; i++) {
                    if (r.next() == null) {
                        break;
                    }
                }
            } catch (IOException | RuntimeException e) {
                r.close();
                throw e;
            }
            return r;
        }

        @Override
        public void close() throws IOException {
            try {
                channel.close();
            } finally {
                if (again != null) {
                    again.close();
                }
            }
        }
    }

    /** Packs the shard and keeps its windows; seals the file at the shard's end (NOTE [Window cache]). */
    private final class Recording implements ShardReader<Pack.Window> {
        private final ShardReader<Pack.Window> upstream;
        private final Path file;
        private final int shard;
        private final long source;
        /** The file being written under a temporary name, or null once sealed or spoiled. */
        private PendingFile out;
        private final ByteBuffer buffer;
        private final CRC32C crc = new CRC32C();
        private long count;
        private boolean closed;

        Recording(ShardReader<Pack.Window> upstream, Path file, int shard, long source) {
            this.upstream = upstream;
            this.file = file;
            this.shard = shard;
            this.source = source;
            PendingFile f;
            try {
                f = new PendingFile(file);
            } catch (IOException e) {
                f = null; // the folder is not writable now: pack without keeping
            }
            this.out = f;
            this.buffer = ByteBuffer.allocate(Math.max(1 << 16, 2 * pack.recordBytesAtMost())).order(ByteOrder.LITTLE_ENDIAN);
            buffer.position(HEADER);
        }

        @Override
        public Pack.Window next() throws IOException {
            Pack.Window w;
            try {
                w = upstream.next();
            } catch (CorruptRecordException e) {
                spoil(); // a record left out: a skip policy counts it each epoch, so nothing is kept
                throw e;
            }
            if (out == null) {
                return w;
            }
            try {
                if (w == null) {
                    seal();
                } else {
                    if (buffer.remaining() < pack.recordBytesAtMost()) {
                        flush();
                    }
                    int from = buffer.position();
                    pack.write(w, buffer);
                    crc.update(buffer.array(), from, buffer.position() - from);
                    count++;
                }
            } catch (IOException e) {
                spoil(); // a full disk: the windows still go out, uncached
            }
            return w;
        }

        private void flush() throws IOException {
            out.out().write(buffer.array(), 0, buffer.position());
            buffer.clear();
        }

        /** The shard's end: footer, header, flushed to disk, renamed into place (PendingFile). */
        private void seal() throws IOException {
            if (buffer.remaining() < FOOTER) {
                flush();
            }
            buffer.putLong(count).putInt((int) crc.getValue()).putInt((int) MAGIC);
            flush();
            out.out().flush();
            ByteBuffer header = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
            header.putLong(0, MAGIC).putInt(8, VERSION).putLong(16, fingerprint).putInt(24, shard)
                    .putInt(28, pack.seqLen()).putInt(32, packed.shards()).putLong(40, source);
            out.writeAt(header, 0);
            out.commit();
            out = null;
            checked.put(shard, Checked.of(file, source)); // this process wrote it: no need to read it back to check it
            kept.incrementAndGet();
        }

        private void spoil() throws IOException {
            if (out != null) {
                PendingFile f = out;
                out = null;
                f.abandon();
            }
        }

        @Override
        public void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            try {
                upstream.close();
            } finally {
                spoil();
            }
        }
    }
}
