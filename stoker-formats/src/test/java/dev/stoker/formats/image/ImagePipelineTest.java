package dev.stoker.formats.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.LoaderException;
import dev.stoker.formats.io.Resampler;
import dev.stoker.formats.tar.TarDataset;
import dev.stoker.formats.io.TarWriter;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

public class ImagePipelineTest {
    @TempDir
    Path tmp;

    /** A JPEG of w × h: a smooth gradient with the index stamped in, quality 95. */
    public static byte[] jpeg(int w, int h, int index) throws IOException {
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                int r = (x * 255) / Math.max(1, w - 1);
                int g = (y * 255) / Math.max(1, h - 1);
                int b = (index * 37) & 0xFF;
                img.setRGB(x, y, r << 16 | g << 8 | b);
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        var writer = ImageIO.getImageWritersByFormatName("jpg").next();
        var param = writer.getDefaultWriteParam();
        param.setCompressionMode(javax.imageio.ImageWriteParam.MODE_EXPLICIT);
        param.setCompressionQuality(0.95f);
        try (var ios = ImageIO.createImageOutputStream(out)) {
            writer.setOutput(ios);
            writer.write(null, new javax.imageio.IIOImage(img, null, null), param);
        }
        writer.dispose();
        return out.toByteArray();
    }

    static MemorySegment seg(byte[] b) {
        MemorySegment s = Arena.ofAuto().allocate(b.length);
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
        return s;
    }

    @Test
    void decodesAsImageIoDoesAndScalesInTheDctDomain() throws IOException {
        byte[] j = jpeg(256, 192, 3);
        Image fast = new Image();
        Image slow = new Image();
        Jpeg.decode(seg(j), 0, 0, fast, "t.jpg");
        Jpeg.decodeImageIo(seg(j), slow, "t.jpg");
        assertEquals(256, fast.width());
        assertEquals(192, fast.height());
        long diff = 0;
        for (long p = 0; p < 256 * 192; p++) {
            for (int ch = 0; ch < 3; ch++) {
                long i = Image.PIXEL_BYTES * p + ch;
                diff += Math.abs((fast.pixels().get(ValueLayout.JAVA_BYTE, i) & 0xFF) - (slow.pixels().get(ValueLayout.JAVA_BYTE, i) & 0xFF));
            }
        }
        assertTrue(diff / (3.0 * 256 * 192) < 2.0, "mean absolute difference " + diff / (3.0 * 256 * 192));
        if (Jpeg.native_()) {
            Jpeg.decode(seg(j), 100, 90, fast, "t.jpg");
            assertEquals(128, fast.width(), "the smallest DCT scale still at least 100 x 90");
            assertEquals(96, fast.height());
        }
        assertEquals(256L << 32 | 192, Jpeg.dimensions(seg(j), "t.jpg"));
        byte[] bad = java.util.Arrays.copyOf(j, 20);
        IOException e = assertThrows(IOException.class, () -> Jpeg.decode(seg(bad), 0, 0, new Image(), "bad.jpg"));
        assertTrue(e.getMessage().startsWith("bad.jpg: "), e.getMessage());
    }

    @Test
    void aFieldDecodesToRgbHwcWhateverItsFormat() throws IOException {
        java.awt.image.BufferedImage src = new java.awt.image.BufferedImage(5, 3, java.awt.image.BufferedImage.TYPE_INT_RGB);
        for (int y = 0; y < 3; y++) {
            for (int x = 0; x < 5; x++) {
                src.setRGB(x, y, (x * 50) << 16 | (y * 100) << 8 | (x + y) * 20);
            }
        }
        java.io.ByteArrayOutputStream png = new java.io.ByteArrayOutputStream();
        javax.imageio.ImageIO.write(src, "png", png);
        Image img = new Image();
        Image.decode(seg(png.toByteArray()), img, "s.tar:k.png");
        byte[] rgb = img.rgb();
        assertEquals(5 * 3 * 3, rgb.length);
        for (int y = 0; y < 3; y++) {
            for (int x = 0; x < 5; x++) {
                int want = src.getRGB(x, y);
                int at = 3 * (y * 5 + x);
                assertEquals(want >> 16 & 0xFF, rgb[at] & 0xFF, "R at " + x + "," + y);
                assertEquals(want >> 8 & 0xFF, rgb[at + 1] & 0xFF, "G at " + x + "," + y);
                assertEquals(want & 0xFF, rgb[at + 2] & 0xFF, "B at " + x + "," + y);
            }
        }
        byte[] j = jpeg(64, 48, 5);
        Image.decode(seg(j), img, "s.tar:k.jpg");
        Image slow = new Image();
        Jpeg.decodeImageIo(seg(j), slow, "s.tar:k.jpg");
        byte[] fast = img.rgb();
        byte[] ref = slow.rgb();
        long diff = 0;
        for (int i = 0; i < fast.length; i++) {
            diff += Math.abs((fast[i] & 0xFF) - (ref[i] & 0xFF));
        }
        assertEquals(64 * 48 * 3, fast.length);
        assertTrue(diff / (double) fast.length < 2.0, "mean absolute difference " + diff / (double) fast.length);
        MemorySegment row = Arena.ofAuto().allocate(10 + fast.length);
        img.copyRgb(row, 10);
        assertEquals(-1, MemorySegment.mismatch(row, 10, row.byteSize(), MemorySegment.ofArray(fast), 0, fast.length));
        IOException e = assertThrows(IOException.class, () -> Image.decode(seg(new byte[] {1, 2, 3}), new Image(), "s.tar:bad.png"));
        assertTrue(e.getMessage().startsWith("s.tar:bad.png"), e.getMessage());
    }

    @Test
    void aCmykJpegDecodesToTheRgbPillowGives() throws Exception {
        // fixtures/jpeg/make_jpegs.py: a CMYK JPEG with Adobe's marker, and Pillow's RGB of it
        org.junit.jupiter.api.Assumptions.assumeTrue(Jpeg.native_(), "libjpeg-turbo (libturbojpeg0) is not installed");
        Path dir = Path.of(getClass().getResource("/fixtures/jpeg/cmyk.jpg").toURI()).getParent();
        byte[] want = Files.readAllBytes(dir.resolve("cmyk.rgb"));
        Image img = new Image();
        Image.decode(seg(Files.readAllBytes(dir.resolve("cmyk.jpg"))), img, "cmyk.jpg");
        assertEquals(24, img.width());
        assertEquals(16, img.height());
        assertEquals(-1, java.util.Arrays.mismatch(want, img.rgb()), "the same bytes as Pillow");
    }

    /** The region decoder is built and loaded where the build has gcc and libjpeg's headers, as CI's has. */
    static void assumeRegions() {
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(Jpeg.regions(), "CI installs gcc and libjpeg62-turbo-dev: the region decoder must be built and load");
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(Jpeg.regions(), "built without the region-of-interest JPEG decoder");
    }

