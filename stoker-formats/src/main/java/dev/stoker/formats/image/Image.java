package dev.stoker.formats.image;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A decoded RGB image in off-heap memory, HWC uint8, reused from image to image: a worker keeps
 * one and decodes into it, so decoding allocates nothing once it is large enough.
 */
public final class Image {
    private MemorySegment pixels = MemorySegment.NULL;
    private int width;
    private int height;

    /** Makes room for {@code w} × {@code h} pixels. */
    void reset(int w, int h) {
        long need = 3L * w * h;
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
