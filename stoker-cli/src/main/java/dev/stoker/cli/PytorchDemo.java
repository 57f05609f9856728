package dev.stoker.cli;

import dev.stoker.formats.io.TarWriter;
import java.awt.image.BufferedImage;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import javax.imageio.IIOImage;
import javax.imageio.ImageIO;
import javax.imageio.ImageWriteParam;
import javax.imageio.ImageWriter;

/**
 * {@code stoker demo --pytorch}: the demo's story with a real PyTorch training loop (a small
 * ResNet, {@code python/examples/train_resnet.py}) over generated JPEG shards, fed once by the
 * PyTorch DataLoader (PIL and torchvision in worker processes) and once by {@code stoker.Loader}.
 */
final class PytorchDemo {
    private static final int SHARDS = 4;
    private static final int PER_SHARD = 250;
    private static final int SIDE = 256;
    private static final int WORKERS = Math.max(1, Runtime.getRuntime().availableProcessors() - 1);

    private PytorchDemo() {
    }

    static int run(PrintWriter o, Path dir, int steps, int batch) throws IOException, InterruptedException {
        String python = python();
        Path example = examples().resolve("train_resnet.py");
        String pattern = shards(o, dir);
        o.printf(Locale.ROOT, "A small ResNet, %d steps of %d images (RandomResizedCrop 224, flip, normalize), on a GPU if "
                + "torch sees one, else on one CPU thread;%n", steps, batch);
        o.printf(Locale.ROOT, "fed by the PyTorch DataLoader (%d worker processes), then by stoker.Loader (%d worker threads).%n",
                WORKERS, WORKERS);
        o.println();
        o.flush();
        Map<String, String> torch = train(o, python, example, pattern, "torch", steps, batch);
        Map<String, String> stoker = train(o, python, example, pattern, "stoker", steps, batch);
        o.printf(Locale.ROOT, "%n%-26s %20s %20s%n", "", "DataLoader", "stoker.Loader");
        o.printf(Locale.ROOT, "%-26s %17.1f ms %17.1f ms%n", "time per step", num(torch, "step_ms"), num(stoker, "step_ms"));
        o.printf(Locale.ROOT, "%-26s %17.2f ms %17.2f ms%n", "loader wait per step", num(torch, "wait_ms"), num(stoker, "wait_ms"));
        o.printf(Locale.ROOT, "%-26s %19.1f%% %19.1f%%%n", "accelerator idle", 100 * num(torch, "idle_share"),
                100 * num(stoker, "idle_share"));
        o.printf(Locale.ROOT, "%-26s %20s %20s%n", "loss, first -> last", loss(torch), loss(stoker));
        o.printf(Locale.ROOT, "%-26s %20s %19.2fx%n", "speed-up", "", num(torch, "step_ms") / num(stoker, "step_ms"));
        o.println("The same model from the same seed, on the same shards: " + dir);
        o.println("On a GPU: /usr/bin/python3 python/examples/train_resnet.py PATTERN --width 64 --steps 500 --loader stoker|torch");
        o.flush();
        return 0;
    }

    private static String loss(Map<String, String> m) {
        return String.format(Locale.ROOT, "%.3f -> %.3f", num(m, "first_loss"), num(m, "last_loss"));
    }

    private static double num(Map<String, String> m, String k) {
        return Double.parseDouble(m.get(k));
    }

