package dev.stoker.formats.image;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A decoded RGB image in off-heap memory, HWC uint8 with four bytes a pixel (R, G, B and one
 * unused byte: {@link #PIXEL_BYTES}), reused from image to image: a worker keeps one and decodes
 * into it, so decoding allocates nothing once it is large enough. Four bytes, not three, because
 * a pixel is then one {@code int}, and the resampler's loop that splits pixels into channel
 * planes is one the JIT vectorizes (NOTE [Vector API] in ARCHITECTURE.md).
 */
public final class Image {
    /** Bytes a pixel: R, G, B, unused. */
    public static final int PIXEL_BYTES = 4;
    private MemorySegment pixels = MemorySegment.NULL;
    private int width;
    private int height;

    /** Makes room for {@code w} × {@code h} pixels. */
    void reset(int w, int h) {
        long need = (long) PIXEL_BYTES * w * h;
        if (pixels.byteSize() < need) {
            pixels = Arena.ofAuto().allocate(Math.max(need, pixels.byteSize() * 2), 64);
        }
        this.width = w;
        this.height = h;
    }

    public MemorySegment pixels() {
        return pixels;
    }

    public int width() {
        return width;
    }

    public int height() {
        return height;
    }
}
