package dev.stoker.djl;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/** Data with something to learn, written as real tools write it. */
final class Generated {
    private Generated() {
    }

    /**
     * An image folder ({@code root/class_K/img_N.jpg}, JPEGs by ImageIO) in which each class has
     * its own colour, with noise and a random bright square on top.
     */
    static Path images(Path root, int classes, int perClass, int size, long seed) throws IOException {
        SplittableRandom r = new SplittableRandom(seed);
        for (int k = 0; k < classes; k++) {
            Path dir = Files.createDirectories(root.resolve("class_" + k));
            int base = java.awt.Color.HSBtoRGB((float) k / classes, 0.8f, 0.8f);
            for (int n = 0; n < perClass; n++) {
                BufferedImage img = new BufferedImage(size, size, BufferedImage.TYPE_INT_RGB);
                int sx = r.nextInt(size / 2), sy = r.nextInt(size / 2);
                for (int y = 0; y < size; y++) {
                    for (int x = 0; x < size; x++) {
                        int rgb = base;
                        if (x >= sx && x < sx + size / 4 && y >= sy && y < sy + size / 4) {
                            rgb = 0xf0f0f0;
                        }
                        int noise = r.nextInt(41) - 20;
                        int red = clamp((rgb >> 16 & 255) + noise), green = clamp((rgb >> 8 & 255) + noise),
                                blue = clamp((rgb & 255) + noise);
                        img.setRGB(x, y, red << 16 | green << 8 | blue);
                    }
                }
                ImageIO.write(img, "jpg", root.resolve("class_" + k).resolve(String.format("img_%04d.jpg", n)).toFile());
            }
        }
        return root;
    }

    private static int clamp(int v) {
        return Math.max(0, Math.min(255, v));
    }

    /**
     * {@code n} uint16 tokens below {@code vocab}, each mostly decided by the one before it
     * (9 in 10 follow {@code t -> (5t + 3) mod vocab}, the rest are random): a bigram model learns
     * them, an untrained one does not.
     */
    static Path tokens(Path file, int n, int vocab, long seed) throws IOException {
        SplittableRandom r = new SplittableRandom(seed);
        ByteBuffer b = ByteBuffer.allocate(2 * n).order(ByteOrder.LITTLE_ENDIAN);
        int t = 0;
        for (int i = 0; i < n; i++) {
            t = r.nextInt(10) == 0 ? r.nextInt(vocab) : (5 * t + 3) % vocab;
            b.putShort((short) t);
        }
        Files.write(file, b.array());
        return file;
    }
}