    private static Map<String, String> train(PrintWriter o, String python, Path example, String pattern, String loader,
                                             int steps, int batch) throws IOException, InterruptedException {
        // on a CPU-only machine the model and the loader share the cores: one each, the same for both loaders
        List<String> cmd = List.of(python, example.toString(), pattern, "--loader", loader, "--steps", String.valueOf(steps),
                "--batch", String.valueOf(batch), "--workers", String.valueOf(WORKERS), "--torch-threads", "1", "--json");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        String jar = jar();
        if (jar != null) { // the loader's server is this very build
            pb.environment().put("STOKER_JAR", jar);
            pb.environment().put("STOKER_JAVA", ProcessHandle.current().info().command().orElse("java"));
        }
        Process p = pb.start();
        Map<String, String> result = null;
        List<String> lines = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith("{")) {
                    result = flatJson(line);
                } else if (!line.startsWith("WARNING: Using incubator")) {
                    lines.add(line);
                    o.println("  " + line);
                    o.flush();
                }
            }
        }
        int rc = p.waitFor();
        if (rc != 0 || result == null) {
            throw new IOException(example + " --loader " + loader + " failed (exit " + rc + ")"
                    + (lines.isEmpty() ? "" : ": " + lines.get(lines.size() - 1)));
        }
        return result;
    }

    /** A flat JSON object of numbers and strings (the example's one result line). */
    static Map<String, String> flatJson(String line) throws IOException {
        Map<String, String> m = new LinkedHashMap<>();
        try (var j = new com.fasterxml.jackson.core.JsonFactory().createParser(line)) {
            j.nextToken();
            while (j.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                String k = j.currentName();
                j.nextToken();
                m.put(k, j.getText());
            }
        }
        return m;
    }

    private static String python() throws IOException, InterruptedException {
        String python = System.getenv().getOrDefault("STOKER_PYTHON", "/usr/bin/python3");
        Process p = new ProcessBuilder(python, "-c", "import torch, torchvision, numpy").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (p.waitFor() != 0) {
            throw new Main.UsageException("demo --pytorch needs PyTorch, torchvision and numpy for " + python
                    + " (apt-get install -y python3-torch python3-torchvision python3-numpy, or set STOKER_PYTHON): " + out);
        }
        return python;
    }

    /** The repository's python/examples, found from this jar (stoker-cli/target/stoker-cli.jar). */
    private static Path examples() {
        String jar = jar();
        if (jar != null) {
            Path root = Path.of(jar).toAbsolutePath().getParent().getParent().getParent();
            Path ex = root.resolve("python").resolve("examples");
            if (Files.isRegularFile(ex.resolve("train_resnet.py"))) {
                return ex;
            }
        }
        throw new Main.UsageException("demo --pytorch runs python/examples/train_resnet.py of Stoker's repository; "
                + "run it from a checkout (./stoker demo --pytorch)");
    }

    private static String jar() {
        try {
            var src = PytorchDemo.class.getProtectionDomain().getCodeSource();
            Path p = src == null ? null : Path.of(src.getLocation().toURI());
            return p != null && p.toString().endsWith(".jar") ? p.toString() : null;
        } catch (java.net.URISyntaxException e) {
            return null;
        }
    }

    /** WebDataset shards of generated JPEGs with labels (kept between runs). */
    private static String shards(PrintWriter o, Path dir) throws IOException {
        Files.createDirectories(dir);
        String pattern = dir.resolve("demo-{000000..00000" + (SHARDS - 1) + "}.tar").toString();
        Path last = dir.resolve(String.format(Locale.ROOT, "demo-%06d.tar", SHARDS - 1));
        if (Files.isRegularFile(last)) {
            return pattern;
        }
        o.printf(Locale.ROOT, "generating %d JPEGs of %dx%d in %d shards...%n", SHARDS * PER_SHARD, SIDE, SIDE, SHARDS);
        o.flush();
        ImageWriter writer = ImageIO.getImageWritersByFormatName("jpg").next();
        ImageWriteParam param = writer.getDefaultWriteParam();
        param.setCompressionMode(ImageWriteParam.MODE_EXPLICIT);
        param.setCompressionQuality(0.9f);
        SplittableRandom r = new SplittableRandom(20261123);
        try {
            for (int s = 0; s < SHARDS; s++) {
                Path shard = dir.resolve(String.format(Locale.ROOT, "demo-%06d.tar", s));
                try (TarWriter tar = new TarWriter(shard)) {
                    for (int i = 0; i < PER_SHARD; i++) {
                        int label = r.nextInt(10); // ten classes, each its own colour: there is something to learn
                        Map<String, byte[]> fields = new LinkedHashMap<>();
                        fields.put("jpg", jpeg(writer, param, image(r, label)));
                        fields.put("cls", String.valueOf(label).getBytes(StandardCharsets.US_ASCII));
                        tar.write(String.format(Locale.ROOT, "sample%06d", s * PER_SHARD + i), fields);
                    }
                }
            }
        } finally {
            writer.dispose();
        }
        return pattern;
    }

    /** Smooth colour gradients with noise (compresses like a photograph), whose red says the class. */
    private static BufferedImage image(SplittableRandom r, int label) {
        BufferedImage img = new BufferedImage(SIDE, SIDE, BufferedImage.TYPE_INT_RGB);
        int r0 = label * 25, g0 = r.nextInt(256), b0 = r.nextInt(256);
        for (int y = 0; y < SIDE; y++) {
            for (int x = 0; x < SIDE; x++) {
                int n = r.nextInt(48);
                int red = Math.min(255, r0 + n / 4), green = (g0 + y / 2 + n) & 255, blue = (b0 + (x + y) / 4 + n) & 255;
                img.setRGB(x, y, red << 16 | green << 8 | blue);
            }
        }
        return img;
    }

    private static byte[] jpeg(ImageWriter writer, ImageWriteParam param, BufferedImage img) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (var out = ImageIO.createImageOutputStream(bytes)) {
            writer.setOutput(out);
            writer.write(null, new IIOImage(img, null, null), param);
        }
        return bytes.toByteArray();
    }
}
