package dev.stoker.cli;

import dev.stoker.storage.io.PendingFile;
import java.awt.image.RenderedImage;
import java.io.IOException;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import javax.imageio.stream.MemoryCacheImageOutputStream;

/** Writes the PNGs the commands draw (show's grid, inspect's and bench's plots) as every file is written: a {@link PendingFile}. */
final class PngFile {
    private PngFile() {
    }

    static void write(Path file, RenderedImage image) throws IOException {
        PendingFile.write(file, out -> {
            // in memory: ImageIO's default cache is a file of its own in java.io.tmpdir
            try (MemoryCacheImageOutputStream png = new MemoryCacheImageOutputStream(out)) {
                if (!ImageIO.write(image, "png", png)) {
                    throw new IOException("no PNG writer in this JVM");
                }
            }
        });
    }
}
