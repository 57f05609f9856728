package dev.stoker.formats.image;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Resamples a crop of an RGB image to {@code size × size} with an antialiased bilinear (triangle)
 * filter, as PIL's {@code resize(BILINEAR)} does, and writes it normalized, as float32 CHW,
 * straight into a batch row. Separable: a horizontal pass into a float buffer, then a vertical
 * pass into the output. One per worker thread; its buffers are reused, nothing is allocated per
 * image once they are large enough.
 */
public final class Resampler {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private int[] xStart = new int[0];
    private int[] xCount = new int[0];
    private float[] xWeight = new float[0];
    private int[] yStart = new int[0];
    private int[] yCount = new int[0];
    private float[] yWeight = new float[0];
    private int xTaps;
    private int yTaps;
    private float[] rows = new float[0];
    private byte[] line = new byte[0];
    private float[] lineF = new float[0];
    private float[] acc = new float[0];
    private float[] plane = new float[0];

    /**
     * Writes crop {@code c} of {@code img}, resized to {@code size}², as {@code (v / 255 - mean[c]) / std[c]}
     * in channel-major order at {@code out[offset...]}.
     */
    public void toChw(Image img, Crop c, int size, float[] mean, float[] std, MemorySegment out, long offset) {
        int W = img.width();
        int H = img.height();
        xTaps = weights(c.x(), c.w(), size, W, true);
        yTaps = weights(c.y(), c.h(), size, H, false);
        int y0 = yStart[0];
        int y1 = yStart[size - 1] + yCount[size - 1];
        int rowsNeeded = y1 - y0;
        int rowLen = 3 * size;
        if (rows.length < rowsNeeded * rowLen) {
            rows = new float[rowsNeeded * rowLen];
        }
        if (line.length < 3 * W) {
            line = new byte[3 * W];
        }
        MemorySegment px = img.pixels();
        // horizontal pass: the crop's rows, each resampled to `size` RGB pixels; the row is widened
        // to floats once, and the common two-tap case (enlarging) has a loop of its own
        if (lineF.length < 3 * W) {
            lineF = new float[3 * W];
        }
        // only the columns the crop's filters touch are read and widened
        int x0 = xStart[0];
        int x1 = xStart[size - 1] + xCount[size - 1];
        int from = 3 * x0;
        int len = 3 * (x1 - x0);
        for (int iy = y0; iy < y1; iy++) {
            MemorySegment.copy(px, ValueLayout.JAVA_BYTE, 3L * iy * W + from, line, from, len);
            for (int i = from; i < from + len; i++) {
                lineF[i] = line[i] & 0xFF;
            }
            int base = (iy - y0) * rowLen;
            for (int ox = 0; ox < size; ox++) {
                int p = 3 * xStart[ox];
                int n = xCount[ox];
                int wb = ox * xTaps;
                int o = base + 3 * ox;
                if (n == 2) {
                    float w0 = xWeight[wb];
                    float w1 = xWeight[wb + 1];
                    rows[o] = w0 * lineF[p] + w1 * lineF[p + 3];
                    rows[o + 1] = w0 * lineF[p + 1] + w1 * lineF[p + 4];
                    rows[o + 2] = w0 * lineF[p + 2] + w1 * lineF[p + 5];
                    continue;
                }
                float r = 0;
                float g = 0;
                float b = 0;
                for (int k = 0; k < n; k++) {
                    float w = xWeight[wb + k];
                    r += w * lineF[p];
                    g += w * lineF[p + 1];
                    b += w * lineF[p + 2];
                    p += 3;
                }
                rows[o] = r;
                rows[o + 1] = g;
                rows[o + 2] = b;
            }
        }
        // vertical pass: each output row is a weighted sum of whole intermediate rows (a loop the
        // JIT vectorizes), then normalized and split into the three channel planes
        if (acc.length < rowLen) {
            acc = new float[rowLen];
            plane = new float[3 * size];
        }
        float[] sc = {1f / (255f * std[0]), 1f / (255f * std[1]), 1f / (255f * std[2])};
        float[] sh = {mean[0] / std[0], mean[1] / std[1], mean[2] / std[2]};
        long planeBytes = 4L * size * size;
        for (int oy = 0; oy < size; oy++) {
            int s0 = yStart[oy] - y0;
            int n = yCount[oy];
            int wb = oy * yTaps;
            float w0 = yWeight[wb];
            int base0 = s0 * rowLen;
            for (int i = 0; i < rowLen; i++) {
                acc[i] = w0 * rows[base0 + i];
            }
            for (int k = 1; k < n; k++) {
                float w = yWeight[wb + k];
                int base = (s0 + k) * rowLen;
                for (int i = 0; i < rowLen; i++) {
                    acc[i] += w * rows[base + i];
                }
            }
            for (int ch = 0; ch < 3; ch++) {
                float m = sc[ch];
                float a = sh[ch];
                int po = ch * size;
                if (c.flip()) {
                    for (int ox = 0; ox < size; ox++) {
                        plane[po + size - 1 - ox] = acc[3 * ox + ch] * m - a;
                    }
                } else {
                    for (int ox = 0; ox < size; ox++) {
                        plane[po + ox] = acc[3 * ox + ch] * m - a;
                    }
                }
                MemorySegment.copy(plane, po, out, F32, offset + ch * planeBytes + 4L * oy * size, size);
            }
        }
    }

    /** Filter taps for one axis: output pixel o covers [start, start + count) with normalized weights. */
    private int weights(double from, double length, int size, int limit, boolean xAxis) {
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
            int lo = Math.max(0, (int) Math.floor(center - support));
            int hi = Math.min(limit, (int) Math.ceil(center + support));
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
                lo = Math.min(limit - 1, Math.max(0, (int) Math.floor(center)));
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