    private static Path fixtures() throws Exception {
        return Path.of(ImagePipelineTest.class.getResource("/fixtures/jpeg/crops.json").toURI()).getParent();
    }

    /** The crop decoded and resampled as the pipeline does: planes of v - 128. */
    private static byte[] resampled(byte[] jpeg, Crop crop, int size, boolean regions) throws IOException {
        Jpeg.Header header = Jpeg.header(seg(jpeg), "t.jpg");
        Image img = new Image();
        Crop in = regions ? Jpeg.decodeCrop(seg(jpeg), header, crop, size, img, "t.jpg")
                : Jpeg.decodeCropWhole(seg(jpeg), header, crop, size, img, "t.jpg");
        byte[] planes = new byte[3 * size * size];
        new Resampler().resize(img, in, size, planes);
        return planes;
    }

    @Test
    void aCropsRegionDecodesToTheWholeImagesPixels() throws Exception {
        assumeRegions();
        SplittableRandom r = new SplittableRandom(11);
        int smaller = 0;
        int tries = 0;
        for (String file : new String[] {"photo-420.jpg", "photo-444p.jpg", "gray.jpg"}) {
            byte[] jpeg = Files.readAllBytes(fixtures().resolve(file));
            Jpeg.Header header = Jpeg.header(seg(jpeg), file);
            int w = header.width();
            int h = header.height();
            for (int t = 0; t < 150; t++) {
                int size = new int[] {224, 64, 37, 500, 16}[t % 5];
                Crop crop = Crop.randomResized(w, h, r, 0.02, 1.0, 0.5, 2.0, 0.5);
                assertEquals(-1, java.util.Arrays.mismatch(resampled(jpeg, crop, size, true), resampled(jpeg, crop, size, false)),
                        () -> file + " " + crop + " to " + size);
                Image img = new Image();
                Jpeg.decodeCrop(seg(jpeg), header, crop, size, img, file);
                int eighths = Jpeg.eighths(header, crop, size);
                smaller += (long) img.width() * img.height() < (long) Jpeg.scaled(w, eighths) * Jpeg.scaled(h, eighths) ? 1 : 0;
                tries++;
            }
        }
        assertTrue(smaller > tries / 2, "most crops decode fewer pixels than the image has: " + smaller + " of " + tries);
    }

    @Test
    void aJpegCutShortIsRefusedWhateverTheCrop() throws Exception {
        assumeRegions();
        byte[] whole = Files.readAllBytes(fixtures().resolve("photo-420.jpg"));
        byte[] cut = java.util.Arrays.copyOf(whole, whole.length * 3 / 4);
        for (Crop top : new Crop[] {new Crop(0, 0, 40, 30, false), new Crop(0, 0, 333, 250, false)}) {
            IOException e = assertThrows(IOException.class,
                    () -> Jpeg.decodeCrop(seg(cut), new Jpeg.Header(333, 250, true), top, 32, new Image(), "s.tar:cut.jpg"));
            assertTrue(e.getMessage().startsWith("s.tar:cut.jpg") && e.getMessage().contains("damaged JPEG"), e.getMessage());
        }
        byte[] garbage = whole.clone();
        for (int i = 700; i < 900; i++) {
            garbage[i] = (byte) 0xFF; // markers where the scan's data should be
        }
        assertThrows(IOException.class, () -> Jpeg.decodeCrop(seg(garbage), new Jpeg.Header(333, 250, true),
                new Crop(0, 0, 333, 250, false), 224, new Image(), "garbage.jpg"));
    }

    /**
     * make_crops.py's crops of Pillow's JPEGs, decoded and resampled as the pipeline does, against
     * torchvision's {@code resized_crop} (and {@code hflip}) of them. A crop that decodes at full
     * size is torchvision's to the unit (the resampler's float arithmetic against Pillow's fixed
     * point); one shrunk more than twice decodes at a reduced DCT scale, as FFCV and DALI do, a
     * different low-pass filter, and is held to a mean difference under 2 (the bound a DCT-scaled
     * decode is held to against ImageIO's above).
     */
    @Test
    void cropsAreWhatTorchvisionMakesOfThem() throws Exception {
        com.fasterxml.jackson.databind.JsonNode crops = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(fixtures().resolve("crops.json").toFile());
        byte[] want = Files.readAllBytes(fixtures().resolve("crops.bin"));
        int at = 0;
        int reduced = 0;
        for (com.fasterxml.jackson.databind.JsonNode c : crops) {
            byte[] jpeg = Files.readAllBytes(fixtures().resolve(c.get("file").asText()));
            int size = c.get("size").asInt();
            Crop crop = new Crop(c.get("left").asInt(), c.get("top").asInt(), c.get("width").asInt(), c.get("height").asInt(),
                    c.get("flip").asBoolean());
            byte[] got = resampled(jpeg, crop, size, true);
            boolean scaled = Jpeg.eighths(Jpeg.header(seg(jpeg), "t.jpg"), crop, size) < 8;
            int max = 0;
            long sum = 0;
            for (int k = 0; k < 3; k++) {
                for (int p = 0; p < size * size; p++) {
                    int d = Math.abs(got[k * size * size + p] + 128 - (want[at + 3 * p + k] & 0xFF));
                    max = Math.max(max, d);
                    sum += d;
                }
            }
            at += 3 * size * size;
            double mean = sum / (3.0 * size * size);
            if (scaled) {
                assertTrue(mean < 2.0, c + ": mean difference " + mean + " (largest " + max + ")");
                reduced++;
            } else {
                assertTrue(max <= 1, c + ": a value " + max + " from torchvision's (mean difference " + mean + ")");
            }
        }
        assertEquals(want.length, at);
        assertTrue(reduced > 0 && reduced < crops.size(), "crops at full size and reduced: " + reduced + " of " + crops.size());
    }

    @Test
    void randomResizedCropFollowsTorchvisionsRules() {
        SplittableRandom r = new SplittableRandom(1);
        int fallbacks = 0;
        for (int i = 0; i < 20_000; i++) {
            int w = 16 + r.nextInt(500);
            int h = 16 + r.nextInt(500);
            Crop c = Crop.randomResized(w, h, new SplittableRandom(i), 0.08, 1.0, 0.75, 4.0 / 3, 0.5);
            assertTrue(c.x() >= 0 && c.y() >= 0 && c.x() + c.w() <= w && c.y() + c.h() <= h, c + " in " + w + "x" + h);
            double area = c.w() * c.h() / (w * (double) h);
            double ratio = c.w() / c.h();
            if (area < 0.07 || ratio < 0.7 || ratio > 1.4) {
                fallbacks++;
            }
            assertEquals(c, Crop.randomResized(w, h, new SplittableRandom(i), 0.08, 1.0, 0.75, 4.0 / 3, 0.5), "seeded");
        }
        assertTrue(fallbacks < 400, "rounding aside, crops keep scale and ratio: " + fallbacks);
        Crop center = Crop.center(300, 200, 256, 224);
        assertEquals(175.0, center.w(), 1e-9, "224 of the 256-pixel short side");
        assertEquals((300 - 175) / 2.0, center.x(), 1e-9);
    }

