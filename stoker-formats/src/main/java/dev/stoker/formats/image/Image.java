package dev.stoker.formats.image;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A decoded RGB image in off-heap memory, HWC uint8 with four bytes a pixel (R, G, B and one
 * unused byte: {@link #PIXEL_BYTES}), reused from image to image: a worker keeps one and decodes
 * into it, so decoding allocates nothing once it is large enough. Four bytes, not three, because
 * a pixel is then one {@code int}, and the resampler's loop that splits pixels into channel
 * planes is one the JIT vectorizes (NOTE [Vector API] in docs/design).
 */
public final class Image {
    /** Bytes a pixel: R, G, B, unused. */
    public static final int PIXEL_BYTES = 4;
    private MemorySegment pixels = MemorySegment.NULL;
    private int width;
    private int height;

    /** This image as a view of {@code pixels} (kept elsewhere: an {@link ImageCache} entry), {@code w} × {@code h}. */
    void view(MemorySegment pixels, int w, int h) {
        this.pixels = pixels;
        this.width = w;
        this.height = h;
    }

    /** Makes room for {@code w} × {@code h} pixels. */
    void reset(int w, int h) {
        long need = (long) PIXEL_BYTES * w * h;
        if (pixels.byteSize() < need) {
            pixels = Arena.ofAuto().allocate(Math.max(need, pixels.byteSize() * 2), 64);
        }
        this.width = w;
        this.height = h;
    }

    /** The pixels, {@link #PIXEL_BYTES} a pixel, row-major; valid until the next decode into this image. */
    public MemorySegment pixels() {
        return pixels;
    }

    /**
     * Decodes an encoded image (a field's bytes) into {@code into}: JPEG (by its first bytes)
     * through libjpeg-turbo where it is installed, anything else javax.imageio reads (PNG, ...)
     * through javax.imageio. {@code name} (shard, sample and field) goes into every error.
     */
    public static void decode(MemorySegment encoded, Image into, String name) throws IOException {
        if (isJpeg(encoded)) {
            Jpeg.decode(encoded, 0, 0, into, name);
        } else {
            Jpeg.decodeImageIo(encoded, into, name);
        }
    }

    /**
     * The most pixels an image may have to be decoded: Pillow's limit (twice its
     * {@code MAX_IMAGE_PIXELS}, where it raises {@code DecompressionBombError}), 178,956,970;
     * the system property {@code stoker.maxImagePixels} sets another. A small file can claim a
     * huge image (a 1 MB PNG of 30,000 × 30,000 pixels is 3.6 GB decoded): its size is read from
     * its header and checked before a pixel is decoded, by every decoder.
     */
    public static final long MAX_PIXELS = Long.getLong("stoker.maxImagePixels", 178_956_970L);

    /** Refuses an image of {@code w} × {@code h} pixels above {@link #MAX_PIXELS}, naming it. */
    static void checkPixels(long w, long h, String name) throws IOException {
        if (w * h > MAX_PIXELS) {
            throw new dev.stoker.CorruptShardException(name, -1, String.format(java.util.Locale.ROOT,
                    "an image of %,d x %,d = %,d pixels, more than the limit of %,d (a decompression bomb?"
                    + " -Dstoker.maxImagePixels raises it)", w, h, w * h, MAX_PIXELS));
        }
    }

    /** True when {@code encoded} starts as a JPEG does (the SOI marker, FF D8). */
    static boolean isJpeg(MemorySegment encoded) {
        return encoded.byteSize() >= 2 && encoded.get(ValueLayout.JAVA_BYTE, 0) == (byte) 0xFF
                && encoded.get(ValueLayout.JAVA_BYTE, 1) == (byte) 0xD8;
    }

    /** Writes the image as uint8 RGB, HWC (3 bytes a pixel, row-major), at {@code out[offset...]}. */
    public void copyRgb(MemorySegment out, long offset) {
        long n = (long) width * height;
        for (long p = 0; p < n; p++) {
            long from = PIXEL_BYTES * p;
            long to = offset + 3 * p;
            out.set(ValueLayout.JAVA_BYTE, to, pixels.get(ValueLayout.JAVA_BYTE, from));
            out.set(ValueLayout.JAVA_BYTE, to + 1, pixels.get(ValueLayout.JAVA_BYTE, from + 1));
            out.set(ValueLayout.JAVA_BYTE, to + 2, pixels.get(ValueLayout.JAVA_BYTE, from + 2));
        }
    }

    /** The image as a new array of uint8 RGB, HWC: {@code height * width * 3} bytes. */
    public byte[] rgb() {
        byte[] b = new byte[Math.multiplyExact(3, Math.multiplyExact(width, height))];
        copyRgb(MemorySegment.ofArray(b), 0);
        return b;
    }

    public int width() {
        return width;
    }

    public int height() {
        return height;
    }
}
