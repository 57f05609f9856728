package dev.stoker.formats.image;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.zip.CRC32C;

/**
 * An {@link ImageCache} kept in one local file, mapped, which every process on the node that
 * reads the same images with the same settings shares (NOTE [Image cache file]).
 *
 * <p>NOTE [Image cache file]: the file is named by the data's fingerprint and the kept scale,
 * so two loaders find the same file exactly when they would keep the same images. It holds a
 * header (its key and size, and the bytes allocated so far), an index of one offset a sample
 * and DCT scale (0: not kept; {@link ImageCache#SCALES}) and the entries, each a small header
 * (its key in the index, its size, a CRC-32C of its pixels and one of the encoded image it was
 * decoded from) and the pixels. Every read checks the
 * encoded image's CRC against the sample's bytes, so data changed under the same fingerprint (a
 * fingerprint of keys and sizes) is decoded again, never served from the cache. A process keeps an image by taking room with a compare-and-set on the
 * header's allocation counter (past the file's bound: not kept, counted), writing the entry, and
 * only then publishing its offset with a compare-and-set into the index (another process that
 * kept the same sample first wins; the loser's bytes are left unused). So a reader, in this
 * process or another, sees a whole entry or none, and an epoch or a process cut short leaves a
 * cache of whole entries that the next one completes; nothing is ever taken as complete. What
 * a crash of the machine may leave half-written (pages never flushed) fails the entry's check:
 * each entry is checked (header, bounds, CRC) the first time a process reads it, and one that
 * fails is dropped from the index, counted, and decoded again. The file is created whole under a
 * temporary name and linked into place, so no reader sees a file without its header; it is
 * sparse, so its bound costs disk space only as it fills. It belongs on a local file system: the
 * processes share it through one page cache, which a network file system does not give.
 */
final class ImageCacheFile {
    private static final long MAGIC = 0x3143474d494b5453L; // "STKIMGC1" in a little-endian file
    private static final int ENTRY_MAGIC = 0x45474d49; // "IMGE"
    private static final int VERSION = 2;
    private static final long HEADER = 4096;
    private static final long ENTRY_HEADER = 64;
    // header fields
    private static final long H_MAGIC = 0;
    private static final long H_VERSION = 8;
    private static final long H_MAX_SIDE = 12;
    private static final long H_SAMPLES = 16;
    private static final long H_DATA = 24;
    private static final long H_CAPACITY = 32;
    private static final long H_ALLOCATED = 40;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    // the file is in this machine's byte order (a node's own cache; another order fails the magic)
    private static final ValueLayout.OfLong NLONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt NINT = ValueLayout.JAVA_INT_UNALIGNED;

    private final Path path;
    private final MemorySegment map;
    /** The index's slots: {@link ImageCache#SCALES} a sample. */
    private final long keys;
    private final long dataStart;
    private final long capacity;
    /** Entries this process has checked, a bit a key. */
    private final AtomicLongArray checked;
    final java.util.concurrent.atomic.AtomicLong dropped = new java.util.concurrent.atomic.AtomicLong();
    /** The disk under the file filled up: nothing more is kept (the pixels kept stay good). */
    private volatile boolean full;
    /** The file was cut short under this process: it is read and written no more (NOTE [Cut short while mapped]). */
    private volatile boolean lost;
    private volatile long lostAt;
    /** Why the file there before was removed and made again at open, or null. */
    private String replaced;

    private ImageCacheFile(Path path, MemorySegment map, long samples, long dataStart, long capacity) {
        this.path = path;
        this.map = map;
        this.keys = ImageCache.SCALES * samples;
        this.dataStart = dataStart;
        this.capacity = capacity;
        this.checked = new AtomicLongArray((int) ((keys + 63) / 64));
    }

    /** The file's name in a folder: the data's fingerprint and the kept scale. */
    static String name(long fingerprint, int maxSide) {
        return "stoker-images-v" + VERSION + "-" + Long.toHexString(fingerprint) + "-" + (maxSide == 0 ? "whole" : "side" + maxSide)
                + ".cache";
    }

