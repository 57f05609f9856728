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
 * with the FFM API: into RGBX ({@link Image}), optionally scaled down in the DCT domain (1/2, 1/4, 1/8...) when
 * the caller needs fewer pixels. Without the library, {@code javax.imageio} decodes instead, with
 * one warning. Thread-safe: decompressor handles come from a small pool.
 */
public final class Jpeg {
    private static final System.Logger LOG = System.getLogger(Jpeg.class.getName());
    private static final int TJPF_RGBX = 2;
    private static final int TJPF_CMYK = 11;
    private static final int TJCS_CMYK = 3;
    private static final int TJCS_YCCK = 4;
    private static final Native NATIVE = Native.load();
    private static volatile boolean warned;

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
        NATIVE.decode(jpeg, minWidth, minHeight, into, name);
    }

    /** Width and height of a JPEG, packed as {@code width << 32 | height}, from its header. */
    public static long dimensions(MemorySegment jpeg, String name) throws IOException {
        if (NATIVE == null) {
            warnOnce();
            Image tmp = new Image();
            decodeImageIo(jpeg, tmp, name);
            return (long) tmp.width() << 32 | tmp.height();
        }
        return NATIVE.dimensions(jpeg, name);
    }

    private static void warnOnce() {
        if (!warned) {
            warned = true;
            LOG.log(System.Logger.Level.WARNING, "libjpeg-turbo (libturbojpeg.so.0) is not installed: decoding JPEG with "
                    + "javax.imageio, several times slower (Debian: apt-get install libturbojpeg0)");
        }
    }

    static void decodeImageIo(MemorySegment jpeg, Image into, String name) throws IOException {
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
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                int rgb = img.getRGB(x, y);
                long at = (long) Image.PIXEL_BYTES * (y * (long) w + x);
                px.set(ValueLayout.JAVA_BYTE, at, (byte) (rgb >> 16));
                px.set(ValueLayout.JAVA_BYTE, at + 1, (byte) (rgb >> 8));
                px.set(ValueLayout.JAVA_BYTE, at + 2, (byte) rgb);
                px.set(ValueLayout.JAVA_BYTE, at + 3, (byte) 0xFF);
            }
        }
    }

    /** The TurboJPEG functions, looked up once. */
    private static final class Native {
        private final MethodHandle init;
        private final MethodHandle header;
        private final MethodHandle decompress;
        private final MethodHandle errorStr;
        private final MethodHandle errorCode;
        private final int[][] factors;
        private final ArrayBlockingQueue<MemorySegment> handles = new ArrayBlockingQueue<>(256);
        private final ThreadLocal<MemorySegment> scratch = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(16));
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
            MethodHandle sf = l.downcallHandle(lib.find("tjGetScalingFactors").orElseThrow(), FunctionDescriptor.of(ptr, ptr));
            try (Arena a = Arena.ofConfined()) {
                MemorySegment n = a.allocate(ValueLayout.JAVA_INT);
                MemorySegment arr = ((MemorySegment) sf.invokeExact(n)).reinterpret(8L * n.get(ValueLayout.JAVA_INT, 0));
                int count = n.get(ValueLayout.JAVA_INT, 0);
                factors = new int[count][];
                for (int i = 0; i < count; i++) {
                    factors[i] = new int[] {arr.get(ValueLayout.JAVA_INT, 8L * i), arr.get(ValueLayout.JAVA_INT, 8L * i + 4)};
                }
            }
        }

        static Native load() {
            try {
                SymbolLookup lib = SymbolLookup.libraryLookup("libturbojpeg.so.0", Arena.global());
                return new Native(lib);
            } catch (Throwable e) {
                return null;
            }
        }

        long dimensions(MemorySegment jpeg, String name) throws IOException {
            MemorySegment src = nativeCopy(jpeg);
            MemorySegment h = null;
            try {
                h = acquire();
                return header(h, src, jpeg.byteSize(), name);
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

        private MemorySegment nativeCopy(MemorySegment jpeg) {
            if (jpeg.isNative()) {
                return jpeg;
            }
            MemorySegment s = scratch.get();
            if (s.byteSize() < jpeg.byteSize()) {
                s = Arena.ofAuto().allocate(Math.max(jpeg.byteSize(), 2 * s.byteSize()));
                scratch.set(s);
            }
            MemorySegment.copy(jpeg, 0, s, 0, jpeg.byteSize());
            return s;
        }

        void decode(MemorySegment jpeg, int minW, int minH, Image into, String name) throws IOException {
            MemorySegment src = nativeCopy(jpeg);
            MemorySegment h = null;
            try {
                h = acquire();
                long dims = header(h, src, jpeg.byteSize(), name);
                int w = (int) (dims >>> 32);
                int hgt = (int) dims;
                Image.checkPixels(w, hgt, name);
                int sw = w;
                int sh = hgt;
                if (minW <= 0 && minH <= 0) {
                    minW = w; // no minimum given: full size
                    minH = hgt;
                }
                for (int[] f : factors) {
                    int cw = (w * f[0] + f[1] - 1) / f[1];
                    int ch = (hgt * f[0] + f[1] - 1) / f[1];
                    if (cw >= minW && ch >= minH && (long) cw * ch < (long) sw * sh) {
                        sw = cw;
                        sh = ch;
                    }
                }
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
}
