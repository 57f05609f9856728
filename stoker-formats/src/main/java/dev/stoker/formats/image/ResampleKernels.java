package dev.stoker.formats.image;

/**
 * The inner loops of {@link Resampler}: widening a row of interleaved RGB bytes to three planes
 * of floats, the horizontal pass over such a row, and one output row of the vertical pass. Two
 * implementations: a scalar one, and one on the Vector API ({@link VectorKernels}) where the
 * {@code jdk.incubator.vector} module is present. Both compute every sum with fused multiply-adds
 * in the same order, so their results are identical to the bit: whether the module is present
 * changes the speed, never the bytes (NOTE [Vector API] in ARCHITECTURE.md). One per resampler (they keep tables and buffers), so one
 * per thread.
 *
 * <p>Layout of the horizontal pass: a widened row is three planes of {@code stride} floats (R at
 * 0, G at {@code stride}, B at {@code 2 * stride}); {@code index[o]} is output pixel {@code o}'s
 * first source pixel and {@code weight[k * size + o]} its tap {@code k}'s weight, zero beyond the
 * pixel's own taps, so that every pixel has {@code taps} taps. A plane has room past its last
 * pixel for those zero taps and for whole-vector reads.
 */
abstract class ResampleKernels {

    /**
     * The Vector API's kernels where the {@code jdk.incubator.vector} module is present (and the
     * system property {@code stoker.scalar} is not true), else scalar ones.
     */
    static ResampleKernels best() {
        return VECTOR && !Boolean.getBoolean("stoker.scalar") ? VectorKernels.create() : scalar();
    }

    static ResampleKernels scalar() {
        return new Scalar();
    }

    /** The Vector API's kernels, or null where its module is not present. */
    static ResampleKernels vector() {
        return VECTOR ? VectorKernels.create() : null;
    }

    private static final boolean VECTOR = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();

    /** A new image's horizontal taps: called before the rows that use them. */
    void prepare(int[] index, int taps, int size) {
    }

    /** Pixels {@code [x0, x0 + n)} of the interleaved row {@code in} (pixel x at {@code 3 x}) into the planes of {@code out}. */
    abstract void widen(byte[] in, int x0, int n, float[] out, int stride);

    /** Channel {@code c} of output pixel {@code o} into {@code out[at + c * planeStride + o]}, {@code o} in {@code [0, size)}. */
    abstract void filter(float[] row, int stride, int[] index, float[] weight, int taps, int size, float[] out, int at,
                         int planeStride);

    /**
     * One output row of the vertical pass: {@code out[at + i]} for {@code i} in {@code [0, size)}
     * = the weighted sum of {@code n} rows {@code rows[from + k * size + i]} with weights
     * {@code weight[wb + k]}, rounded half up, clamped to 0..255 and stored as {@code (byte) (v - 128)}.
     */
    abstract void column(float[] rows, int from, float[] weight, int wb, int n, int size, byte[] out, int at);

    /** {@link #widen}, one pixel at a time, for pixels {@code [from, to)}. */
    static void widenPixels(byte[] in, int from, int to, float[] out, int stride) {
        for (int x = from; x < to; x++) {
            out[x] = in[3 * x] & 0xFF;
            out[stride + x] = in[3 * x + 1] & 0xFF;
            out[2 * stride + x] = in[3 * x + 2] & 0xFF;
        }
    }

    static final class Scalar extends ResampleKernels {
        private float[] acc = new float[0];

        @Override
        void widen(byte[] in, int x0, int n, float[] out, int stride) {
            widenPixels(in, x0, x0 + n, out, stride);
        }

        @Override
        void filter(float[] row, int stride, int[] index, float[] weight, int taps, int size, float[] out, int at,
                    int planeStride) {
            for (int o = 0; o < size; o++) {
                int p = index[o];
                float r = 0;
                float g = 0;
                float b = 0;
                for (int k = 0, wi = o; k < taps; k++, wi += size, p++) {
                    float w = weight[wi];
                    r = Math.fma(row[p], w, r);
                    g = Math.fma(row[stride + p], w, g);
                    b = Math.fma(row[2 * stride + p], w, b);
                }
                out[at + o] = r;
                out[at + planeStride + o] = g;
                out[at + 2 * planeStride + o] = b;
            }
        }

        @Override
        void column(float[] rows, int from, float[] weight, int wb, int n, int size, byte[] out, int at) {
            if (acc.length < size) {
                acc = new float[size];
            }
            float[] a = acc;
            java.util.Arrays.fill(a, 0, size, 0.5f);
            for (int k = 0; k < n; k++) {
                float w = weight[wb + k];
                int base = from + k * size;
                for (int i = 0; i < size; i++) {
                    a[i] = Math.fma(rows[base + i], w, a[i]);
                }
            }
            for (int i = 0; i < size; i++) {
                // round half up and clamp, as PIL does; the weights sum to one, so only rounding can overshoot
                out[at + i] = (byte) ((int) Math.min(255f, Math.max(0f, a[i])) - 128);
            }
        }
    }
}
