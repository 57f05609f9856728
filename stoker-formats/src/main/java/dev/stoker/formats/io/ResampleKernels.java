package dev.stoker.formats.io;


/**
 * The inner loops of {@link Resampler} that the JIT does not vectorize by itself: the horizontal
 * pass over a row and the sums of the vertical pass. Two implementations: a scalar one, and one
 * on the Vector API ({@link VectorKernels}) where the {@code jdk.incubator.vector} module is
 * present. Both compute every sum with fused multiply-adds in the same order, so their results
 * are identical to the bit: whether the module is present changes the speed, never the bytes
 * (NOTE [Vector API] in docs/design). The loops the JIT does vectorize (splitting pixels into
 * planes, rounding sums to bytes) are plain Java here, shared by both. One per resampler (they
 * keep tables and buffers), so one per thread.
 *
 * <p>Layout of the horizontal pass: a row is three planes of floats, R, G and B; {@code index[o]}
 * is output pixel {@code o}'s first source pixel and {@code weight[k * size + o]} its tap
 * {@code k}'s weight, zero beyond the pixel's own taps, so that every pixel has {@code taps} taps.
 * A plane has room past its last pixel for those zero taps and for whole-vector reads.
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

    /** One output row's sums in the vertical pass, before {@link #narrow}. */
    private float[] sums = new float[0];

    /** {@link #sums}, at least {@code size} long. */
    final float[] sums(int size) {
        if (sums.length < size) {
            sums = new float[size];
        }
        return sums;
    }

    /** A new image's horizontal taps: called before the rows that use them. */
    void prepare(int[] index, int taps, int size) {
    }

    /**
     * Pixels {@code [x0, x0 + n)} of a row of RGBX pixels ({@link Image}), one {@code int} each
     * (R in the low byte), into the planes {@code r}, {@code g}, {@code b} at the same positions.
     * Plain Java: the JIT vectorizes this loop (it does not when the three planes are parts of one
     * array).
     */
    static void widen(int[] in, int x0, int n, float[] r, float[] g, float[] b) {
        for (int x = x0, end = x0 + n; x < end; x++) {
            int p = in[x];
            r[x] = p & 0xFF;
            g[x] = (p >>> 8) & 0xFF;
            b[x] = (p >>> 16) & 0xFF;
        }
    }

    /**
     * The sums {@code acc[0 .. size)} of a vertical pass, rounded half up (the sums start at 0.5,
     * then truncation), capped at 255 and stored as {@code (byte) (v - 128)} at {@code out[at...]}:
     * PIL's rounding and clamping, as the weights are not negative and sum to one, so a sum is at
     * least 0.5 and only rounding can pass 255. Plain Java: the JIT vectorizes this loop.
     */
    static void narrow(float[] acc, int size, byte[] out, int at) {
        for (int i = 0; i < size; i++) {
            out[at + i] = (byte) ((int) Math.min(acc[i], 255f) - 128);
        }
    }

    /** Channel planes {@code r}, {@code g}, {@code b} of output pixel {@code o} into {@code out[at + c * planeStride + o]}, {@code o} in {@code [0, size)}. */
    abstract void filter(float[] r, float[] g, float[] b, int[] index, float[] weight, int taps, int size, float[] out,
                         int at, int planeStride);

    /**
     * One output row of the vertical pass: {@code out[at + i]} for {@code i} in {@code [0, size)}
     * = the weighted sum of {@code n} rows {@code rows[from + k * size + i]} with weights
     * {@code weight[wb + k]}, as {@link #narrow} stores it.
     */
    abstract void column(float[] rows, int from, float[] weight, int wb, int n, int size, byte[] out, int at);

    static final class Scalar extends ResampleKernels {
        @Override
        void filter(float[] r, float[] g, float[] b, int[] index, float[] weight, int taps, int size, float[] out, int at,
                    int planeStride) {
            for (int o = 0; o < size; o++) {
                int p = index[o];
                float sr = 0;
                float sg = 0;
                float sb = 0;
                for (int k = 0, wi = o; k < taps; k++, wi += size, p++) {
                    float w = weight[wi];
                    sr = Math.fma(r[p], w, sr);
                    sg = Math.fma(g[p], w, sg);
                    sb = Math.fma(b[p], w, sb);
                }
                out[at + o] = sr;
                out[at + planeStride + o] = sg;
                out[at + 2 * planeStride + o] = sb;
            }
        }

        @Override
        void column(float[] rows, int from, float[] weight, int wb, int n, int size, byte[] out, int at) {
            float[] a = sums(size);
            java.util.Arrays.fill(a, 0, size, 0.5f);
            for (int k = 0; k < n; k++) {
                float w = weight[wb + k];
                int base = from + k * size;
                for (int i = 0; i < size; i++) {
                    a[i] = Math.fma(rows[base + i], w, a[i]);
                }
            }
            narrow(a, size, out, at);
        }
    }
}
