package dev.stoker.formats.image;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link ResampleKernels} on the Vector API, in vectors of the machine's preferred width
 * ({@code L} floats). Widening splits the interleaved bytes into planes with one byte permute
 * per channel. The horizontal pass works on {@code L} output pixels at a time: when their taps
 * fall within {@code 2 L} consecutive source pixels (always, unless the crop shrinks by more than
 * about 1.9), each tap is a two-vector permute of the source loaded there, with the permutation
 * built once per image in {@link #prepare}; otherwise a gather, which is several times slower. The
 * vertical pass keeps its sums in registers and narrows to bytes in the same loop.
 */
final class VectorKernels extends ResampleKernels {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    /** Bytes in a vector as wide as F's: 4 L, of which a row's L pixels take 3 L. */
    private static final VectorSpecies<Byte> BYTES = VectorSpecies.of(byte.class, F.vectorShape());
    /** Bytes in a vector of L lanes: the narrowed result of a vertical sum. */
    private static final VectorSpecies<Byte> NARROW = VectorSpecies.of(byte.class,
            jdk.incubator.vector.VectorShape.forBitSize(8 * L));
    private static final VectorShuffle<Byte>[] CHANNEL = channelShuffles();

    /** For block j and tap k, lanes (j * taps + k) * L ...: source pixel - the block's first, as floats. */
    private float[] permutation = new float[0];
    /** Block j's first source pixel (the lowest: mirrored blocks run backwards). */
    private int[] blockBase = new int[0];
    private boolean permutes;

    private VectorKernels() {
    }

    static ResampleKernels create() {
        return new VectorKernels();
    }

    @SuppressWarnings("unchecked")
    private static VectorShuffle<Byte>[] channelShuffles() {
        VectorShuffle<Byte>[] s = new VectorShuffle[3];
        for (int c = 0; c < 3; c++) {
            int[] lanes = new int[BYTES.length()];
            for (int l = 0; l < L; l++) {
                lanes[l] = 3 * l + c;
            }
            s[c] = VectorShuffle.fromArray(BYTES, lanes, 0);
        }
        return s;
    }

    @Override
    void prepare(int[] index, int taps, int size) {
        int blocks = size / L;
        if (permutation.length < blocks * taps * L) {
            permutation = new float[blocks * taps * L];
        }
        if (blockBase.length < blocks) {
            blockBase = new int[blocks];
        }
        permutes = true;
        for (int j = 0; j < blocks && permutes; j++) {
            int o = j * L;
            int base = Math.min(index[o], index[o + L - 1]);
            blockBase[j] = base;
            for (int l = 0; l < L; l++) {
                int first = index[o + l] - base;
                if (first < 0 || first + taps > 2 * L) {
                    permutes = false; // taps spread wider than two vectors: gathers
                    break;
                }
                for (int k = 0; k < taps; k++) {
                    permutation[(j * taps + k) * L + l] = first + k;
                }
            }
        }
    }

    @Override
    void widen(byte[] in, int x0, int n, float[] out, int stride) {
        int x = x0;
        // a vector reads 4 L bytes from 3 x: stop where that would pass the row's end
        for (int last = Math.min(x0 + n - L, (in.length - BYTES.length()) / 3); x <= last; x += L) {
            ByteVector b = ByteVector.fromArray(BYTES, in, 3 * x);
            for (int c = 0; c < 3; c++) {
                ((FloatVector) ((IntVector) b.rearrange(CHANNEL[c]).convertShape(VectorOperators.B2I, I, 0))
                        .and(0xFF).convert(VectorOperators.I2F, 0)).intoArray(out, c * stride + x);
            }
        }
        widenPixels(in, x, x0 + n, out, stride);
    }

    @Override
    void filter(float[] row, int stride, int[] index, float[] weight, int taps, int size, float[] out, int at,
                int planeStride) {
        int o = 0;
        if (permutes) {
            for (int j = 0; o <= size - L; o += L, j++) {
                int base = blockBase[j];
                FloatVector r1 = FloatVector.fromArray(F, row, base);
                FloatVector r2 = FloatVector.fromArray(F, row, base + L);
                FloatVector g1 = FloatVector.fromArray(F, row, stride + base);
                FloatVector g2 = FloatVector.fromArray(F, row, stride + base + L);
                FloatVector b1 = FloatVector.fromArray(F, row, 2 * stride + base);
                FloatVector b2 = FloatVector.fromArray(F, row, 2 * stride + base + L);
                FloatVector r = FloatVector.zero(F);
                FloatVector g = r;
                FloatVector b = r;
                for (int k = 0; k < taps; k++) {
                    FloatVector p = FloatVector.fromArray(F, permutation, (j * taps + k) * L);
                    FloatVector w = FloatVector.fromArray(F, weight, k * size + o);
                    r = p.selectFrom(r1, r2).fma(w, r);
                    g = p.selectFrom(g1, g2).fma(w, g);
                    b = p.selectFrom(b1, b2).fma(w, b);
                }
                r.intoArray(out, at + o);
                g.intoArray(out, at + planeStride + o);
                b.intoArray(out, at + 2 * planeStride + o);
            }
        } else {
            for (; o <= size - L; o += L) {
                for (int c = 0; c < 3; c++) {
                    FloatVector acc = FloatVector.zero(F);
                    for (int k = 0; k < taps; k++) {
                        FloatVector w = FloatVector.fromArray(F, weight, k * size + o);
                        acc = FloatVector.fromArray(F, row, c * stride + k, index, o).fma(w, acc);
                    }
                    acc.intoArray(out, at + c * planeStride + o);
                }
            }
        }
        for (; o < size; o++) {
            for (int c = 0; c < 3; c++) {
                float s = 0;
                for (int k = 0; k < taps; k++) {
                    s = Math.fma(row[c * stride + index[o] + k], weight[k * size + o], s);
                }
                out[at + c * planeStride + o] = s;
            }
        }
    }

    @Override
    void column(float[] rows, int from, float[] weight, int wb, int n, int size, byte[] out, int at) {
        int i = 0;
        for (int last = size - L; i <= last; i += L) {
            FloatVector acc = FloatVector.broadcast(F, 0.5f);
            for (int k = 0; k < n; k++) {
                acc = FloatVector.fromArray(F, rows, from + k * size + i).fma(FloatVector.broadcast(F, weight[wb + k]), acc);
            }
            // round half up (the 0.5 above, then truncation) and clamp, as PIL does
            ((ByteVector) ((IntVector) acc.max(0f).min(255f).convert(VectorOperators.F2I, 0)).sub(128)
                    .convertShape(VectorOperators.I2B, NARROW, 0)).intoArray(out, at + i);
        }
        for (; i < size; i++) {
            float acc = 0.5f;
            for (int k = 0; k < n; k++) {
                acc = Math.fma(rows[from + k * size + i], weight[wb + k], acc);
            }
            out[at + i] = (byte) ((int) Math.min(255f, Math.max(0f, acc)) - 128);
        }
    }
}
