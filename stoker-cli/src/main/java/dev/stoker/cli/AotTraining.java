package dev.stoker.cli;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import javax.imageio.ImageIO;

/**
 * The training run of the JVM's start-up cache (NOTE [Start-up cache] in docs/design): the
 * {@code ./stoker} launcher runs it once per build, with {@code -XX:AOTCacheOutput}, so that the
 * classes a command loads come loaded and linked, and the methods its first batches run come with
 * their profiles, in every later command. Not a command: {@code java -cp stoker-cli.jar
 * dev.stoker.cli.AotTraining DIR} writes a small image folder (JPEGs), its tar shards and a token
 * file into DIR, an empty folder the caller removes, and runs the benches a user starts with over
 * them, their output discarded. Exits 1 when a bench fails: the launcher then keeps no cache.
 * {@code AotTrainingTest} runs it, so that a change to the commands cannot leave it failing unseen.
 */
public final class AotTraining {
    private AotTraining() {
    }

    public static void main(String[] args) throws IOException {
        try {
            run(Path.of(args[0]));
        } catch (IllegalStateException e) {
            System.err.println("stoker: start-up cache: " + e.getMessage());
            System.exit(1);
        }
    }

    /** Writes the data into {@code dir} and runs the commands over it; fails if one fails. */
    static void run(Path dir) throws IOException {
        Path folder = dir.resolve("images");
        Random random = new Random(1);
        for (int i = 0; i < 96; i++) {
            Path d = folder.resolve("class" + i % 2);
            Files.createDirectories(d);
            ImageIO.write(picture(random, 300 + 20 * (i % 5), 240 + 16 * (i % 3)), "jpg", d.resolve(i + ".jpg").toFile());
        }
        Path tokens = dir.resolve("tokens.bin");
        byte[] t = new byte[2 * 64 * 1024];
        random.nextBytes(t);
        Files.write(tokens, t);
        String shards = dir.resolve("shard-%06d.tar").toString();
        String[][] runs = {
            {"prepare", "shards", folder.toString(), "--out", shards, "--maxcount", "32"},
            {"bench", "folder", folder.toString(), "--transform", "train224", "--batch", "16", "--workers", "2", "--epochs", "2", "--json"},
            {"bench", "shards", String.format(shards, 0), String.format(shards, 1), String.format(shards, 2),
                "--transform", "train224", "--batch", "16", "--workers", "2", "--epochs", "2", "--json"},
            {"bench", "shards", String.format(shards, 0), "--transform", "eval224", "--batch", "16", "--workers", "1", "--json"},
            {"bench", "tokens", tokens.toString(), "--seq-len", "128", "--batch", "8", "--workers", "2", "--json"},
            {"bench", "synthetic", "--samples", "20000", "--workers", "2", "--json"},
        };
        PrintWriter discard = new PrintWriter(Writer.nullWriter());
        for (String[] run : runs) {
            java.io.StringWriter err = new java.io.StringWriter();
            if (Main.run(run, discard, new PrintWriter(err, true)) != 0) {
                throw new IllegalStateException(String.join(" ", run) + " failed: " + err.toString().strip());
            }
        }
    }

    /** A smooth picture with some noise, so that the JPEG has what photos have: every frequency. */
    private static BufferedImage picture(Random random, int w, int h) {
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                int r = (x * 255 / w + random.nextInt(32)) & 0xFF;
                int g = (y * 255 / h + random.nextInt(32)) & 0xFF;
                int b = ((x + y) * 255 / (w + h) + random.nextInt(32)) & 0xFF;
                img.setRGB(x, y, r << 16 | g << 8 | b);
            }
        }
        return img;
    }
}
