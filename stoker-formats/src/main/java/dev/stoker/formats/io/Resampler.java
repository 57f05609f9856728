package dev.stoker.formats.io;

import dev.stoker.formats.image.Crop;
import dev.stoker.formats.image.Image;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Resamples a crop of an RGB image to {@code size × size} with an antialiased bilinear (triangle)
 * filter, as PIL's {@code resize(BILINEAR)} does, into 8-bit channel planes (rounded and clamped,
 * as PIL's result is); {@link #normalize} then writes those planes as normalized float32 CHW into
 * a batch row. Separable: a horizontal pass into a float buffer, then a vertical pass. One per
 * thread; its buffers are reused, nothing is allocated per image once they are large enough.
 *
 * <p>NOTE [Images]: the two steps are apart so that the costly one (resampling) runs in the
 * transform, on a worker, and the collator only widens and normalizes: with a streaming dataset
 * the collator runs on the consumer's thread, and an uint8 image in flight is a quarter of the
 * float32 one.
 */
public final class Resampler {
    /**
     * Pixels of room past a row's end, for whole-vector reads: two vectors of the widest any JVM
     * offers (2048 bits, 64 floats; 16 with AVX-512).
     */
    private static final int ROOM = 128;
    /** How far a crop's edge may stray past a pixel's edge, in float arithmetic, and still be on it. */
    private static final double EDGE = 1e-6;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** An RGBX pixel of {@link Image} as one int, R in its low byte. */
    private static final ValueLayout.OfInt PIXEL = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private int[] xStart = new int[0];
    private int[] xCount = new int[0];
    private float[] xWeight = new float[0];
    private int[] yStart = new int[0];
    private int[] yCount = new int[0];
    private float[] yWeight = new float[0];
    private int xTaps;
    private int yTaps;
    private float[] rows = new float[0];
    private int[] line = new int[0];
    private float[] lineR = new float[0];
    private float[] lineG = new float[0];
    private float[] lineB = new float[0];
    private float[] plane = new float[0];
    private int[] hIndex = new int[0];
    private float[] hWeight = new float[0];
    private final ResampleKernels kernels;

    public Resampler() {
        this(ResampleKernels.best());
    }

    Resampler(ResampleKernels kernels) {
        this.kernels = kernels;
    }

    /**
     * Writes crop {@code c} of {@code img}, resized to {@code size}² (and mirrored if the crop says
     * so), as three planes R, G, B of pixels {@code v} in 0..255 stored as {@code (byte) (v - 128)}
     * into {@code planes[0 .. 3 * size * size)}: signed, because the JIT vectorizes the widening of
     * signed bytes to floats in {@link #normalize}, and not that of unsigned ones.
     */
    public void resize(Image img, Crop c, int size, byte[] planes) {
        int W = img.width();
        int H = img.height();
        if (planes.length < 3 * size * size) {
            throw new IllegalArgumentException("an output of " + planes.length + " bytes for 3 x " + size + " x " + size);
        }
        xTaps = weights(c.x(), c.w(), size, W, true);
        yTaps = weights(c.y(), c.h(), size, H, false);
        int y0 = yStart[0];
        int y1 = yStart[size - 1] + yCount[size - 1];
        int rowsNeeded = y1 - y0;
        if (rows.length < 3 * rowsNeeded * size) {
            rows = new float[3 * rowsNeeded * size];
        }
        MemorySegment px = img.pixels();
        // horizontal pass: the crop's rows, each resampled to `size` pixels (mirrored if flipped)
        // into three planes of rows; the row is split into channel planes of floats once, only
        // over the columns the filters touch
        int x0 = xStart[0];
        int x1 = xStart[size - 1] + xCount[size - 1];
        int taps = rowTaps(size, c.flip());
        kernels.prepare(hIndex, taps, size);
        // room past a row's last pixel for zero taps and whole-vector reads
        int planeLength = W + taps + ROOM;
        if (line.length < W) {
            line = new int[W];
        }
        if (lineR.length < planeLength) {
            lineR = new float[planeLength];
            lineG = new float[planeLength];
            lineB = new float[planeLength];
        }
        int planeRows = rowsNeeded * size;
        for (int iy = y0; iy < y1; iy++) {
            MemorySegment.copy(px, PIXEL, (long) Image.PIXEL_BYTES * ((long) iy * W + x0), line, x0, x1 - x0);
            ResampleKernels.widen(line, x0, x1 - x0, lineR, lineG, lineB);
            kernels.filter(lineR, lineG, lineB, hIndex, hWeight, taps, size, rows, (iy - y0) * size, planeRows);
        }
        // vertical pass, plane by plane: each output row a weighted sum of whole intermediate rows
        for (int ch = 0; ch < 3; ch++) {
            int src = ch * planeRows;
            int dst = ch * size * size;
            for (int oy = 0; oy < size; oy++) {
                kernels.column(rows, src + (yStart[oy] - y0) * size, yWeight, oy * yTaps, yCount[oy], size, planes,
                        dst + oy * size);
            }
        }
    }

