package dev.stoker.formats.io;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.formats.image.Crop;
import dev.stoker.formats.image.Image;
import dev.stoker.formats.image.TestImages;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The resampler against a direct, double-precision evaluation of the same filter (PIL's
 * antialiased triangle), for both horizontal passes (scalar and the Vector API's): random images
 * and crops that enlarge, shrink (more taps), touch the edges, flip, and output sizes that are
 * not a multiple of any vector length.
 */
class ResamplerTest {

    @Test
    void theVectorApiIsUsedWhereItsModuleIsPresent() {
        // the build runs tests with --add-modules=jdk.incubator.vector: both kernels are exercised below
        assertNotNull(ResampleKernels.vector(), "the surefire configuration adds jdk.incubator.vector");
        assertTrue(ResampleKernels.best() instanceof VectorKernels);
    }

    @Test
    void theScalarAndVectorKernelsGiveTheSameBytes() {
        SplittableRandom r = new SplittableRandom(7);
        Resampler scalar = new Resampler(ResampleKernels.scalar());
        Resampler vector = new Resampler(ResampleKernels.vector());
        for (int t = 0; t < 200; t++) {
            int w = 1 + r.nextInt(400);
            int h = 1 + r.nextInt(400);
            int size = t % 4 == 0 ? 1 + r.nextInt(300) : 224;
            Image img = randomImage(w, h, r, t % 2 == 0);
            Crop c = t % 3 == 0 ? Crop.randomResized(w, h, r, 0.08, 1.0, 0.75, 4.0 / 3, 0.5)
                    : new Crop(0, 0, w, h, r.nextBoolean());
            byte[] a = new byte[3 * size * size];
            byte[] b = new byte[3 * size * size];
            scalar.resize(img, c, size, a);
            vector.resize(img, c, size, b);
            int at = java.util.Arrays.mismatch(a, b);
            assertTrue(at < 0, () -> w + "x" + h + " " + c + " -> " + size + ": byte " + at + " differs");
        }
    }

    @Test
    void bothFiltersResampleAsTheFilterSays() {
        SplittableRandom r = new SplittableRandom(42);
        for (ResampleKernels f : new ResampleKernels[] {ResampleKernels.scalar(), ResampleKernels.vector()}) {
            Resampler resampler = new Resampler(f);
            long exact = 0;
            long total = 0;
            for (int t = 0; t < 60; t++) {
                int w = 1 + r.nextInt(300);
                int h = 1 + r.nextInt(300);
                int size = new int[] {224, 37, 16, 1, 100}[t % 5];
                Image img = randomImage(w, h, r, t % 3 == 0);
                double cw = Math.max(0.5, r.nextDouble() * w);
                double ch = Math.max(0.5, r.nextDouble() * h);
                Crop c = new Crop(r.nextDouble() * (w - cw), r.nextDouble() * (h - ch), cw, ch, r.nextBoolean());
                if (t % 7 == 0) {
                    c = new Crop(0, 0, w, h, t % 2 == 0); // the whole image, to its edges
                }
                byte[] planes = new byte[3 * size * size];
                resampler.resize(img, c, size, planes);
                Crop crop = c;
                double[][] wx = new double[size][];
                double[][] wy = new double[size][];
                for (int o = 0; o < size; o++) {
                    wx[o] = taps(c.x(), c.w(), size, w, c.flip() ? size - 1 - o : o);
                    wy[o] = taps(c.y(), c.h(), size, h, o);
                }
                for (int k = 0; k < 3; k++) {
                    for (int oy = 0; oy < size; oy++) {
                        for (int ox = 0; ox < size; ox++) {
                            double want = reference(img, wx[ox], wy[oy], k);
                            int got = planes[(k * size + oy) * size + ox] + 128;
                            assertTrue(Math.abs(got - want) <= 0.5 + 1e-3 + 1, () -> f.getClass().getSimpleName() + " "
                                    + w + "x" + h + " " + crop + " -> " + size + ": " + got + " against " + want);
                            total++;
                            if (got == (int) Math.min(255, Math.max(0, Math.floor(want + 0.5)))) {
                                exact++;
                            }
                        }
                    }
                }
            }
            assertTrue(exact > 0.99 * total, f.getClass().getSimpleName() + ": float rounding aside, the same pixels: "
                    + exact + " of " + total);
        }
    }

    private static Image randomImage(int w, int h, SplittableRandom r, boolean smooth) {
        Image img = TestImages.sized(w, h);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                for (int k = 0; k < 3; k++) {
                    int v = smooth ? (x * 7 + y * 3 + k * 50) & 0xFF : r.nextInt(256);
                    img.pixels().set(ValueLayout.JAVA_BYTE, (long) Image.PIXEL_BYTES * (y * w + x) + k, (byte) v);
                }
                // the unused byte is noise: none of it may reach a channel
                img.pixels().set(ValueLayout.JAVA_BYTE, (long) Image.PIXEL_BYTES * (y * w + x) + 3, (byte) r.nextInt(256));
            }
        }
        return img;
    }

    /** One output pixel of channel k: the separable filter's weights over the source, summed directly. */
    private static double reference(Image img, double[] wx, double[] wy, int k) {
        double s = 0;
        for (int y = 0; y < img.height(); y++) {
            if (wy[y] == 0) {
                continue;
            }
            for (int x = 0; x < img.width(); x++) {
                if (wx[x] != 0) {
                    int v = img.pixels().get(ValueLayout.JAVA_BYTE, (long) Image.PIXEL_BYTES * (y * img.width() + x) + k) & 0xFF;
                    s += wy[y] * wx[x] * v;
                }
            }
        }
        return s;
    }

    /**
     * Normalized weights over source pixels 0..limit of output pixel o (the nearest pixel if
     * none), zero outside the crop's pixels: torchvision crops, then resizes the crop alone.
     */
    private static double[] taps(double from, double length, int size, int limit, int o) {
        double scale = length / size;
        double support = Math.max(1.0, scale);
        double center = from + (o + 0.5) * scale;
        double[] w = new double[limit];
        int first = (int) Math.floor(from + 1e-6);
        int end = Math.min(limit, Math.max(first + 1, (int) Math.ceil(from + length - 1e-6)));
        double total = 0;
        for (int i = first; i < end; i++) {
            w[i] = Math.max(0, 1.0 - Math.abs(i + 0.5 - center) / support);
            total += w[i];
        }
        if (total == 0) {
            w[Math.min(end - 1, Math.max(first, (int) Math.floor(center)))] = 1;
            return w;
        }
        for (int i = 0; i < limit; i++) {
            w[i] /= total;
        }
        return w;
    }
}