    @Test
    void resamplingAnIdentityCropGivesTheNormalizedPixelsAndFlipMirrors() throws IOException {
        byte[] j = jpeg(32, 32, 1);
        Image img = new Image();
        Jpeg.decode(seg(j), 0, 0, img, "x");
        MemorySegment out = Arena.ofAuto().allocate(4L * 3 * 32 * 32);
        MemorySegment flipped = Arena.ofAuto().allocate(4L * 3 * 32 * 32);
        Resampler r = new Resampler();
        byte[] planes = new byte[3 * 32 * 32];
        r.resize(img, new Crop(0, 0, 32, 32, false), 32, planes);
        r.normalize(planes, 32, ImagePipeline.MEAN, ImagePipeline.STD, out, 0);
        r.resize(img, new Crop(0, 0, 32, 32, true), 32, planes);
        r.normalize(planes, 32, ImagePipeline.MEAN, ImagePipeline.STD, flipped, 0);
        for (int ch = 0; ch < 3; ch++) {
            for (int y = 0; y < 32; y++) {
                for (int x = 0; x < 32; x++) {
                    int v = img.pixels().get(ValueLayout.JAVA_BYTE, (long) Image.PIXEL_BYTES * (y * 32 + x) + ch) & 0xFF;
                    float want = (v / 255f - ImagePipeline.MEAN[ch]) / ImagePipeline.STD[ch];
                    float got = out.get(ValueLayout.JAVA_FLOAT_UNALIGNED, 4L * ((ch * 32 + y) * 32 + x));
                    assertEquals(want, got, 1e-4, "ch " + ch + " at " + x + "," + y);
                    assertEquals(got, flipped.get(ValueLayout.JAVA_FLOAT_UNALIGNED, 4L * ((ch * 32 + y) * 32 + 31 - x)), 1e-6);
                }
            }
        }
    }

    Path shard(int n, int badAt) throws IOException {
        Path p = tmp.resolve("img.tar");
        try (TarWriter w = new TarWriter(p)) {
            for (int i = 0; i < n; i++) {
                byte[] j = i == badAt ? "not a jpeg".getBytes() : jpeg(64 + 8 * (i % 5), 48 + 8 * (i % 3), i);
                w.write(String.format("s%04d", i), Map.of("jpg", j, "cls", Integer.toString(i % 10).getBytes()));
            }
        }
        return p;
    }

