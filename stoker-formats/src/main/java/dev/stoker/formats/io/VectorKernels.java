package dev.stoker.formats.io;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link ResampleKernels} on the Vector API, in vectors of the machine's preferred width
 * ({@code L} floats). The horizontal pass works on {@code L} output pixels at a time: when their
 * taps fall within {@code 2 L} consecutive source pixels (always, unless the crop shrinks by more
 * than about (2L - 1) / (L + 1): ~1.8 with AVX-512), each tap is a two-vector permute of the source loaded there, with the
 * permutation built once per image in {@link #prepare}; otherwise a gather, which is several times
 * slower. The vertical pass adds one source row at a time into the row of sums (tap by tap, as
 * the scalar kernel: 20-25% faster here than a sum kept in a register across a loop of taps,
 * whose two or three turns cost more than the sums). Only loads, stores, permutes and fused
 * multiply-adds: no conversions between lane types, whose Java fallbacks (what runs until the JIT
 * has compiled a kernel) are the slowest to run and to compile (NOTE [Vector API]).
 */
final class VectorKernels extends ResampleKernels {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();

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
    void filter(float[] rs, float[] gs, float[] bs, int[] index, float[] weight, int taps, int size, float[] out, int at,
                int planeStride) {
        int o = 0;
        if (permutes) {
            for (int j = 0; o <= size - L; o += L, j++) {
                int base = blockBase[j];
                FloatVector r1 = FloatVector.fromArray(F, rs, base);
                FloatVector r2 = FloatVector.fromArray(F, rs, base + L);
                FloatVector g1 = FloatVector.fromArray(F, gs, base);
                FloatVector g2 = FloatVector.fromArray(F, gs, base + L);
                FloatVector b1 = FloatVector.fromArray(F, bs, base);
                FloatVector b2 = FloatVector.fromArray(F, bs, base + L);
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
                    float[] plane = c == 0 ? rs : c == 1 ? gs : bs;
                    FloatVector acc = FloatVector.zero(F);
                    for (int k = 0; k < taps; k++) {
                        FloatVector w = FloatVector.fromArray(F, weight, k * size + o);
                        acc = FloatVector.fromArray(F, plane, k, index, o).fma(w, acc);
                    }
                    acc.intoArray(out, at + c * planeStride + o);
                }
            }
        }
        for (; o < size; o++) {
            for (int c = 0; c < 3; c++) {
                float[] plane = c == 0 ? rs : c == 1 ? gs : bs;
                float s = 0;
                for (int k = 0; k < taps; k++) {
                    s = Math.fma(plane[index[o] + k], weight[k * size + o], s);
                }
                out[at + c * planeStride + o] = s;
            }
        }
    }

    @Override
    void column(float[] rows, int from, float[] weight, int wb, int n, int size, byte[] out, int at) {
        float[] sums = sums(size);
        int last = size - L;
        int i = 0;
        FloatVector w0 = FloatVector.broadcast(F, weight[wb]);
        FloatVector half = FloatVector.broadcast(F, 0.5f); // the sums start at 0.5: narrow rounds by truncating
        for (; i <= last; i += L) {
            FloatVector.fromArray(F, rows, from + i).fma(w0, half).intoArray(sums, i);
        }
        for (; i < size; i++) {
            sums[i] = Math.fma(rows[from + i], weight[wb], 0.5f);
        }
        for (int k = 1; k < n; k++) {
            FloatVector w = FloatVector.broadcast(F, weight[wb + k]);
            int base = from + k * size;
            i = 0;
            for (; i <= last; i += L) {
                FloatVector.fromArray(F, rows, base + i).fma(w, FloatVector.fromArray(F, sums, i)).intoArray(sums, i);
            }
            for (; i < size; i++) {
                sums[i] = Math.fma(rows[base + i], weight[wb + k], sums[i]);
            }
        }
        narrow(sums, size, out, at);
    }
}
