package dev.stoker.formats.image;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Decoded images kept in memory between epochs, by sample index: the deterministic part of the
 * image pipeline (the decode, and in capped mode the reduction to a longest side) runs once per
 * sample, in the first epoch that reaches it; every later epoch crops, flips and resamples the
 * kept pixels (NOTE [Image cache]).
 *
 * <p>NOTE [Image cache]: an entry is the decoded image as the resampler reads it (4 bytes a
 * pixel, {@link Image#PIXEL_BYTES}), so an epoch that finds it reads it in place, with no copy.
 * Entries are kept by sample and DCT scale: without a cache, a JPEG decodes at the scale its
 * crop needs ({@link Jpeg#decodeCrop}: a crop of a large image at half its size, or less), and
 * the pixels at one scale are not those of another resampled, so a cache that kept one scale a
 * sample would change the data. A crop finds the image at the scale the pipeline without a
 * cache decodes it at, or decodes it whole at that scale and keeps it: eval's crop, the same
 * each epoch, keeps one image a sample; train's random crops of an image larger than twice the
 * crop keep it at each scale they decode it at (most often two, the second a quarter of the
 * first's bytes), of images of ImageNet's sizes almost always one (measured on 500×375 and
 * 640×480 JPEGs, train 224 over three epochs: 101 images kept for 96 samples, 2% more bytes).
 * Entries are written once, by the worker that decodes the sample, and published only when
 * whole (a release store into the index), so a reader sees a whole image or none; an epoch cut
 * short leaves a cache of whole entries, which the next epoch completes. The bytes are bounded:
 * an image that would take the cache past its bound is not kept (it is decoded again each epoch,
 * and counted in {@link #refused()}), so the cache never grows past the bound. The memory is an
 * automatic arena's: it goes when the pipeline does. The pixels of a crop of the whole image
 * decoded at a scale are those of the crop's region decoded at that scale, so the batches with
 * the cache equal those of the same pipeline without one, to the bit. A {@code maxSide} keeps
 * each image at one DCT scale, the one whose longer side is the largest at most {@code maxSide}
 * (the decoder's scales, 1, 1/2, 1/4 or 1/8, decoded that small directly), and crops that: a
 * documented change of the data that makes the cache smaller and every epoch's crops cheaper.
 */
public final class ImageCache {
    /** Entries are carved from slabs of this size (or an image's own size, if larger). */
    private static final long SLAB_BYTES = 64L << 20;
    /** The DCT scales a sample may be kept at, 8/8, 4/8, 2/8 and 1/8: an entry's key is {@code SCALES * sample + log2(eighths)}. */
    static final int SCALES = 4;
    /** The most samples a cache holds. */
    private static final long MAX_SAMPLES = (Integer.MAX_VALUE - 8) / SCALES;

    private final long maxBytes;
    private final int maxSide;
    private final long samples;
    private final AtomicReferenceArray<Entry> entries;
    private final AtomicLong used = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong hits = new AtomicLong();
    private final Arena arena = Arena.ofAuto();
    private MemorySegment slab = MemorySegment.NULL;
    private long slabUsed;
    /** The file the images are kept in, or null: in memory. */
    private final ImageCacheFile file;

    /** A kept image: its pixels and size. */
    record Entry(MemorySegment pixels, int width, int height) {
    }

    /**
     * @param samples  the dataset's samples (indices {@code [0, samples)})
     * @param maxBytes the most bytes of pixels kept
     * @param maxSide  0: images as they decode; else the longest side kept at most this
     */
    public ImageCache(long samples, long maxBytes, int maxSide) {
        if (samples < 0 || samples > MAX_SAMPLES) {
            throw new IllegalArgumentException("an image cache holds at most " + MAX_SAMPLES + " samples, got " + samples);
        }
        if (maxBytes < 1) {
            throw new IllegalArgumentException("an image cache needs a bound of at least one byte, got " + maxBytes);
        }
        if (maxSide < 0) {
            throw new IllegalArgumentException("cache max side must be >= 1 (or 0: none), got " + maxSide);
        }
        this.entries = new AtomicReferenceArray<>((int) (SCALES * samples));
        this.samples = samples;
        this.maxBytes = maxBytes;
        this.maxSide = maxSide;
        this.file = null;
    }

    private ImageCache(ImageCacheFile file, long samples, int maxSide) {
        this.entries = new AtomicReferenceArray<>(0);
        this.samples = samples;
        this.maxBytes = file.capacity();
        this.maxSide = maxSide;
        this.file = file;
    }

    /**
     * A cache of {@code samples} images kept in one file in {@code folder}, mapped, and shared by
     * every process on the node that keeps the same data's images at the same scale (NOTE [Image
     * cache file]): the file there for them, or a new one with room for {@code maxBytes} of pixels.
     *
     * @param fingerprint the data's content fingerprint ({@link dev.stoker.Dataset#fingerprint}), which names the file
     * @throws IOException naming the file, when one there is not such a cache, or none can be made
     */
    public static ImageCache onDisk(java.nio.file.Path folder, long fingerprint, long samples, long maxBytes, int maxSide)
            throws IOException {
        if (samples < 0 || samples > MAX_SAMPLES || maxBytes < 1 || maxSide < 0) {
            throw new IllegalArgumentException("an image cache of " + samples + " samples, " + maxBytes
                    + " bytes, side " + maxSide);
        }
        return new ImageCache(ImageCacheFile.open(folder, fingerprint, samples, maxSide, maxBytes), samples, maxSide);
    }

    /** The name of the file {@link #onDisk} keeps the images of data of {@code fingerprint} in, at {@code maxSide}. */
    public static String fileName(long fingerprint, int maxSide) {
        return ImageCacheFile.name(fingerprint, maxSide);
    }

    /** The file the images are kept in, or null when they are kept in memory. */
    public java.nio.file.Path file() {
        return file != null ? file.path() : null;
    }

    /** Entries found damaged (in a file, after a crash of the machine) and decoded again. */
    public long dropped() {
        return file != null ? file.dropped.get() : 0;
    }

    /** Why the file found in its place failed its check and was made again when this cache opened, or null. */
    public String replaced() {
        return file != null ? file.replaced() : null;
    }

    /**
     * The size its file was found cut to by another program, when this process stopped using it
     * (its images decoded since, as without a cache; NOTE [Cut short while mapped]); -1: it was
     * gone; -2: in use (or kept in memory).
     */
    public long lostAt() {
        return file != null ? file.lostAt() : -2;
    }

    /**
     * A read of a kept image's pixels failed with {@code e}: with a file, a fault of its mapping,
     * and the file is used no more (NOTE [Cut short while mapped]); in memory, not the cache's: thrown.
     */
    void readFailed(InternalError e) {
        if (file == null) {
            throw e;
        }
        file.lose();
    }

    /** 0, or the longest side an image is kept at. */
    public int maxSide() {
        return maxSide;
    }

    public long maxBytes() {
        return maxBytes;
    }

    /** Bytes of pixels kept now (in a file: by every process that shares it). */
    public long bytes() {
        return file != null ? file.bytes() : used.get();
    }

    /** Images not kept because the bound was reached. */
    public long refused() {
        return refused.get();
    }

    /** Samples served from the cache. */
    public long hits() {
        return hits.get();
    }

    /** Images kept (a sample's at each DCT scale its crops decoded it at). */
    public long entries() {
        if (file != null) {
            return file.entries();
        }
        long n = 0;
        for (int i = 0; i < entries.length(); i++) {
            n += entries.get(i) != null ? 1 : 0;
        }
        return n;
    }

    /**
     * The kept image of sample {@code index} at {@code eighths}/8 of its size (decoded from
     * {@code encoded}) as a view in {@code into}; false if none is kept.
     */
    boolean get(long index, int eighths, MemorySegment encoded, Image into) {
        long key = key(index, eighths);
        if (file != null) {
            if (key < 0 || !file.get(key, ImageCacheFile.crc(encoded), into)) {
                return false;
            }
            hits.incrementAndGet();
            return true;
        }
        if (key < 0) {
            return false;
        }
        Entry e = entries.get((int) key);
        if (e == null) {
            return false;
        }
        into.view(e.pixels, e.width, e.height);
        hits.incrementAndGet();
        return true;
    }

    /**
     * Keeps a copy of {@code img} (decoded from {@code encoded} at {@code eighths}/8 of its size)
     * as sample {@code index}'s, if the bound allows and none is kept yet.
     */
    void put(long index, int eighths, MemorySegment encoded, Image img) {
        long key = key(index, eighths);
        if (file != null) {
            if (key >= 0 && file.put(key, ImageCacheFile.crc(encoded), img) < 0) {
                refused.incrementAndGet();
            }
            return;
        }
        if (key < 0 || entries.get((int) key) != null) {
            return;
        }
        long n = (long) Image.PIXEL_BYTES * img.width() * img.height();
        if (used.addAndGet(n) > maxBytes) {
            used.addAndGet(-n);
            refused.incrementAndGet();
            return;
        }
        MemorySegment to = carve(n);
        MemorySegment.copy(img.pixels(), 0, to, 0, n);
        if (!entries.compareAndSet((int) key, null, new Entry(to, img.width(), img.height()))) {
            used.addAndGet(-n); // another worker kept it first; this copy's bytes stay carved, uncounted
        }
    }

    /** The entry of sample {@code index} at {@code eighths}/8 of its size, or -1: none of this cache's. */
    private long key(long index, int eighths) {
        if (index < 0 || index >= samples || (eighths != 8 && eighths != 4 && eighths != 2 && eighths != 1)) {
            return -1;
        }
        return SCALES * index + Integer.numberOfTrailingZeros(eighths);
    }

    private synchronized MemorySegment carve(long n) {
        if (n > SLAB_BYTES / 4) {
            return Slabs.allocate(n, arena);
        }
        if (slabUsed + n > slab.byteSize()) {
            slab = Slabs.allocate(SLAB_BYTES, arena);
            slabUsed = 0;
        }
        MemorySegment s = slab.asSlice(slabUsed, n);
        slabUsed += (n + 63) & ~63L;
        return s;
    }

    /**
     * The DCT scale (eighths: 8, 4, 2 or 1) at which an image of {@code w} × {@code h} is kept: 8
     * without a {@link #maxSide}; else the largest whose longer side is at most it (1 if none is).
     */
    int eighths(int w, int h) {
        return eighths(w, h, maxSide);
    }

    private static int eighths(int w, int h, int maxSide) {
        if (maxSide == 0) {
            return 8;
        }
        int longer = Math.max(w, h);
        for (int k = 8; k > 1; k /= 2) { // the decoder's scales: 8/8, 4/8, 2/8, 1/8
            if (Jpeg.scaled(longer, k) <= maxSide) {
                return k;
            }
        }
        return 1;
    }

    /** The default bound: half of this machine's memory. */
    public static long defaultBytes() {
        var os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long total = os instanceof com.sun.management.OperatingSystemMXBean m ? m.getTotalMemorySize() : 0;
        return total > 0 ? total / 2 : Runtime.getRuntime().maxMemory();
    }

    /**
     * The bytes a cache of {@code data}'s images would keep, estimated from the headers of up to
     * 64 of them spread over the dataset (their sizes at the scale {@code maxSide} keeps; without
     * one, whole: eval's crops of images over twice the crop keep less, train's random crops of
     * them up to a quarter more, NOTE [Image cache]).
     */
    public static long estimate(dev.stoker.Dataset<dev.stoker.formats.tar.TarSample> data, int maxSide) throws IOException {
        long n = data.size();
        if (n == 0) {
            return 0;
        }
        int probes = (int) Math.min(n, 64);
        long sum = 0;
        for (int i = 0; i < probes; i++) {
            dev.stoker.formats.tar.TarSample s = data.get(i * n / probes);
            String field = ImagePipeline.imageField(s);
            MemorySegment bytes = field == null ? null : s.fields().get(field);
            if (bytes == null || !Image.isJpeg(bytes)) {
                continue; // not an image the cache can size from its header: counted as none
            }
            Jpeg.Header h = Jpeg.header(bytes, s.url() + ":" + s.key());
            int k = eighths(h.width(), h.height(), maxSide);
            sum += (long) Image.PIXEL_BYTES * Jpeg.scaled(h.width(), k) * Jpeg.scaled(h.height(), k);
        }
        return (long) ((double) sum / probes * n);
    }

    /**
     * The cache's memory: anonymous mappings the kernel backs with huge pages where it may
     * ({@code madvise(MADV_HUGEPAGE)}: a 64 MiB slab is 32 page faults, not 16,384, and on a
     * virtual machine a fault is dear), unmapped when the arena's owner goes; the arena's own
     * memory where this module may not call native code.
     */
    private static final class Slabs {
        private static final long HUGE = 2L << 20;
        private static final java.lang.invoke.MethodHandle MMAP;
        private static final java.lang.invoke.MethodHandle MADVISE;
        private static final java.lang.invoke.MethodHandle MUNMAP;

        static {
            java.lang.invoke.MethodHandle mmap = null;
            java.lang.invoke.MethodHandle madvise = null;
            java.lang.invoke.MethodHandle munmap = null;
            if (ImageCache.class.getModule().isNativeAccessEnabled()) {
                try {
                    var linker = java.lang.foreign.Linker.nativeLinker();
                    var libc = linker.defaultLookup();
                    var J = java.lang.foreign.ValueLayout.JAVA_LONG;
                    var I = java.lang.foreign.ValueLayout.JAVA_INT;
                    var A = java.lang.foreign.ValueLayout.ADDRESS;
                    mmap = linker.downcallHandle(libc.find("mmap").orElseThrow(),
                            java.lang.foreign.FunctionDescriptor.of(A, A, J, I, I, I, J));
                    madvise = linker.downcallHandle(libc.find("madvise").orElseThrow(),
                            java.lang.foreign.FunctionDescriptor.of(I, A, J, I));
                    munmap = linker.downcallHandle(libc.find("munmap").orElseThrow(),
                            java.lang.foreign.FunctionDescriptor.of(I, A, J));
                } catch (RuntimeException e) {
                    mmap = null;
                }
            }
            MMAP = mmap;
            MADVISE = madvise;
            MUNMAP = munmap;
        }

        static MemorySegment allocate(long n, Arena owner) {
            if (MMAP == null) {
                return owner.allocate(n, 64);
            }
            long len = n + HUGE;
            MemorySegment at;
            try {
                at = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, len, 3 /* PROT_READ | PROT_WRITE */,
                        0x22 /* MAP_PRIVATE | MAP_ANONYMOUS */, -1, 0L);
            } catch (Throwable t) {
                throw new IllegalStateException("mmap failed", t);
            }
            if (at.address() == -1L || at.address() == 0) {
                throw new OutOfMemoryError("mmap: no memory for " + n + " bytes of cached images");
            }
            long start = (at.address() + HUGE - 1) & -HUGE;
            try {
                int ignored = (int) MADVISE.invokeExact(MemorySegment.ofAddress(start), len - (start - at.address()),
                        14 /* MADV_HUGEPAGE */);
            } catch (Throwable t) {
                // small pages, then
            }
            MemorySegment mapping = at;
            return MemorySegment.ofAddress(start).reinterpret(n, owner, s -> unmap(mapping, len));
        }

        private static void unmap(MemorySegment at, long len) {
            try {
                int ignored = (int) MUNMAP.invokeExact(at, len);
            } catch (Throwable t) {
                // the process keeps the mapping
            }
        }
    }
}