    /**
     * Writes three planes of {@code size}² from {@link #resize} as {@code (v / 255 - mean[c]) / std[c]},
     * float32 channel-major, at {@code out[offset...]}.
     */
    public void normalize(byte[] planes, int size, float[] mean, float[] std, MemorySegment out, long offset) {
        int planeSize = size * size;
        if (plane.length < planeSize) {
            plane = new float[planeSize];
        }
        float[] f = plane;
        for (int ch = 0; ch < 3; ch++) {
            float m = 1f / (255f * std[ch]);
            float a = 128 * m - mean[ch] / std[ch];
            int base = ch * planeSize;
            for (int i = 0; i < planeSize; i++) {
                f[i] = planes[base + i] * m + a;
            }
            MemorySegment.copy(f, 0, out, F32, offset + 4L * base, planeSize);
        }
    }

    /**
     * Writes {@link #resize}'s planes as they are, uint8 channel-major (pixels 0..255, not
     * normalized: a GPU normalizes them), at {@code out[offset...]}: the sign bit of each byte
     * flipped back, eight bytes at a time.
     */
    public void toUint8(byte[] planes, int size, MemorySegment out, long offset) {
        int n = 3 * size * size;
        if (plane8.length < n) {
            plane8 = new byte[n];
        }
        byte[] b = plane8;
        int i = 0;
        for (; i + 8 <= n; i += 8) {
            LONGS.set(b, i, (long) LONGS.get(planes, i) ^ 0x8080808080808080L);
        }
        for (; i < n; i++) {
            b[i] = (byte) (planes[i] ^ 0x80);
        }
        MemorySegment.copy(b, 0, out, ValueLayout.JAVA_BYTE, offset, n);
    }

    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private byte[] plane8 = new byte[0];

    /**
     * The horizontal taps in {@link ResampleKernels}' layout, in output order (mirrored if flipped),
     * every pixel padded with zero weights to the most taps any has; returns that number.
     */
    private int rowTaps(int size, boolean flip) {
        int taps = 0;
        for (int o = 0; o < size; o++) {
            taps = Math.max(taps, xCount[o]);
        }
        if (hIndex.length < size) {
            hIndex = new int[size];
        }
        if (hWeight.length < taps * size) {
            hWeight = new float[taps * size];
        }
        for (int o = 0; o < size; o++) {
            int ox = flip ? size - 1 - o : o;
            hIndex[o] = xStart[ox];
            for (int k = 0; k < taps; k++) {
                hWeight[k * size + o] = k < xCount[ox] ? xWeight[ox * xTaps + k] : 0f;
            }
        }
        return taps;
    }

    /**
     * Filter taps for one axis: output pixel o covers [start, start + count) with normalized
     * weights. The taps stay inside the crop's pixels, as torchvision's crop-then-resize reads
     * none outside it; so a decoder may hand over only the crop ({@link Jpeg#decodeCrop}).
     */
    private int weights(double from, double length, int size, int limit, boolean xAxis) {
        int first = Math.max(0, (int) Math.floor(from + EDGE));
        int end = Math.min(limit, Math.max(first + 1, (int) Math.ceil(from + length - EDGE)));
        double scale = length / size;
        double support = Math.max(1.0, scale);
        int taps = (int) Math.ceil(support) * 2 + 1;
        int[] start = xAxis ? xStart : yStart;
        int[] count = xAxis ? xCount : yCount;
        float[] weight = xAxis ? xWeight : yWeight;
        if (start.length < size) {
            start = new int[size];
            count = new int[size];
        }
        if (weight.length < size * taps) {
            weight = new float[size * taps];
        }
        for (int o = 0; o < size; o++) {
            double center = from + (o + 0.5) * scale;
            int lo = Math.max(first, (int) Math.floor(center - support));
            int hi = Math.min(end, (int) Math.ceil(center + support));
            double total = 0;
            int n = 0;
            for (int i = lo; i < hi && n < taps; i++) {
                double w = 1.0 - Math.abs(i + 0.5 - center) / support;
                if (w > 0) {
                    if (n == 0) {
                        lo = i;
                    }
                    weight[o * taps + n] = (float) w;
                    total += w;
                    n++;
                } else if (n > 0) {
                    break;
                }
            }
            if (n == 0) { // a crop edge exactly between pixels: take the nearest
                lo = Math.min(end - 1, Math.max(first, (int) Math.floor(center)));
                weight[o * taps] = 1f;
                n = 1;
                total = 1;
            }
            for (int k = 0; k < n; k++) {
                weight[o * taps + k] /= (float) total;
            }
            start[o] = lo;
            count[o] = n;
        }
        if (xAxis) {
            xStart = start;
            xCount = count;
            xWeight = weight;
        } else {
            yStart = start;
            yCount = count;
            yWeight = weight;
        }
        return taps;
    }
}