    /**
     * The cache file for these images in {@code folder}: the one there, checked, or a new one
     * of {@code bytes} for pixels. One there that fails its check (another header, another size:
     * damaged, or cut short) is removed and made again ({@link #replaced}); a process that maps
     * it keeps its mapping.
     *
     * @throws IOException naming the file and what does not match, or why it could not be made
     */
    static ImageCacheFile open(Path folder, long fingerprint, long samples, int maxSide, long bytes) throws IOException {
        Files.createDirectories(folder);
        Path path = folder.resolve(name(fingerprint, maxSide));
        long dataStart = align(HEADER + 8L * ImageCache.SCALES * samples, 4096);
        String replaced = null;
        while (true) {
            if (!Files.exists(path)) {
                create(path, samples, maxSide, dataStart, Math.addExact(dataStart, bytes));
            }
            String wrong;
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                long size = ch.size();
                MemorySegment map = size < HEADER ? null : ch.map(FileChannel.MapMode.READ_WRITE, 0, size, Arena.ofAuto());
                try {
                    wrong = map == null ? size + " bytes, shorter than its " + HEADER + "-byte header"
                            : mismatch(map, H_MAGIC, map.get(NLONG, H_MAGIC), MAGIC, "magic");
                    wrong = wrong != null ? wrong : mismatch(map, H_VERSION, map.get(NINT, H_VERSION), VERSION, "version");
                    wrong = wrong != null ? wrong : mismatch(map, H_MAX_SIDE, map.get(NINT, H_MAX_SIDE), maxSide, "kept side");
                    wrong = wrong != null ? wrong : mismatch(map, H_SAMPLES, map.get(NLONG, H_SAMPLES), samples, "samples");
                    wrong = wrong != null ? wrong : mismatch(map, H_DATA, map.get(NLONG, H_DATA), dataStart, "entries' start");
                    wrong = wrong != null ? wrong : mismatch(map, H_CAPACITY, map.get(NLONG, H_CAPACITY), size, "size");
                    if (wrong == null) {
                        ImageCacheFile f = new ImageCacheFile(path, map, samples, dataStart, size);
                        f.reconcile();
                        f.replaced = replaced;
                        return f;
                    }
                } catch (InternalError e) { // NOTE [Cut short while mapped]
                    wrong = "cut short while opened";
                }
            }
            if (replaced != null) { // made just now, and not this cache: another program's doing
                throw new IOException(path + ": not this image cache: " + wrong + " (made again just now, after "
                        + replaced + "; give another cache folder)");
            }
            replaced = wrong;
            Files.deleteIfExists(path);
        }
    }

    /**
     * After a crash of the machine the index may have reached the disk and the header's
     * allocation counter not: the counter is raised past the furthest entry the index holds (and
     * brought back into the entries' area, aligned), so that no entry is allocated over another.
     */
    private void reconcile() {
        long furthest = dataStart;
        for (long i = 0; i < keys; i++) {
            long at = (long) LONG.getAcquire(map, HEADER + 8 * i);
            if (at >= dataStart && at <= capacity - ENTRY_HEADER && (at & 63) == 0) {
                long n = map.get(NLONG, at + 24);
                if (n >= 0 && n <= capacity - at - ENTRY_HEADER) {
                    furthest = Math.max(furthest, at + align(ENTRY_HEADER + n, 64));
                }
            }
        }
        while (true) {
            long now = (long) LONG.getAcquire(map, H_ALLOCATED);
            boolean sane = now >= dataStart && now <= capacity && ((now - dataStart) & 63) == 0;
            long want = sane ? Math.max(now, furthest) : Math.max(furthest, dataStart);
            if (want == now || LONG.compareAndSet(map, H_ALLOCATED, now, want)) {
                return;
            }
        }
    }

    /** What is wrong with the header field at {@code at}, or null when it holds what is {@code expected}. */
    private static String mismatch(MemorySegment map, long at, long got, long expected, String what) {
        return got == expected ? null : "its " + what + " (at byte " + at + ") is " + got + ", expected " + expected;
    }

    /** Why the file there was removed and made again when this process opened it, or null. */
    String replaced() {
        return replaced;
    }

    /** Writes the file whole under a temporary name, then links it into place (another process's, if it won, stays). */
    private static void create(Path path, long samples, int maxSide, long dataStart, long capacity) throws IOException {
        long usable = Files.getFileStore(path.getParent()).getUsableSpace();
        if (dataStart > usable) {
            throw new IOException(path.getParent() + ": no room for an image cache's index of " + dataStart
                    + " bytes (" + usable + " usable)");
        }
        dev.stoker.storage.io.PendingFile f = new dev.stoker.storage.io.PendingFile(path); // removed if the process is stopped first
        try {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment h = arena.allocate(HEADER);
                h.set(NLONG, H_MAGIC, MAGIC);
                h.set(NINT, H_VERSION, VERSION);
                h.set(NINT, H_MAX_SIDE, maxSide);
                h.set(NLONG, H_SAMPLES, samples);
                h.set(NLONG, H_DATA, dataStart);
                h.set(NLONG, H_CAPACITY, capacity);
                h.set(NLONG, H_ALLOCATED, dataStart);
                f.writeAt(h.asByteBuffer(), 0);
            }
            // sparse: the index and the entries take disk space as they are written
            f.writeAt(java.nio.ByteBuffer.allocate(1), capacity - 1);
            f.commitNew(); // never over another process's file, which may hold entries: theirs is used
        } finally {
            f.abandon();
        }
    }

    private static long align(long n, long to) {
        return (n + to - 1) / to * to;
    }

    Path path() {
        return path;
    }

    /** Bytes of the file's entries so far (all processes'); 0 once it is no longer used. */
    long bytes() {
        if (lost) {
            return 0;
        }
        try {
            return (long) LONG.getAcquire(map, H_ALLOCATED) - dataStart;
        } catch (InternalError e) { // NOTE [Cut short while mapped]
            lose();
            return 0;
        }
    }

    /** Room for pixels in all. */
    long capacity() {
        return capacity - dataStart;
    }

    /** Images kept in the file (all processes'); 0 once it is no longer used. */
    long entries() {
        if (lost) {
            return 0;
        }
        long n = 0;
        try {
            for (long i = 0; i < keys; i++) {
                n += (long) LONG.getAcquire(map, HEADER + 8 * i) != 0 ? 1 : 0;
            }
        } catch (InternalError e) { // NOTE [Cut short while mapped]
            lose();
            return 0;
        }
        return n;
    }

    /**
     * The image kept under {@code key} (a sample at a scale), as a view in {@code into}; false if
     * none is kept, or its entry failed its check, or it was decoded from other bytes than
     * {@code source}'s (CRC-32C {@code source}: the data changed under the same fingerprint;
     * then it is dropped), or the file was cut short under this process ({@link #lose}).
     */
    boolean get(long key, int source, Image into) {
        if (lost) {
            return false;
        }
        try {
            return read(key, source, into);
        } catch (InternalError e) { // NOTE [Cut short while mapped]
            lose();
            return false;
        }
    }

    private boolean read(long key, int source, Image into) {
        long slot = HEADER + 8 * key;
        long at = (long) LONG.getAcquire(map, slot);
        if (at == 0) {
            return false;
        }
        int word = (int) (key >>> 6);
        long bit = 1L << (key & 63);
        boolean known = (checked.get(word) & bit) != 0;
        if (at < dataStart || at > capacity - ENTRY_HEADER || (at & 63) != 0
                || map.get(NINT, at) != ENTRY_MAGIC || map.get(NLONG, at + 16) != key) {
            drop(slot, at);
            return false;
        }
        int w = map.get(NINT, at + 4);
        int h = map.get(NINT, at + 8);
        long n = (long) Image.PIXEL_BYTES * w * h;
        if (w < 1 || h < 1 || w > 65535 || h > 65535 || n != map.get(NLONG, at + 24) || n > capacity - at - ENTRY_HEADER) {
            drop(slot, at);
            return false;
        }
        if (map.get(NINT, at + 32) != source) {
            drop(slot, at);
            return false;
        }
        MemorySegment pixels = map.asSlice(at + ENTRY_HEADER, n);
        if (!known) {
            if (crc(pixels) != map.get(NINT, at + 12)) {
                drop(slot, at);
                return false;
            }
            checked.getAndAccumulate(word, bit, (a, b) -> a | b);
        }
        into.view(pixels, w, h);
        return true;
    }

    /** An entry that failed its check: out of the index (unless another process replaced it), counted. */
    private void drop(long slot, long at) {
        if (LONG.compareAndSet(map, slot, at, 0L)) {
            dropped.incrementAndGet();
        }
    }

    /**
     * NOTE [Cut short while mapped]: a mapped file made shorter under the process (by another
     * program: Stoker never truncates it) faults on the first access past its new end, which the
     * JVM raises as an {@link InternalError} in the thread that made it, at that access. Every
     * read and write of the mapping (here, and the resampler's read of a view, {@code
     * ImagePipeline}) catches it, and this process stops using the file ({@link #lose}): its
     * images decode from their bytes, as without a cache, and the run's report says so. Positional
     * reads would need no such care but copy every image each epoch, which the mapping exists to
     * avoid; the catch costs nothing until a fault.
     */
    void lose() {
        lostAt = sizeNow();
        lost = true;
    }

    /** The file's size now; -1 when it is gone. */
    private long sizeNow() {
        try {
            return Files.size(path);
        } catch (IOException e) {
            return -1;
        }
    }

    /** The size the file was found cut to when this process stopped using it; -2 while it is in use. */
    long lostAt() {
        return lost ? lostAt : -2;
    }

    /**
     * Keeps {@code img} under {@code key} (a sample at a scale): 1 kept, 0 already kept (by this
     * process or another, or the file is no longer used), -1 not kept (the file is full).
     */
    int put(long key, int source, Image img) {
        if (lost) {
            return 0;
        }
        try {
            return write(key, source, img);
        } catch (InternalError e) { // NOTE [Cut short while mapped]
            lose();
            return 0;
        }
    }

    private int write(long key, int source, Image img) {
        long slot = HEADER + 8 * key;
        if (full || (long) LONG.getAcquire(map, slot) != 0) {
            return full ? -1 : 0;
        }
        long n = (long) Image.PIXEL_BYTES * img.width() * img.height();
        long need = align(ENTRY_HEADER + n, 64);
        long at;
        do {
            at = (long) LONG.getAcquire(map, H_ALLOCATED);
            if (at + need > capacity) {
                return -1;
            }
        } while (!LONG.compareAndSet(map, H_ALLOCATED, at, at + need));
        MemorySegment pixels = img.pixels().asSlice(0, n);
        try {
            MemorySegment.copy(pixels, 0, map, at + ENTRY_HEADER, n);
        } catch (InternalError e) {
            if (sizeNow() < capacity) { // NOTE [Cut short while mapped]
                lose();
                return 0;
            }
            full = true; // a fault with the file whole: the disk is full under the sparse file
            return -1;
        }
        map.set(NINT, at, ENTRY_MAGIC);
        map.set(NINT, at + 4, img.width());
        map.set(NINT, at + 8, img.height());
        map.set(NINT, at + 12, crc(pixels));
        map.set(NLONG, at + 16, key);
        map.set(NLONG, at + 24, n);
        map.set(NINT, at + 32, source);
        return LONG.compareAndSet(map, slot, 0L, at) ? 1 : 0;
    }

    /** CRC-32C of {@code bytes}: an entry's pixels, or the encoded image it was decoded from. */
    static int crc(MemorySegment pixels) {
        CRC32C c = new CRC32C();
        c.update(pixels.asByteBuffer());
        return (int) c.getValue();
    }
}
