package dev.stoker.formats.image;

import dev.stoker.CorruptShardException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.ArrayBlockingQueue;

/**
 * JPEG decoding through libjpeg-turbo's TurboJPEG API (Debian's {@code libturbojpeg0}), called
 * with the FFM API: into RGBX ({@link Image}), optionally scaled down in the DCT domain (7/8, 3/4
 * ... 1/8) when the caller needs fewer pixels. Without the library, {@code javax.imageio} decodes
 * instead, with one warning. Thread-safe: decompressor handles come from a small pool.
 *
 * <p>{@link #decodeCrop} decodes only what a crop needs (NOTE [Region of interest]): through
 * {@code libstokerjpeg.so} ({@code src/main/c}), built with the module where a C compiler and
 * libjpeg-turbo's headers are, it reaches libjpeg's {@code jpeg_skip_scanlines} and
 * {@code jpeg_crop_scanline}, which TurboJPEG 2.x does not; without it, the image decodes whole.
 */
final class Jpeg {
    private static final System.Logger LOG = System.getLogger(Jpeg.class.getName());
    private static final int TJPF_RGBX = 2;
    private static final int TJPF_CMYK = 11;
    private static final int TJCS_CMYK = 3;
    private static final int TJSAMP_444 = 0;
    private static final int TJSAMP_GRAY = 3;
    private static final int TJCS_YCCK = 4;
    private static final Native NATIVE = Native.load();
    /** The region decoder; {@code -Dstoker.jpegRegions=false} leaves it out, to measure what it gives. */
    private static final Regions REGIONS = NATIVE == null || !Boolean.parseBoolean(System.getProperty("stoker.jpegRegions", "true"))
            ? null : Regions.load();
    private static volatile boolean warned;
    private static final ThreadLocal<MemorySegment> SCRATCH = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(16));

    private Jpeg() {
    }

    /** True when libjpeg-turbo is loaded (false: javax.imageio decodes, slower). */
    public static boolean native_() {
        return NATIVE != null;
    }

    /**
     * Decodes {@code jpeg} into {@code into} (RGBX, {@link Image#PIXEL_BYTES} a pixel, row-major), at the smallest
     * DCT scale whose size is still at least {@code minWidth} × {@code minHeight} (0: full size).
     * {@code into} grows as needed; its image is valid until the next decode into it.
     */
    public static void decode(MemorySegment jpeg, int minWidth, int minHeight, Image into, String name) throws IOException {
        if (NATIVE == null) {
            warnOnce();
            decodeImageIo(jpeg, into, name);
            return;
        }
        NATIVE.decode(jpeg, minWidth, minHeight, 0, into, name);
    }

    /** True when the region-of-interest decoder is loaded (false: {@link #decodeCrop} decodes the whole image). */
    static boolean regions() {
        return REGIONS != null;
    }

    /**
     * Decodes what crop {@code crop} of the JPEG ({@code header}'s) needs to be resampled to
     * {@code size}²: at the DCT scale {@link #eighths(Header, Crop, int)} picks, and, with the
     * region decoder, only the crop's pixels and one more each side. Returns the crop in
     * {@code into}'s pixels. The pixels of the crop are those of the whole image decoded at that
     * scale, to the bit.
     */
    static Crop decodeCrop(MemorySegment jpeg, Header header, Crop crop, int size, Image into, String name)
            throws IOException {
        int width = header.width();
        int height = header.height();
        if (REGIONS != null) {
            Image.checkPixels(width, height, name);
            int eighths = eighths(header, crop, size);
            int sw = scaled(width, eighths);
            int sh = scaled(height, eighths);
            Crop c = eighths == 8 ? crop : crop.scaled((double) sw / width, (double) sh / height);
            // NOTE [Region of interest]: one pixel past the crop each side, where the image goes
            // on: libjpeg's fancy upsampling makes a region's outermost pixels from the region
            // alone, and those differ from the whole image's; the ones inside are the same
            int x0 = Math.max(0, (int) Math.floor(c.x()) - 1);
            int y0 = Math.max(0, (int) Math.floor(c.y()) - 1);
            int x1 = Math.min(sw, (int) Math.ceil(c.x() + c.w()) + 1);
            int y1 = Math.min(sh, (int) Math.ceil(c.y() + c.h()) + 1);
            long at = REGIONS.decode(nativeCopy(jpeg), jpeg.byteSize(), eighths, x0, y0, x1 - x0, y1 - y0, into, name);
            if (at >= 0) {
                return new Crop(c.x() - (int) (at >>> 32), c.y() - (int) at, c.w(), c.h(), c.flip());
            } // else a colour space it does not convert (CMYK): whole, below
        }
        return decodeCropWhole(jpeg, header, crop, size, into, name);
    }

    /** {@link #decodeCrop} without the region decoder: the whole image, at the same DCT scale. */
    static Crop decodeCropWhole(MemorySegment jpeg, Header header, Crop crop, int size, Image into, String name)
            throws IOException {
        decodeWhole(jpeg, cropEighths(header, crop, size), into, name);
        return inDecoded(header, crop, into);
    }

    /**
     * The DCT scale, in eighths, {@link #decodeCrop} decodes {@code crop} at: {@link
     * #eighths(Header, Crop, int)}, or 8 without libjpeg-turbo (javax.imageio decodes whole).
     */
    static int cropEighths(Header header, Crop crop, int size) {
        return NATIVE == null ? 8 : eighths(header, crop, size);
    }

    /** The whole image at {@code eighths}/8 of its size (without libjpeg-turbo: whole). */
    static void decodeWhole(MemorySegment jpeg, int eighths, Image into, String name) throws IOException {
        if (NATIVE == null) {
            decode(jpeg, 0, 0, into, name);
        } else {
            NATIVE.decode(jpeg, 0, 0, eighths, into, name);
        }
    }

    /** {@code crop}, in the pixels of the image {@code header} describes, in those of {@code img}: that image decoded at a DCT scale. */
    static Crop inDecoded(Header header, Crop crop, Image img) {
        return img.width() == header.width() && img.height() == header.height() ? crop
                : crop.scaled((double) img.width() / header.width(), (double) img.height() / header.height());
    }

    /**
     * The DCT scale, in eighths, to decode {@code crop} at for {@code size}²: the smallest of 1/8,
     * 1/4, 1/2 and 1 that still gives the crop {@code size} pixels each way, so that the resampler
     * shrinks it less than twice. Not below 1/2 for subsampled chroma: at 1/4, libjpeg keeps only
     * each chroma block's mean, and colour edges bleed (against torchvision's crop of a 4:2:0
     * JPEG, a mean difference of 4.2 at 1/4 against 1.0 at 1/2: ImagePipelineTest).
     */
    static int eighths(Header header, Crop crop, int size) {
        return eighths(header.width(), header.height(), (int) Math.ceil(header.width() * Math.min(1.0, size / crop.w())),
                (int) Math.ceil(header.height() * Math.min(1.0, size / crop.h())), header.subsampled() ? 4 : 1);
    }

    /**
     * The smallest DCT scale, in eighths, from {@code least} up by halves, at which a {@code w} ×
     * {@code h} image still has at least {@code minW} × {@code minH} pixels (8: full size).
     */
    private static int eighths(int w, int h, int minW, int minH, int least) {
        for (int m = least; m < 8; m *= 2) {
            if (scaled(w, m) >= minW && scaled(h, m) >= minH) {
                return m;
            }
        }
        return 8;
    }

    /** A side of {@code n} pixels at {@code eighths}/8 of its size, as libjpeg rounds it (up). */
    static int scaled(int n, int eighths) {
        return (int) (((long) n * eighths + 7) / 8);
    }

    /** The bytes in native memory, as the decoders take them: the segment, or a copy in this thread's buffer. */
    private static MemorySegment nativeCopy(MemorySegment jpeg) {
        if (jpeg.isNative()) {
            return jpeg;
        }
        MemorySegment s = SCRATCH.get();
        if (s.byteSize() < jpeg.byteSize()) {
            s = Arena.ofAuto().allocate(Math.max(jpeg.byteSize(), 2 * s.byteSize()));
            SCRATCH.set(s);
        }
        MemorySegment.copy(jpeg, 0, s, 0, jpeg.byteSize());
        return s;
    }

    /** Width and height of a JPEG, packed as {@code width << 32 | height}, from its header. */
    public static long dimensions(MemorySegment jpeg, String name) throws IOException {
        Header h = header(jpeg, name);
        return (long) h.width() << 32 | h.height();
    }

    /** What decoding a JPEG depends on: its size, and whether its chroma is subsampled (4:2:0, 4:2:2...). */
    record Header(int width, int height, boolean subsampled) {
    }

    /** The JPEG's {@link Header}. */
    static Header header(MemorySegment jpeg, String name) throws IOException {
        if (NATIVE == null) {
            warnOnce();
            Image tmp = new Image();
            decodeImageIo(jpeg, tmp, name);
            return new Header(tmp.width(), tmp.height(), false);
        }
        return NATIVE.header(jpeg, name);
    }

    private static void warnOnce() {
        if (!warned) {
            warned = true;
            LOG.log(System.Logger.Level.WARNING, "libjpeg-turbo (libturbojpeg.so.0) is not installed: decoding JPEG with "
                    + "javax.imageio, several times slower (Debian: apt-get install libturbojpeg0)");
        }
    }

    static void decodeImageIo(MemorySegment jpeg, Image into, String name) throws IOException {
        if (components(jpeg) == 4) {
            // javax.imageio converts CMYK and YCCK with its own color profile: colors up to 73 levels
            // off those libjpeg-turbo and Pillow give; refused, rather than handed over wrong
            throw new CorruptShardException(name, -1, "a CMYK JPEG, which javax.imageio decodes to other colors than "
                    + "libjpeg-turbo and Pillow: install libjpeg-turbo (Debian: apt-get install libturbojpeg0)");
        }
        java.awt.image.BufferedImage img;
        try (javax.imageio.stream.ImageInputStream in = javax.imageio.ImageIO.createImageInputStream(
                new ByteArrayInputStream(jpeg.toArray(ValueLayout.JAVA_BYTE)))) {
            java.util.Iterator<javax.imageio.ImageReader> readers = javax.imageio.ImageIO.getImageReaders(in);
            if (!readers.hasNext()) {
                throw new CorruptShardException(name, -1, "not an image javax.imageio can decode");
            }
            javax.imageio.ImageReader reader = readers.next();
            try {
                reader.setInput(in, true, true);
                Image.checkPixels(reader.getWidth(0), reader.getHeight(0), name); // from the header, before any pixel
                img = reader.read(0);
            } finally {
                reader.dispose();
            }
        } catch (CorruptShardException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new CorruptShardException(name, -1, "cannot decode image: " + e.getMessage(), e);
        }
        int w = img.getWidth();
        int h = img.getHeight();
        into.reset(w, h);
        MemorySegment px = into.pixels();
        // a grayscale image's samples are its levels: getRGB would convert them from a linear gray
        // color space to sRGB (mid-gray 128 becomes 196), which Pillow and libjpeg-turbo do not do
        java.awt.image.Raster gray = img.getType() == java.awt.image.BufferedImage.TYPE_BYTE_GRAY ? img.getRaster() : null;
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                int rgb = gray != null ? gray.getSample(x, y, 0) * 0x010101 : img.getRGB(x, y);
                long at = (long) Image.PIXEL_BYTES * (y * (long) w + x);
                px.set(ValueLayout.JAVA_BYTE, at, (byte) (rgb >> 16));
                px.set(ValueLayout.JAVA_BYTE, at + 1, (byte) (rgb >> 8));
                px.set(ValueLayout.JAVA_BYTE, at + 2, (byte) rgb);
                px.set(ValueLayout.JAVA_BYTE, at + 3, (byte) 0xFF);
            }
        }
    }

    /** The number of color components its frame header (SOFn) declares; 0 when there is none to read. */
    static int components(MemorySegment jpeg) {
        long n = jpeg.byteSize();
        long at = 2; // after SOI
        while (at + 4 <= n) {
            if ((jpeg.get(ValueLayout.JAVA_BYTE, at) & 0xFF) != 0xFF) {
                return 0;
            }
            int marker = jpeg.get(ValueLayout.JAVA_BYTE, at + 1) & 0xFF;
            if (marker == 0xFF) {
                at++; // fill byte
                continue;
            }
            int length = (jpeg.get(ValueLayout.JAVA_BYTE, at + 2) & 0xFF) << 8 | jpeg.get(ValueLayout.JAVA_BYTE, at + 3) & 0xFF;
            boolean frame = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
            if (frame) {
                return at + 9 < n ? jpeg.get(ValueLayout.JAVA_BYTE, at + 9) & 0xFF : 0;
            }
            if (marker == 0xDA || marker == 0xD9) {
                return 0; // image data before a frame header: not for this scan to judge
            }
            at += 2 + length;
        }
        return 0;
    }

    /** The TurboJPEG functions, looked up once. */
    private static final class Native {
        private final MethodHandle init;
        private final MethodHandle header;
        private final MethodHandle decompress;
        private final MethodHandle errorStr;
        private final MethodHandle errorCode;
        private final ArrayBlockingQueue<MemorySegment> handles = new ArrayBlockingQueue<>(256);
        private final ThreadLocal<MemorySegment> ints = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(16, 4));

        private Native(SymbolLookup lib) throws Throwable {
            Linker l = Linker.nativeLinker();
            ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
            ValueLayout ptr = ValueLayout.ADDRESS;
            this.init = l.downcallHandle(lib.find("tjInitDecompress").orElseThrow(), FunctionDescriptor.of(ptr));
            this.header = l.downcallHandle(lib.find("tjDecompressHeader3").orElseThrow(),
                    FunctionDescriptor.of(INT, ptr, ptr, ValueLayout.JAVA_LONG, ptr, ptr, ptr, ptr));
            this.decompress = l.downcallHandle(lib.find("tjDecompress2").orElseThrow(),
                    FunctionDescriptor.of(INT, ptr, ptr, ValueLayout.JAVA_LONG, ptr, INT, INT, INT, INT, INT));
            this.errorStr = l.downcallHandle(lib.find("tjGetErrorStr2").orElseThrow(), FunctionDescriptor.of(ptr, ptr));
            this.errorCode = l.downcallHandle(lib.find("tjGetErrorCode").orElseThrow(), FunctionDescriptor.of(INT, ptr));
        }

        static Native load() {
            try {
                SymbolLookup lib = SymbolLookup.libraryLookup("libturbojpeg.so.0", Arena.global());
                return new Native(lib);
            } catch (Throwable e) {
                return null;
            }
        }

        Header header(MemorySegment jpeg, String name) throws IOException {
            MemorySegment src = nativeCopy(jpeg);
            MemorySegment h = null;
            try {
                h = acquire();
                long dims = header(h, src, jpeg.byteSize(), name);
                int subsampling = ints.get().get(ValueLayout.JAVA_INT, 8); // header() wrote it
                return new Header((int) (dims >>> 32), (int) dims, subsampling != TJSAMP_444 && subsampling != TJSAMP_GRAY);
            } catch (IOException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException(e);
            } finally {
                release(h);
            }
        }

        /** A decompressor from the pool, or a new one. */
        private MemorySegment acquire() throws Throwable {
            MemorySegment h = handles.poll();
            if (h == null) {
                h = (MemorySegment) init.invokeExact();
                if (h.equals(MemorySegment.NULL)) {
                    throw new IOException("tjInitDecompress failed");
                }
            }
            return h;
        }

        private void release(MemorySegment h) {
            if (h != null) {
                handles.offer(h); // a full pool drops the handle: a few KB, at most once per thread beyond 256
            }
        }

        /** Width and height from the JPEG's header, packed as {@code width << 32 | height}. */
        private long header(MemorySegment h, MemorySegment src, long len, String name) throws Throwable {
            MemorySegment dims = ints.get();
            int rc = (int) header.invokeExact(h, src, len, dims, dims.asSlice(4), dims.asSlice(8), dims.asSlice(12));
            if (rc != 0) {
                throw new CorruptShardException(name, -1, "not a readable JPEG: " + error(h));
            }
            return (long) dims.get(ValueLayout.JAVA_INT, 0) << 32 | dims.get(ValueLayout.JAVA_INT, 4);
        }

        /** At {@code eighths}/8 of its size, or (0) the smallest DCT scale still at least {@code minW} × {@code minH}. */
        void decode(MemorySegment jpeg, int minW, int minH, int eighths, Image into, String name) throws IOException {
            MemorySegment src = nativeCopy(jpeg);
            MemorySegment h = null;
            try {
                h = acquire();
                long dims = header(h, src, jpeg.byteSize(), name);
                int w = (int) (dims >>> 32);
                int hgt = (int) dims;
                Image.checkPixels(w, hgt, name);
                if (eighths <= 0) {
                    eighths = minW <= 0 && minH <= 0 ? 8 : eighths(w, hgt, minW, minH, 1); // no minimum: full size
                }
                int sw = scaled(w, eighths);
                int sh = scaled(hgt, eighths);
                int colorspace = ints.get().get(ValueLayout.JAVA_INT, 12); // header() wrote it
                boolean cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
                into.reset(sw, sh);
                int rc = (int) decompress.invokeExact(h, src, jpeg.byteSize(), into.pixels(), sw, 0, sh,
                        cmyk ? TJPF_CMYK : TJPF_RGBX, 0);
                if (rc != 0) {
                    // fatal errors and warnings alike (a truncated file only warns): never hand on a
                    // half-decoded image as if it were whole
                    boolean fatal = (int) errorCode.invokeExact(h) != 0;
                    throw new CorruptShardException(name, -1, (fatal ? "cannot decode JPEG: " : "damaged JPEG: ") + error(h));
                }
                if (cmyk) {
                    cmykToRgbx(into);
                }
            } catch (IOException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException(e);
            } finally {
                release(h);
            }
        }

        /**
         * CMYK (and YCCK, which libjpeg-turbo turns into CMYK) pixels in place to RGBX, as Pillow
         * reads such a JPEG and converts it to RGB: it takes the stored values as inverted (Adobe's
         * convention, which print workflows follow), so that with {@code c}, {@code k} as stored,
         * {@code R = k - k (255 - c) / 255}, with Pillow's integer rounding ({@code MULDIV255}).
         */
        private static void cmykToRgbx(Image img) {
            MemorySegment px = img.pixels();
            long n = (long) img.width() * img.height();
            for (long p = 0; p < n; p++) {
                long at = Image.PIXEL_BYTES * p;
                int k = px.get(ValueLayout.JAVA_BYTE, at + 3) & 0xFF;
                for (int ch = 0; ch < 3; ch++) {
                    int c = 255 - (px.get(ValueLayout.JAVA_BYTE, at + ch) & 0xFF);
                    int t = c * k + 128;
                    px.set(ValueLayout.JAVA_BYTE, at + ch, (byte) Math.max(0, k - (((t >> 8) + t) >> 8)));
                }
                px.set(ValueLayout.JAVA_BYTE, at + 3, (byte) 0xFF);
            }
        }

        private String error(MemorySegment h) throws Throwable {
            MemorySegment s = ((MemorySegment) errorStr.invokeExact(h)).reinterpret(1024);
            return s.getString(0);
        }
    }

    /**
     * {@code libstokerjpeg.so}'s region decoder, loaded from this module's resources (copied to
     * a temporary file for the dynamic loader, which is deleted as soon as it is mapped).
     */
    private static final class Regions {
        private static final String LIBRARY = "native/linux-" + System.getProperty("os.arch") + "/libstokerjpeg.so";
        private static final int MESSAGE_BYTES = 200;
        private final MethodHandle open;
        private final MethodHandle decode;
        private final ArrayBlockingQueue<MemorySegment> handles = new ArrayBlockingQueue<>(256);
        private final ThreadLocal<MemorySegment> scratch = ThreadLocal.withInitial(
                () -> Arena.ofAuto().allocate(16 + MESSAGE_BYTES, 4));

        private Regions(SymbolLookup lib) {
            Linker l = Linker.nativeLinker();
            ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
            ValueLayout ptr = ValueLayout.ADDRESS;
            this.open = l.downcallHandle(lib.find("stoker_jpeg_open").orElseThrow(), FunctionDescriptor.of(ptr));
            this.decode = l.downcallHandle(lib.find("stoker_jpeg_decode_region").orElseThrow(),
                    FunctionDescriptor.of(INT, ptr, ptr, ValueLayout.JAVA_LONG, INT, INT, INT, INT, INT, ptr,
                            ValueLayout.JAVA_LONG, ptr, ptr));
        }

        static Regions load() {
            try (java.io.InputStream in = Jpeg.class.getResourceAsStream(LIBRARY)) {
                if (in == null) {
                    LOG.log(System.Logger.Level.WARNING, "Stoker was built without its region-of-interest JPEG decoder"
                            + " (the build needs gcc and libjpeg62-turbo-dev): JPEGs decode whole, slower");
                    return null;
                }
                java.nio.file.Path file = java.nio.file.Files.createTempFile("stoker-jpeg", ".so");
                try {
                    java.nio.file.Files.copy(in, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                    return new Regions(SymbolLookup.libraryLookup(file, Arena.global()));
                } finally {
                    java.nio.file.Files.deleteIfExists(file);
                }
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "the region-of-interest JPEG decoder does not load (" + e.getMessage()
                        + "; it needs libjpeg62-turbo): JPEGs decode whole, slower");
                return null;
            }
        }

        /**
         * Decodes region {@code x, y, w × h} of the image at {@code eighths}/8 of its size into
         * {@code into} (columns widened to whole iMCUs); returns where it starts,
         * {@code x << 32 | y}, or -1 for a colour space it does not convert.
         */
        long decode(MemorySegment src, long len, int eighths, int x, int y, int w, int h, Image into, String name)
                throws IOException {
            MemorySegment io = scratch.get();
            MemorySegment geom = io.asSlice(0, 16);
            MemorySegment message = io.asSlice(16);
            MemorySegment handle = handles.poll();
            try {
                if (handle == null) {
                    handle = (MemorySegment) open.invokeExact();
                    if (handle.equals(MemorySegment.NULL)) {
                        throw new IOException("stoker_jpeg_open failed: out of memory");
                    }
                }
                into.reset(w + 64, h); // room for the widening to whole iMCUs (16 or 32 pixels each side at most)
                int rc = (int) decode.invokeExact(handle, src, len, eighths, x, y, w, h, into.pixels(), into.pixels().byteSize(),
                        geom, message);
                if (rc == 1) { // widened to whole iMCUs, past the room there was: once more, with room
                    into.reset(geom.get(ValueLayout.JAVA_INT, 8), h);
                    rc = (int) decode.invokeExact(handle, src, len, eighths, x, y, w, h, into.pixels(),
                            into.pixels().byteSize(), geom, message);
                }
                if (rc == 2) {
                    return -1;
                }
                if (rc != 0) {
                    throw new CorruptShardException(name, -1, (rc == -2 ? "damaged JPEG: " : "cannot decode JPEG: ")
                            + message.getString(0));
                }
                into.reset(geom.get(ValueLayout.JAVA_INT, 8), h);
                return (long) geom.get(ValueLayout.JAVA_INT, 0) << 32 | geom.get(ValueLayout.JAVA_INT, 4);
            } catch (IOException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException(e);
            } finally {
                if (handle != null && !handle.equals(MemorySegment.NULL)) {
                    handles.offer(handle); // a full pool drops the handle: a few KB, at most once per thread beyond 256
                }
            }
        }
    }
}
