package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code stoker show}: a grid of image samples with their labels, before or after the transform. */
class ShowCommandTest {
    private static final Path MDS = Path.of("../stoker-formats/src/test/resources/interop/mds/all");

    private static int show(StringWriter err, String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "show";
        System.arraycopy(args, 0, all, 1, args.length);
        return Main.run(all, new PrintWriter(new StringWriter(), true), new PrintWriter(err, true));
    }

    @Test
    void drawsTheSamplesInAGridAfterTheTransform(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("grid.png");
        StringWriter err = new StringWriter();
        assertEquals(0, show(err, "mds", MDS.toString(), "--image", "jpeg", "--label", "uint8", "--transform", "eval",
                "--size", "32", "--limit", "5", "--out", out.toString()), err.toString());
        BufferedImage grid = ImageIO.read(out.toFile());
        assertEquals(3 * (128 + 4) + 4, grid.getWidth()); // 5 samples: 3 columns, 2 rows
        assertEquals(2 * (128 + 4) + 4, grid.getHeight());
        int x = 4 + 64;
        int y = 4 + 100; // below the label's box: the first sample's pixels, not the background
        assertTrue((grid.getRGB(x, y) & 0xFFFFFF) != 0x202020, "the first tile holds the image");
        assertTrue(err.toString().contains("5 samples drawn to"), err.toString());
        try (var files = Files.list(tmp)) {
            assertEquals(1, files.count(), "nothing left beside the grid");
        }
    }

    @Test
    void aRecordFormatWithoutItsImageFieldIsAUsageError(@TempDir Path tmp) {
        StringWriter err = new StringWriter();
        Path out = tmp.resolve("grid.png");
        assertEquals(2, show(err, "mds", MDS.toString(), "--out", out.toString()));
        assertTrue(err.toString().contains("name the field of encoded images with --image"), err.toString());
        assertFalse(Files.exists(out));
    }

    @Test
    void drawsShardsImagesAsStoredBeforeTheTransform(@TempDir Path tmp) throws Exception {
        byte[] jpg = Files.readAllBytes(Path.of("../stoker-formats/src/test/resources/fixtures/jpeg/photo-444p.jpg"));
        try (dev.stoker.formats.io.TarWriter w = new dev.stoker.formats.io.TarWriter(tmp.resolve("s.tar"))) {
            for (int i = 0; i < 3; i++) {
                w.write("k" + i, java.util.Map.of("jpg", jpg, "cls", Integer.toString(7 + i).getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
            }
        }
        Path out = tmp.resolve("before.png");
        StringWriter err = new StringWriter();
        assertEquals(0, show(err, "shards", tmp.resolve("s.tar").toString(), "--transform", "none", "--out", out.toString()),
                err.toString());
        BufferedImage grid = ImageIO.read(out.toFile());
        assertEquals(2 * (128 + 4) + 4, grid.getWidth()); // 3 samples: 2 columns, 2 rows
        assertTrue(err.toString().contains("3 samples drawn to"), err.toString());
    }
}
