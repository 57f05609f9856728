package dev.stoker.cli;

import dev.stoker.Batch;
import dev.stoker.DType;
import dev.stoker.Field;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.sources.LoaderSpec;
import dev.stoker.sources.Recipe;
import dev.stoker.sources.SourceSpec;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import javax.imageio.ImageIO;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code stoker show SOURCE PATH... --out grid.png}: the first image samples in storage order, in a
 * grid with their labels, as the loader gives them: after the transform ({@code --transform train}
 * or {@code eval}: the model's view, ImageNet normalization undone), or, for shards and folders,
 * before it ({@code --transform none}: the images as stored). The sources and their flags are
 * {@code stoker bench}'s; a record format names its image field with {@code --image}.
 */
@Command(name = "show", description = "Draw image samples in a grid with their labels, before or after the transform, "
        + "to see what the model will see.")
final class ShowCommand implements Runnable {
    /** The longest side of a tile. */
    private static final int TILE = 128;
    private static final double[] MEAN = {0.485, 0.456, 0.406};
    private static final double[] STD = {0.229, 0.224, 0.225};

    @Option(names = "--out", paramLabel = "FILE.png", required = true, description = "The PNG to write.",
            scope = CommandLine.ScopeType.INHERIT)
    Path out;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "16", description = "Samples to draw (default ${DEFAULT-VALUE}).",
            scope = CommandLine.ScopeType.INHERIT)
    int limit;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a source is needed (for example: shards PATTERN)");
    }

    int draw(SourceSpec source, PrintWriter err) throws IOException {
        if (limit < 1 || limit > 1024) {
            throw new Main.UsageException("--limit takes 1 to 1024 samples, got " + limit);
        }
        dev.stoker.storage.io.PendingFile.check(out); // before the work: a device, a FIFO or a folder is refused
        LoaderSpec sequential = CatCommand.storageOrder(Math.min(limit, 64));
        List<BufferedImage> tiles = new ArrayList<>();
        List<String> labels = new ArrayList<>();
        try (Recipe recipe = source.open(sequential);
             Loader loader = sequential.start(builder(recipe, sequential), null).build()) {
            Iterator<Batch> it = loader.iterator();
            while (tiles.size() < limit && it.hasNext()) {
                try (Batch b = it.next()) {
                    for (int r = 0; r < b.size() && tiles.size() < limit; r++) {
                        tiles.add(image(b, r));
                        labels.add(label(b, r));
                    }
                }
            }
        }
        if (tiles.isEmpty()) {
            throw new Main.UsageException("the source has no samples to show");
        }
        write(tiles, labels);
        err.println("stoker: " + tiles.size() + " samples drawn to " + out);
        return 0;
    }

    /** The loader's builder; a record format whose records are batched as they are has no image to show. */
    private static LoaderBuilder builder(Recipe recipe, LoaderSpec spec) {
        try {
            return recipe.builder(spec);
        } catch (dev.stoker.sources.SpecException e) {
            if (recipe.records().isPresent()) {
                throw new Main.UsageException("show draws images: name the field of encoded images with --image (and the "
                        + "labels' with --label)");
            }
            throw e;
        }
    }

    /** Row {@code r}'s image: a decoded CHW tensor field {@code image}, or an encoded image member. */
    private static BufferedImage image(Batch b, int r) throws IOException {
        int f = field(b, "image");
        if (f >= 0 && !b.schema().field(f).isVariable()) {
            Field field = b.schema().field(f);
            long[] shape = field.shape();
            if (shape.length != 3 || shape[0] != 3) {
                throw new Main.UsageException("field 'image' is " + field + "; show draws 3 x H x W images");
            }
            int h = (int) shape[1];
            int w = (int) shape[2];
            MemorySegment px = b.bytes(f, r);
            BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
            boolean floats = field.dtype() == DType.FLOAT32;
            for (int y = 0; y < h; y++) {
                for (int x = 0; x < w; x++) {
                    int rgb = 0;
                    for (int c = 0; c < 3; c++) {
                        long i = ((long) c * h + y) * w + x;
                        int v = floats
                                ? (int) Math.round(Math.clamp((px.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), i)
                                * STD[c] + MEAN[c]) * 255, 0, 255))
                                : px.get(ValueLayout.JAVA_BYTE, i) & 0xFF;
                        rgb = rgb << 8 | v;
                    }
                    img.setRGB(x, y, rgb);
                }
            }
            return img;
        }
        for (String member : List.of("jpg", "jpeg", "png", "webp", "bmp")) {
            int m = field(b, member);
            if (m >= 0 && b.schema().field(m).isVariable()) {
                byte[] bytes = b.bytes(m, r).toArray(ValueLayout.JAVA_BYTE);
                BufferedImage img = ImageIO.read(new ByteArrayInputStream(bytes));
                if (img == null) {
                    throw new IOException("sample " + b.index(r) + ": its ." + member + " is not an image this JVM decodes");
                }
                return img;
            }
        }
        throw new Main.UsageException("the samples have no image to draw (fields " + b.schema() + "): a record format "
                + "names its image field with --image");
    }

    /** The index of the batch's field {@code name}, or -1. */
    private static int field(Batch b, String name) {
        for (int i = 0; i < b.schema().size(); i++) {
            if (b.schema().field(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    private static String label(Batch b, int r) {
        int f = field(b, "label");
        if (f >= 0 && !b.schema().field(f).isVariable() && b.schema().field(f).elements() == 1) {
            MemorySegment v = b.bytes(f, r);
            return switch (b.schema().field(f).dtype()) {
                case INT64 -> Long.toString(v.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0));
                case INT32 -> Integer.toString(v.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0));
                default -> "";
            };
        }
        int c = field(b, "cls");
        if (c >= 0 && b.schema().field(c).isVariable()) {
            String s = new String(b.bytes(c, r).toArray(ValueLayout.JAVA_BYTE), java.nio.charset.StandardCharsets.US_ASCII).strip();
            return s.matches("-?[0-9]{1,12}") ? s : "";
        }
        return "";
    }

    /** The grid, written to {@link #out} whole or not at all. */
    private void write(List<BufferedImage> tiles, List<String> labels) throws IOException {
        int cols = (int) Math.ceil(Math.sqrt(tiles.size()));
        int rows = (tiles.size() + cols - 1) / cols;
        int gap = 4;
        BufferedImage grid = new BufferedImage(cols * (TILE + gap) + gap, rows * (TILE + gap) + gap, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = grid.createGraphics();
        g.setColor(new Color(32, 32, 32));
        g.fillRect(0, 0, grid.getWidth(), grid.getHeight());
        g.setRenderingHint(RenderingHints.KEY_INTERPOLATION, RenderingHints.VALUE_INTERPOLATION_BILINEAR);
        for (int i = 0; i < tiles.size(); i++) {
            BufferedImage t = tiles.get(i);
            double scale = (double) TILE / Math.max(t.getWidth(), t.getHeight());
            int w = Math.max(1, (int) Math.round(t.getWidth() * scale));
            int h = Math.max(1, (int) Math.round(t.getHeight() * scale));
            int x = gap + (i % cols) * (TILE + gap);
            int y = gap + (i / cols) * (TILE + gap);
            g.drawImage(t, x, y, w, h, null);
            Digits.draw(grid, labels.get(i), x, y);
        }
        g.dispose();
        PngFile.write(out, grid);
    }

    /** Labels drawn with a 3 x 5 bitmap font (digits and '-'), so that no font need be installed. */
    private static final class Digits {
        private static final String[] GLYPHS = {"111101101101111", "010110010010111", "111001111100111", "111001111001111",
            "101101111001001", "111100111001111", "111100111101111", "111001001001001", "111101111101111", "111101111001111"};
        private static final int SCALE = 3;

        static void draw(BufferedImage img, String text, int x, int y) {
            if (text.isEmpty()) {
                return;
            }
            int w = text.length() * 4 * SCALE + SCALE;
            int h = 7 * SCALE;
            for (int yy = y; yy < Math.min(img.getHeight(), y + h); yy++) {
                for (int xx = x; xx < Math.min(img.getWidth(), x + w); xx++) {
                    img.setRGB(xx, yy, 0x000000);
                }
            }
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                String glyph = c == '-' ? "000000111000000" : c >= '0' && c <= '9' ? GLYPHS[c - '0'] : "000000000000000";
                for (int p = 0; p < 15; p++) {
                    if (glyph.charAt(p) == '1') {
                        int gx = x + SCALE + i * 4 * SCALE + (p % 3) * SCALE;
                        int gy = y + SCALE + (p / 3) * SCALE;
                        for (int dy = 0; dy < SCALE; dy++) {
                            for (int dx = 0; dx < SCALE; dx++) {
                                if (gx + dx < img.getWidth() && gy + dy < img.getHeight()) {
                                    img.setRGB(gx + dx, gy + dy, 0xFFFFFF);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