    public static List<String> digests(dev.stoker.Loader l) throws Exception {
        List<String> out = new ArrayList<>();
        for (Batch b : l) {
            java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
            b.digest(md);
            out.add(java.util.HexFormat.of().formatHex(md.digest()));
            for (int r = 0; r < b.size(); r++) {
                long label = b.data(1).get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r);
                assertEquals(b.index(r) % 10, label);
            }
        }
        return out;
    }

    @Test
    void augmentationDoesNotDependOnTheWorkerCount() throws Exception {
        Path p = shard(40, -1);
        try (TarDataset d = new TarDataset(List.of(p))) {
            for (ImagePipeline pipe : new ImagePipeline[] {ImagePipeline.train(32), ImagePipeline.eval(32)}) {
                List<String> ref;
                try (var l = dev.stoker.Loader.builder(d, pipe.transform(), pipe.collator()).batchSize(8).seed(3).build()) {
                    ref = digests(l);
                }
                try (var l = dev.stoker.Loader.builder(d, pipe.transform(), pipe.collator()).batchSize(8).workers(3).seed(3).build()) {
                    assertEquals(ref, digests(l));
                }
                try (var l = dev.stoker.Loader.builder(d, pipe.transform(), pipe.collator()).batchSize(8).workers(2).seed(4).build()) {
                    List<String> other = digests(l);
                    assertEquals(ref.size(), other.size());
                }
            }
        }
    }

    /** Digests of epochs 0..epochs-1 of one loader over {@code d} with {@code pipe}. */
    private static List<String> epochs(TarDataset d, ImagePipeline pipe, int workers, int epochs) throws Exception {
        List<String> out = new ArrayList<>();
        try (var l = dev.stoker.Loader.builder(d, pipe.transform(), pipe.collator()).batchSize(8).workers(workers).seed(3)
                .shuffle().build()) {
            for (int e = 0; e < epochs; e++) {
                out.addAll(digests(l));
            }
        }
        return out;
    }

    @Test
    void aCachedPipelineGivesTheBatchesOfTheSamePipelineWithNothingKept() throws Exception {
        Path p = shard(40, -1);
        try (TarDataset d = new TarDataset(List.of(p))) {
            for (ImagePipeline base : new ImagePipeline[] {ImagePipeline.train(32), ImagePipeline.eval(32).uint8()}) {
                List<String> ref = epochs(d, base, 2, 3);
                ImageCache none = new ImageCache(d.size(), 1, 0); // room for no image: every epoch decodes
                assertEquals(ref, epochs(d, base.cached(none), 2, 3));
                assertEquals(0, none.entries());
                assertEquals(40 * 3, none.refused());
                ImageCache all = new ImageCache(d.size(), 1L << 30, 0);
                assertEquals(ref, epochs(d, base.cached(all), 2, 3), "kept images give the batches decoding gives");
                assertEquals(40, all.entries());
                assertEquals(40 * 2, all.hits(), "epochs after the first read every image from the cache");
                assertEquals(ref, epochs(d, base.cached(new ImageCache(d.size(), 1L << 30, 0)), 0, 3), "any worker count");
                // a bound that holds some: those are kept, the rest decode each epoch, the batches the same
                long one = (long) Image.PIXEL_BYTES * 64 * 48;
                ImageCache some = new ImageCache(d.size(), 10 * one, 0);
                assertEquals(ref, epochs(d, base.cached(some), 2, 3));
                assertTrue(some.bytes() <= 10 * one && some.entries() > 0 && some.refused() > 0,
                        some.bytes() + " bytes, " + some.entries() + " kept, " + some.refused() + " refused");
            }
            // an epoch cut short leaves whole entries, which the next epoch uses and completes
            ImageCache cache = new ImageCache(d.size(), 1L << 30, 0);
            ImagePipeline pipe = ImagePipeline.train(32).cached(cache);
            List<String> ref = epochs(d, ImagePipeline.train(32).cached(new ImageCache(d.size(), 1, 0)), 2, 2);
            try (var l = dev.stoker.Loader.builder(d, pipe.transform(), pipe.collator()).batchSize(8).seed(3)
                    .shuffle().build()) { // no workers: only the batches asked for are made
                var it = l.iterator();
                it.next();
                it.next();
            }
            assertEquals(16, cache.entries(), "kept after two batches of an epoch cut short");
            assertEquals(ref, epochs(d, pipe, 2, 2));
            assertEquals(40, cache.entries());
        }
    }

    /** A grayscale JPEG of w × h (not subsampled: every DCT scale is open to it). */
    static byte[] grayJpeg(int w, int h, int index) throws IOException {
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_BYTE_GRAY);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                img.getRaster().setSample(x, y, 0, (x * 7 + y * 3 + index * 29) & 0xFF);
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ImageIO.write(img, "jpg", out);
        return out.toByteArray();
    }

    /** Images larger than a 224 crop, of ImageNet's sizes and others, colour and gray. */
    private Path largeShard() throws IOException {
        Path p = tmp.resolve("large.tar");
        int[][] sizes = {{900, 900}, {640, 480}, {500, 375}, {1000, 700}, {333, 517}};
        try (TarWriter w = new TarWriter(p)) {
            for (int i = 0; i < 16; i++) {
                int[] s = sizes[i % sizes.length];
                byte[] j = i % 6 == 5 ? grayJpeg(s[0], s[1], i) : jpeg(s[0], s[1], i);
                w.write(String.format("s%04d", i), Map.of("jpg", j, "cls", Integer.toString(i % 10).getBytes()));
            }
        }
        return p;
    }

    /**
     * Without a cache, a JPEG decodes at the DCT scale its crop needs (a large image at half its
     * size, or less); a cache keeps what that decode gives, so its batches are those of the
     * pipeline without one, to the bit, in memory and on disk, in every epoch.
     */
    @Test
    void cachedBatchesOfLargeImagesEqualThoseOfThePipelineWithoutACache() throws Exception {
        try (TarDataset d = new TarDataset(List.of(largeShard()))) {
            for (ImagePipeline base : new ImagePipeline[] {ImagePipeline.eval(224), ImagePipeline.train(224)}) {
                List<String> ref = epochs(d, base, 2, 2);
                ImageCache ram = new ImageCache(d.size(), 1L << 30, 0);
                assertEquals(ref, epochs(d, base.cached(ram), 2, 2), "kept in memory");
                assertTrue(ram.hits() > 0, "the second epoch reads kept images");
                ImageCache disk = ImageCache.onDisk(tmp.resolve("images-" + ref.hashCode()), d.fingerprint(), d.size(),
                        1L << 30, 0);
                assertEquals(ref, epochs(d, base.cached(disk), 2, 2), "kept on disk");
                assertTrue(disk.hits() > 0, "the second epoch reads kept images");
            }
        }
    }

    /** Eval's crop is the same each epoch: each image is kept once, at the scale its crop decodes at, and read back after. */
    @Test
    void anEvalCacheKeepsEachImageOnceAtTheScaleItsCropDecodesAt() throws Exception {
        try (TarDataset d = new TarDataset(List.of(largeShard()))) {
            ImageCache cache = new ImageCache(d.size(), 1L << 30, 0);
            epochs(d, ImagePipeline.eval(224).cached(cache), 2, 3);
            assertEquals(16, cache.entries());
            assertEquals(16 * 2, cache.hits());
            Image img = new Image();
            var big = d.get(0).fields().get("jpg"); // 900 x 900: its crop of 784 decodes at half size
            assertTrue(cache.get(0, 4, big, img));
            assertEquals(450, img.width());
            assertFalse(cache.get(0, 8, big, img), "not kept whole");
        }
    }

    /**
     * NOTE [Image cache file]: a disk cache gives the batches of the pipeline with nothing kept;
     * a second mapping of the file (another process's, or a later run's) finds every image kept,
     * also while the first fills it; a damaged entry is decoded again, and counted; an image
     * decoded from other bytes is not served; a file that is not this cache is refused, named.
     */
    @Test
    void aDiskCacheIsSharedByItsMappingsAndChecksWhatItServes() throws Exception {
        Path p = shard(40, -1);
        Path folder = tmp.resolve("images");
        try (TarDataset d = new TarDataset(List.of(p))) {
            ImagePipeline base = ImagePipeline.train(32);
            List<String> ref = epochs(d, base.cached(new ImageCache(d.size(), 1, 0)), 2, 3);
            // two mappings filling it at once, as two processes on a node
            ImageCache a = ImageCache.onDisk(folder, d.fingerprint(), d.size(), 1L << 30, 0);
            ImageCache b = ImageCache.onDisk(folder, d.fingerprint(), d.size(), 1L << 30, 0);
            var other = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return epochs(d, base.cached(b), 2, 3);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertEquals(ref, epochs(d, base.cached(a), 2, 3), "the batches with nothing kept");
            assertEquals(ref, other.get(), "the other mapping's too");
            assertEquals(40, a.entries());
            assertEquals(a.bytes(), b.bytes(), "one file");
            assertTrue(a.hits() + b.hits() >= 40 * 4, a.hits() + " + " + b.hits());
            Path file = a.file();
            assertEquals(folder.resolve(ImageCache.fileName(d.fingerprint(), 0)), file);
            try (var names = java.nio.file.Files.list(folder)) {
                assertEquals(List.of(file), names.toList(), "nothing but the cache in its folder");
            }
            // a later run finds every image kept
            ImageCache later = ImageCache.onDisk(folder, d.fingerprint(), d.size(), 1L << 30, 0);
            assertEquals(ref, epochs(d, base.cached(later), 2, 3));
            assertEquals(40 * 3, later.hits());
            // a damaged entry (pixels never flushed before a crash) is dropped, counted and decoded again
            Image img = new Image();
            var sample = d.get(7).fields().get("jpg");
            assertTrue(later.get(7, 8, sample, img));
            byte[] all = java.nio.file.Files.readAllBytes(file);
            byte[] pixels = img.pixels().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            // the two mappings may both have written this image (one copy kept, the other's bytes left
            // unused): every copy of its pixels is damaged, so the one the cache keeps is
            int copies = 0;
            try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
                for (int where = indexOf(all, pixels, 0); where >= 0; where = indexOf(all, pixels, where + 1)) {
                    ch.write(java.nio.ByteBuffer.wrap(new byte[] {(byte) ~pixels[5]}), where + 5);
                    copies++;
                }
            }
            assertTrue(copies > 0, "the entry's pixels are in the file");
            ImageCache reopened = ImageCache.onDisk(folder, d.fingerprint(), d.size(), 1L << 30, 0);
            assertEquals(ref, epochs(d, base.cached(reopened), 2, 3));
            assertEquals(1, reopened.dropped());
            assertEquals(40, reopened.entries(), "kept again");
            // an image decoded from other bytes is not served from the cache
            var otherBytes = d.get(8).fields().get("jpg");
            assertFalse(reopened.get(7, 8, otherBytes, img), "another sample's bytes under this index");
            assertTrue(reopened.get(8, 8, otherBytes, img));
            // a small bound keeps some; the batches are the same
            ImageCache small = ImageCache.onDisk(tmp.resolve("small"), d.fingerprint(), d.size(),
                    10L * Image.PIXEL_BYTES * 64 * 48, 0);
            assertEquals(ref, epochs(d, base.cached(small), 2, 3));
            assertTrue(small.entries() > 0 && small.entries() < 40 && small.refused() > 0, small.entries() + " kept");
        }
    }

    /** A file under the cache's name that fails its header's check is removed and made again, and said; never a failed run. */
    @Test
    void aDiskCacheFileThatFailsItsCheckIsMadeAgain() throws Exception {
        Path folder = tmp.resolve("images");
        try (TarDataset d = new TarDataset(List.of(shard(40, -1)))) {
            ImagePipeline base = ImagePipeline.eval(32);
            List<String> ref = epochs(d, base, 2, 2);
            ImageCache first = ImageCache.onDisk(folder, d.fingerprint(), d.size(), 1L << 30, 0);
            epochs(d, base.cached(first), 2, 1);
            Path file = first.file();
            try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.wrap(new byte[] {'X'}), 0); // another header
            }
            ImageCache again = ImageCache.onDisk(folder, d.fingerprint(), d.size(), 1L << 30, 0);
            assertTrue(again.replaced().startsWith("its magic (at byte 0) is "), again.replaced());
            assertEquals(0, again.entries(), "a new file");
            assertEquals(ref, epochs(d, base.cached(again), 2, 2));
            assertEquals(40, again.entries());
            try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
                ch.truncate(ch.size() / 2); // cut short
            }
            ImageCache cut = ImageCache.onDisk(folder, d.fingerprint(), d.size(), 1L << 30, 0);
            assertTrue(cut.replaced().startsWith("its size (at byte 32) is "), cut.replaced());
            assertEquals(ref, epochs(d, base.cached(cut), 2, 2));
            assertEquals(null, ImageCache.onDisk(folder, d.fingerprint(), d.size(), 1L << 30, 0).replaced());
        }
    }

    /**
     * NOTE [Cut short while mapped]: a file cut short under a process that maps it, even inside
     * an image the resampler reads, stops being used by it: the images decode from their bytes,
     * the batches those with nothing kept, the run goes on, and the cache says where it was cut.
     */
    @Test
    void aDiskCacheFileCutShortWhileMappedIsUsedNoMore() throws Exception {
        Path folder = tmp.resolve("images");
        try (TarDataset d = new TarDataset(List.of(shard(40, -1)))) {
            ImagePipeline base = ImagePipeline.eval(32);
            List<String> ref = epochs(d, base, 2, 1);
            ImageCache cache = ImageCache.onDisk(folder, d.fingerprint(), d.size(), 1L << 30, 0);
            epochs(d, base.cached(cache), 2, 2); // kept, then read back: every entry checked
            assertEquals(40, cache.hits());
            assertEquals(-2, cache.lostAt());
            // cut inside the pixels of the last entry kept: its header and the entries before it stay
            long data;
            try (var ch = java.nio.channels.FileChannel.open(cache.file(), java.nio.file.StandardOpenOption.READ)) {
                var b = java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder());
                ch.read(b, 24);
                data = b.getLong(0);
            }
            long end = data + cache.bytes();
            long cut = (end - 2 * 4096) / 4096 * 4096;
            try (var ch = java.nio.channels.FileChannel.open(cache.file(), java.nio.file.StandardOpenOption.WRITE)) {
                ch.truncate(cut);
            }
            assertEquals(ref, epochs(d, base.cached(cache), 2, 1), "the batches with nothing kept");
            assertEquals(cut, cache.lostAt());
            assertEquals(0, cache.entries());
            assertEquals(ref, epochs(d, base.cached(cache), 0, 1), "and after");
        }
    }

    private static int indexOf(byte[] hay, byte[] needle, int from) {
        outer:
        for (int i = from; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    @Test
    void aCappedCacheKeepsEachImageAtMostItsSideAndCropsThat() throws Exception {
        Path p = tmp.resolve("big.tar");
        try (TarWriter w = new TarWriter(p)) {
            for (int i = 0; i < 6; i++) {
                w.write("s" + i, Map.of("jpg", jpeg(400 + 16 * i, 300, i + 1), "cls", Integer.toString(i % 10).getBytes()));
            }
        }
        try (TarDataset d = new TarDataset(List.of(p))) {
            ImageCache capped = new ImageCache(d.size(), 1L << 30, 128);
            assertEquals(List.of(8, 2, 2, 1), List.of(capped.eighths(100, 50), capped.eighths(500, 375), capped.eighths(300, 20),
                    capped.eighths(4000, 10)));
            List<String> first = epochs(d, ImagePipeline.train(32).cached(capped), 2, 2);
            assertEquals(6, capped.entries());
            long most = 0;
            for (int i = 0; i < 6; i++) {
                Image img = new Image();
                assertTrue(capped.get(i, capped.eighths(400 + 16 * i, 300), java.lang.foreign.MemorySegment.NULL, img));
                assertTrue(Math.max(img.width(), img.height()) <= 128, img.width() + "x" + img.height());
                most += (long) Image.PIXEL_BYTES * img.width() * img.height();
            }
            assertEquals(most, capped.bytes());
            assertEquals(most * 1.0, ImageCache.estimate(d, 128), most * 0.01, "the estimate from the headers");
            ImageCache whole = new ImageCache(d.size(), 1L << 30, 0);
            assertTrue(!first.equals(epochs(d, ImagePipeline.train(32).cached(whole), 2, 2)),
                    "capped images are other data than whole ones");
            // uncapped, each crop of these (of 64 pixels or more, for 32) decodes at half size, and is kept so
            assertTrue(whole.bytes() > 3 * capped.bytes(), whole.bytes() + " against " + capped.bytes());
        }
    }

    @Test
    void aBrokenImageNamesTheShardAndSampleOrIsSkipped() throws Exception {
        Path p = shard(10, 4);
        ImagePipeline pipe = ImagePipeline.train(32);
        try (TarDataset d = new TarDataset(List.of(p));
             var l = dev.stoker.Loader.builder(d, pipe.transform(), pipe.collator()).batchSize(5).workers(2).build()) {
            LoaderException e = assertThrows(LoaderException.class, () -> digests(l));
            assertTrue(e.getMessage().contains("img.tar") && e.getMessage().contains("s0004"), e.getMessage());
        }
        try (TarDataset d = new TarDataset(List.of(p));
             var l = dev.stoker.Loader.builder(d, pipe.transform(), pipe.collator()).batchSize(5).workers(2)
                     .errorPolicy(dev.stoker.ErrorPolicy.SKIP_SAMPLE).build()) {
            digests(l);
            assertEquals(1, l.stats().skipped());
            assertEquals(9, l.stats().samples());
        }
    }

    @Test
    void uint8ImagesAreThePixelsTheFloatImagesNormalize() throws Exception {
        Path p = tmp.resolve("u8.tar");
        try (TarWriter w = new TarWriter(p)) {
            for (int i = 0; i < 6; i++) {
                w.write("s" + i, Map.of("jpg", jpeg(48 + 8 * i, 40, i + 1), "cls", ("" + i).getBytes()));
            }
        }
        for (ImagePipeline pipe : new ImagePipeline[] {ImagePipeline.train(32), ImagePipeline.eval(32)}) {
            ImagePipeline u8 = pipe.uint8();
            assertEquals(dev.stoker.DType.UINT8, u8.collator().schema().field(0).dtype());
            try (TarDataset d = new TarDataset(List.of(p));
                 var f = dev.stoker.Loader.builder(d, pipe.transform(), pipe.collator()).batchSize(3).seed(5).workers(2).build();
                 var b = dev.stoker.Loader.builder(d, u8.transform(), u8.collator()).batchSize(3).seed(5).workers(2).build()) {
                var floats = f.iterator();
                var bytes = b.iterator();
                int checked = 0;
                while (floats.hasNext()) {
                    Batch x = floats.next();
                    Batch y = bytes.next();
                    assertEquals(x.size(), y.size());
                    int plane = 32 * 32;
                    for (int i = 0; i < 3 * plane * x.size(); i++) {
                        int c = i / plane % 3;
                        int v = y.data("image").get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) & 0xFF;
                        float want = (v / 255f - ImagePipeline.MEAN[c]) / ImagePipeline.STD[c];
                        float got = x.data("image").get(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, 4L * i);
                        assertEquals(want, got, 1e-5, "value " + i);
                        checked++;
                    }
                }
                assertTrue(!bytes.hasNext());
                assertEquals(6 * 3 * 32 * 32, checked);
            }
        }
    }

    @Test
    void anEncodedBatchCarriesEachJpegWithTheCropAndFlipTheDecodingPipelineUses() throws Exception {
        Path p = tmp.resolve("enc.tar");
        List<byte[]> jpegs = new ArrayList<>();
        try (TarWriter w = new TarWriter(p)) {
            for (int i = 0; i < 7; i++) {
                jpegs.add(jpeg(48 + 8 * i, 40 + 4 * i, i + 1));
                w.write("s" + i, Map.of("jpg", jpegs.get(i), "cls", ("" + i).getBytes()));
            }
        }
        for (ImagePipeline pipe : new ImagePipeline[] {ImagePipeline.train(32), ImagePipeline.eval(32)}) {
            ImagePipeline u8 = pipe.uint8();
            ImagePipeline enc = pipe.encoded();
            assertEquals(List.of("jpeg", "crop", "flip", "label"),
                    enc.collator().schema().fields().stream().map(dev.stoker.Field::name).toList());
            try (TarDataset d = new TarDataset(List.of(p));
                 var decoded = dev.stoker.Loader.builder(d, u8.transform(), u8.collator()).batchSize(3).seed(5).workers(2).build();
                 var encoded = dev.stoker.Loader.builder(d, enc.transform(), enc.collator()).batchSize(3).seed(5).workers(2).build()) {
                var xs = decoded.iterator();
                var ys = encoded.iterator();
                int checked = 0;
                while (xs.hasNext()) {
                    Batch x = xs.next();
                    Batch y = ys.next();
                    for (int r = 0; r < x.size(); r++) {
                        int i = (int) y.index(r);
                        assertEquals(x.index(r), i);
                        byte[] bytes = y.bytes(0, r).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                        assertArrayEquals(jpegs.get(i), bytes, "sample " + i + ": the JPEG as it is in the shard");
                        float[] c = new float[4];
                        for (int k = 0; k < 4; k++) {
                            c[k] = y.data("crop").get(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, 16L * r + 4L * k);
                        }
                        boolean flip = y.data("flip").get(java.lang.foreign.ValueLayout.JAVA_BYTE, r) != 0;
                        assertEquals(i, y.data("label").get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 8L * r));
                        byte[] again = resampled(bytes, new Crop(c[0], c[1], c[2], c[3], flip), 32, true);
                        byte[] want = new byte[3 * 32 * 32];
                        x.data("image").asSlice((long) r * want.length, want.length).asByteBuffer().get(want);
                        int off = 0;
                        for (int k = 0; k < want.length; k++) {
                            off = Math.max(off, Math.abs((want[k] & 0xFF) - ((again[k] + 128) & 0xFF)));
                        }
                        // train crops are whole pixels (the same resampling, to the bit); eval's are fractional,
                        // sent as float32
                        assertTrue(off <= (pipe.cropping() instanceof ImagePipeline.RandomResizedCrop ? 0 : 1),
                                "sample " + i + ": decoding with the batch's crop and flip differs by " + off);
                        checked++;
                    }
                }
                assertTrue(!ys.hasNext());
                assertEquals(7, checked);
            }
        }
        Path png = tmp.resolve("png.tar");
        try (TarWriter w = new TarWriter(png)) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            javax.imageio.ImageIO.write(new java.awt.image.BufferedImage(8, 8, java.awt.image.BufferedImage.TYPE_INT_RGB), "png", out);
            w.write("p0", Map.of("png", out.toByteArray(), "cls", "0".getBytes()));
        }
        ImagePipeline enc = ImagePipeline.train(32).encoded();
        try (TarDataset d = new TarDataset(List.of(png));
             var l = dev.stoker.Loader.builder(d, enc.transform(), enc.collator()).batchSize(1).build()) {
            LoaderException e = assertThrows(LoaderException.class, () -> l.iterator().next());
            assertTrue(e.getMessage().contains("png.tar:p0") && e.getMessage().contains("not a JPEG"), e.getMessage());
        }
    }

    /** One image's float plane values, in order, from a pipeline over the shard at {@code p}. */
    private static float[] firstImage(Path p, ImagePipeline pipe) throws Exception {
        try (TarDataset d = new TarDataset(List.of(p));
             var l = dev.stoker.Loader.builder(d, pipe.transform(), pipe.collator()).batchSize(1).seed(5).build()) {
            Batch b = l.iterator().next();
            int n = 3 * pipe.cropping().size() * pipe.cropping().size();
            float[] out = new float[n];
            for (int i = 0; i < n; i++) {
                out[i] = pipe.output() instanceof ImagePipeline.Uint8
                        ? b.data("image").get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) & 0xFF
                        : b.data("image").get(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, 4L * i);
            }
            return out;
        }
    }

    @Test
    void aPipelineOfOnesOwnComposesTheStagesAsGiven() throws Exception {
        Path p = tmp.resolve("own.tar");
        try (TarWriter w = new TarWriter(p)) {
            w.write("s0", Map.of("jpg", jpeg(64, 48, 1), "cls", "0".getBytes()));
        }
        int size = 16;
        var crop = new ImagePipeline.ResizeCenterCrop(20, size);
        float[] plain = firstImage(p, ImagePipeline.of(crop, ImagePipeline.HorizontalFlip.NONE, new ImagePipeline.Uint8()));
        float[] mirrored = firstImage(p, ImagePipeline.of(crop, new ImagePipeline.HorizontalFlip(1), new ImagePipeline.Uint8()));
        float[] scaled = firstImage(p, ImagePipeline.of(crop, ImagePipeline.HorizontalFlip.NONE,
                new ImagePipeline.Normalize(new float[] {0, 0.5f, 0}, new float[] {1, 1, 0.5f})));
        int plane = size * size;
        for (int i = 0; i < 3 * plane; i++) {
            int c = i / plane;
            int y = i % plane / size;
            int x = i % size;
            assertEquals(plain[i], mirrored[c * plane + y * size + (size - 1 - x)], "flip 1 mirrors every row");
            float[] mean = {0, 0.5f, 0};
            float[] std = {1, 1, 0.5f};
            assertEquals((plain[i] / 255f - mean[c]) / std[c], scaled[i], 1e-5, "the normalization given");
        }
        // the recipes are compositions of the same values
        assertEquals(ImagePipeline.RandomResizedCrop.of(224), ImagePipeline.train(224).cropping());
        assertEquals(new ImagePipeline.ResizeCenterCrop(256, 224), ImagePipeline.eval(224).cropping());
        assertThrows(IllegalArgumentException.class, () -> new ImagePipeline.RandomResizedCrop(32, 0.5, 0.2, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new ImagePipeline.HorizontalFlip(1.5));
        assertThrows(IllegalArgumentException.class, () -> new ImagePipeline.Normalize(new float[] {0, 0, 0}, new float[] {1, 0, 1}));
    }

    @Test
    void stagesComposeWithAndThenOnTheSameSampleContext() throws Exception {
        Path p = shard(12, -1);
        ImagePipeline pipe = ImagePipeline.eval(32);
        // a stage after the decode sees the same sample's context: its label made from the index
        dev.stoker.Transform<dev.stoker.formats.tar.TarSample, ImagePipeline.Prepared> shifted = pipe.transform()
                .andThen((prep, ctx) -> new ImagePipeline.Prepared(prep.chw(), ctx.index() % 10 + 1));
        try (TarDataset d = new TarDataset(List.of(p));
             var l = dev.stoker.Loader.builder(d, shifted, pipe.collator()).batchSize(4).workers(2).build()) {
            long n = 0;
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    assertEquals(b.index(r) % 10 + 1, b.data(1).get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r));
                    n++;
                }
            }
            assertEquals(12, n);
        }
        dev.stoker.Transform<Long, Long> id = dev.stoker.Transform.identity();
        assertEquals(7L, id.andThen((v, ctx) -> v * 2).andThen((v, ctx) -> v - 7).apply(7L, null));
    }

    @Test
    void aPngNamedJpgDecodesByItsBytes() throws Exception {
        BufferedImage src = new BufferedImage(40, 30, BufferedImage.TYPE_INT_RGB);
        src.setRGB(3, 4, 0x123456);
        ByteArrayOutputStream png = new ByteArrayOutputStream();
        ImageIO.write(src, "png", png);
        Path p = tmp.resolve("mixed.tar");
        try (TarWriter w = new TarWriter(p)) {
            w.write("a", Map.of("jpg", png.toByteArray(), "cls", "1".getBytes()));
            w.write("b", Map.of("jpg", jpeg(40, 30, 2), "cls", "2".getBytes()));
        }
        ImagePipeline pipe = ImagePipeline.eval(32);
        try (TarDataset d = new TarDataset(List.of(p));
             var l = dev.stoker.Loader.builder(d, pipe.transform(), pipe.collator()).batchSize(2).workers(0).build()) {
            for (Batch b : l) {
                assertEquals(2, b.size());
            }
            assertEquals(2, l.stats().samples());
        }
    }

    @Test
    void anImageClaimingMorePixelsThanTheLimitIsRefusedBeforeDecoding() throws IOException {
        // a PNG of 30,000 x 30,000 in 70 bytes: its header, a token of data, its end
        java.io.ByteArrayOutputStream png = new java.io.ByteArrayOutputStream();
        png.write(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'});
        java.nio.ByteBuffer ihdr = java.nio.ByteBuffer.allocate(13).putInt(30_000).putInt(30_000).put((byte) 8).put((byte) 2)
                .put((byte) 0).put((byte) 0).put((byte) 0);
        chunk(png, "IHDR", ihdr.array());
        chunk(png, "IDAT", new byte[] {0x78, (byte) 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01});
        chunk(png, "IEND", new byte[0]);
        // a JPEG whose frame header says 30,000 x 30,000
        byte[] jpg = jpeg(16, 16, 1);
        for (int i = 0; i + 8 < jpg.length; i++) {
            if ((jpg[i] & 0xFF) == 0xFF && ((jpg[i + 1] & 0xFF) == 0xC0 || (jpg[i + 1] & 0xFF) == 0xC2)) {
                jpg[i + 5] = (byte) (30_000 >> 8);
                jpg[i + 6] = (byte) 30_000;
                jpg[i + 7] = (byte) (30_000 >> 8);
                jpg[i + 8] = (byte) 30_000;
                break;
            }
        }
        for (byte[] bomb : List.of(png.toByteArray(), jpg)) {
            long t0 = System.nanoTime();
            dev.stoker.CorruptShardException e = assertThrows(dev.stoker.CorruptShardException.class,
                    () -> Image.decode(java.lang.foreign.MemorySegment.ofArray(bomb), new Image(), "s.tar: k/bomb"));
            assertTrue(e.getMessage().startsWith("s.tar: k/bomb: an image of 30,000 x 30,000 = 900,000,000 pixels, more than the "
                    + "limit of 178,956,970"), e.getMessage());
            assertTrue(System.nanoTime() - t0 < 2_000_000_000L, "refused from the header, not after decoding");
        }
    }

    private static void chunk(java.io.ByteArrayOutputStream out, String type, byte[] data) throws IOException {
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(type.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        crc.update(data);
        out.write(java.nio.ByteBuffer.allocate(4).putInt(data.length).array());
        out.write(type.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        out.write(data);
        out.write(java.nio.ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
    }

    @Test
    void anImageFolderNumbersClassesBySortedName() throws IOException {
        for (String c : new String[] {"zebra", "ant", "moose"}) {
            Files.createDirectories(tmp.resolve("root").resolve(c));
            for (int i = 0; i < 2; i++) {
                Files.write(tmp.resolve("root").resolve(c).resolve("b" + i + ".jpg"), jpeg(16, 16, i));
            }
        }
        Files.writeString(tmp.resolve("root/ant/notes.txt"), "not an image");
        ImageFolder f = new ImageFolder(tmp.resolve("root"));
        assertEquals(List.of("ant", "moose", "zebra"), f.classes());
        assertEquals(6, f.size());
        assertEquals("zebra/b1", f.get(5).key());
        assertEquals("2", new String(f.get(5).field("cls").toArray(ValueLayout.JAVA_BYTE)));
        // a class folder with no image shifts every later label if dropped: refused, as torchvision refuses it
        Files.createDirectories(tmp.resolve("root/bee"));
        Files.writeString(tmp.resolve("root/bee/readme.txt"), "no images yet");
        IOException e = assertThrows(IOException.class, () -> new ImageFolder(tmp.resolve("root")));
        assertTrue(e.getMessage().contains("no image in the class folder bee"), e.getMessage());
        Files.createDirectories(tmp.resolve("root/cat"));
        e = assertThrows(IOException.class, () -> new ImageFolder(tmp.resolve("root")));
        assertTrue(e.getMessage().contains("class folders bee, cat"), e.getMessage());
    }

    @Test
    void anImageFolderTakesEveryImageTorchvisionLoadsAndSaysWhichItCannotDecode() throws IOException {
        Path root = tmp.resolve("mixed");
        Files.createDirectories(root.resolve("a"));
        Files.createDirectories(root.resolve("b"));
        Files.write(root.resolve("a/one.jpg"), jpeg(20, 16, 1));
        java.awt.image.BufferedImage img = new java.awt.image.BufferedImage(24, 18, java.awt.image.BufferedImage.TYPE_INT_RGB);
        for (int y = 0; y < 18; y++) {
            for (int x = 0; x < 24; x++) {
                img.setRGB(x, y, (x * 10) << 16 | (y * 12) << 8 | 77);
            }
        }
        javax.imageio.ImageIO.write(img, "bmp", root.resolve("b/two.bmp").toFile());
        javax.imageio.ImageIO.write(img, "tiff", root.resolve("b/three.tiff").toFile());
        Files.write(root.resolve("b/four.webp"), new byte[] {'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E', 'B', 'P'});
        ImageFolder f = new ImageFolder(root);
        assertEquals(4, f.size(), "every file torchvision's ImageFolder loads is a sample (none dropped)");
        ImagePipeline p = ImagePipeline.eval(16);
        try (dev.stoker.Loader l = dev.stoker.Loader.builder(f, p.transform(), p.collator()).batchSize(1).build()) {
            RuntimeException e = assertThrows(RuntimeException.class, () -> {
                for (dev.stoker.Batch b : l) {
                    assertEquals(1, b.size());
                }
            });
            assertTrue(e.getMessage().contains("four': .webp images are not decoded here"), e.getMessage());
        }
        try (dev.stoker.Loader l = dev.stoker.Loader.builder(f, p.transform(), p.collator()).batchSize(1)
                .errorPolicy(dev.stoker.ErrorPolicy.SKIP_SAMPLE).build()) {
            long images = 0;
            for (dev.stoker.Batch b : l) {
                images += b.size();
            }
            assertEquals(3, images, "the jpg, the bmp and the tiff decode");
            assertEquals(1, l.stats().skipped(), "the webp is left out, counted");
        }
    }

    @Test
    void aGrayscaleJpegDecodesToItsLevelsThroughTheFallbackToo() throws IOException {
        BufferedImage img = new BufferedImage(32, 16, BufferedImage.TYPE_BYTE_GRAY);
        for (int y = 0; y < 16; y++) {
            for (int x = 0; x < 32; x++) {
                img.getRaster().setSample(x, y, 0, 40 + 5 * x);
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ImageIO.write(img, "jpg", out);
        byte[] bytes = out.toByteArray();
        BufferedImage decoded = ImageIO.read(new java.io.ByteArrayInputStream(bytes)); // the levels the JPEG holds
        Image fallback = new Image();
        Jpeg.decodeImageIo(java.lang.foreign.MemorySegment.ofArray(bytes), fallback, "gray.jpg");
        long diff = 0;
        for (int y = 0; y < 16; y++) {
            for (int x = 0; x < 32; x++) {
                int level = decoded.getRaster().getSample(x, y, 0);
                long at = (long) Image.PIXEL_BYTES * (y * 32L + x);
                for (int c = 0; c < 3; c++) {
                    diff += Math.abs((fallback.pixels().get(ValueLayout.JAVA_BYTE, at + c) & 0xFF) - level);
                }
            }
        }
        assertEquals(0, diff, "R, G and B are the gray level, not a color-space conversion of it");
    }

    /**
     * Without libjpeg-turbo, javax.imageio decodes: it gives libjpeg-turbo's pixels on baseline,
     * progressive, 4:2:0 and 4:4:4, gray and CMYK JPEGs, or refuses the image saying what to install.
     */
    @Test
    void theFallbackGivesLibjpegTurbosPixelsOrRefusesWithTheInstallHint() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Jpeg.native_(), "no libjpeg-turbo here to compare with");
        for (String file : new String[] {"photo-420.jpg", "photo-444p.jpg", "gray.jpg", "cmyk.jpg"}) {
            byte[] bytes = Files.readAllBytes(fixtures().resolve(file));
            Image turbo = new Image();
            Jpeg.decode(seg(bytes), 0, 0, turbo, file);
            Image fallback = new Image();
            try {
                Jpeg.decodeImageIo(seg(bytes), fallback, file);
            } catch (IOException e) {
                assertTrue(e.getMessage().contains("libturbojpeg0"), file + ": " + e.getMessage());
                continue;
            }
            assertEquals(turbo.width() + "x" + turbo.height(), fallback.width() + "x" + fallback.height(), file);
            long differ = 0;
            int worst = 0;
            for (long i = 0; i < (long) turbo.width() * turbo.height() * Image.PIXEL_BYTES; i++) {
                int d = Math.abs((turbo.pixels().get(ValueLayout.JAVA_BYTE, i) & 0xFF) - (fallback.pixels().get(ValueLayout.JAVA_BYTE, i) & 0xFF));
                differ += d > 0 ? 1 : 0;
                worst = Math.max(worst, d);
            }
            assertEquals(0, worst, file + ": " + differ + " bytes differ, by up to " + worst);
        }
    }
}
