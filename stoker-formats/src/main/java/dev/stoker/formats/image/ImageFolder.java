package dev.stoker.formats.image;

import dev.stoker.Dataset;
import dev.stoker.formats.tar.TarSample;
import dev.stoker.storage.Locations;
import dev.stoker.storage.Storage;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * torchvision's {@code ImageFolder}: {@code root/CLASS/…/IMAGE.jpg}; classes are the
 * sub-folders of {@code root} sorted by name and numbered from 0, images are sorted by path
 * within each class. Sample {@code i} has the image's bytes as field {@code jpg}/{@code png}
 * (by extension) and its class number as field {@code cls}; its key is the path below root
 * without the extension. The root is a local folder or a prefix of a store that lists (an
 * {@code s3://bucket/train/}): the same tree gives the same samples either way, a remote image
 * read whole by one request.
 */
public final class ImageFolder implements Dataset<TarSample> {
    /** torchvision's {@code IMG_EXTENSIONS}: every file its ImageFolder loads is a sample here too (none dropped, no label shifted). */
    private static final List<String> EXTENSIONS = List.of(".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp");

    private final String root;
    private final boolean remote;
    private final List<String> classes = new ArrayList<>();
    /** Each image's path below root, '/'-separated. */
    private final List<String> files = new ArrayList<>();
    private final int[] labels;

    public ImageFolder(Path root) throws IOException {
        this(root.toString());
    }

    public ImageFolder(String root) throws IOException {
        this.remote = Locations.isRemote(root);
        this.root = remote && !root.endsWith("/") ? root + "/" : root;
        // every file below a class folder, by its path below root; every class folder, even one with no image
        List<String> below = new ArrayList<>();
        java.util.TreeMap<String, List<String>> byClass = new java.util.TreeMap<>();
        if (remote) {
            for (String l : Storage.list(this.root)) {
                below.add(l.substring(this.root.length()));
            }
        } else {
            Path r = Path.of(root);
            try (Stream<Path> dirs = Files.list(r)) {
                for (Path d : dirs.filter(Files::isDirectory).toList()) {
                    byClass.put(d.getFileName().toString(), new ArrayList<>());
                    try (Stream<Path> walk = Files.walk(d)) {
                        walk.filter(Files::isRegularFile).forEach(p -> below.add(r.relativize(p).toString()));
                    }
                }
            }
        }
        // classes by name (a class "a" before "a-b"), then images by path within each
        for (String n : below) {
            int slash = n.indexOf('/');
            if (slash > 0) {
                List<String> images = byClass.computeIfAbsent(n.substring(0, slash), k -> new ArrayList<>());
                if (isImage(n)) {
                    images.add(n);
                }
            }
        }
        // as torchvision's ImageFolder: a class folder with no image is an error, not a class
        // silently dropped (which would shift the label of every class after it)
        List<String> empty = byClass.entrySet().stream().filter(e -> e.getValue().isEmpty()).map(Map.Entry::getKey).toList();
        if (!empty.isEmpty() && empty.size() < byClass.size()) {
            throw new IOException(root + ": no image in the class folder" + (empty.size() > 1 ? "s " : " ") + String.join(", ", empty)
                    + " (expected root/CLASS/IMAGE with extension " + String.join(", ", EXTENSIONS)
                    + "); torchvision's ImageFolder refuses it too: remove the folder, or add its images");
        }
        List<Integer> lab = new ArrayList<>();
        for (Map.Entry<String, List<String>> c : byClass.entrySet()) {
            classes.add(c.getKey());
            for (String n : c.getValue().stream().sorted().toList()) {
                files.add(n);
                lab.add(classes.size() - 1);
            }
        }
        if (files.isEmpty()) {
            throw new IOException(root + ": no images (expected root/CLASS/IMAGE.jpg)");
        }
        this.labels = lab.stream().mapToInt(Integer::intValue).toArray();
    }

    private static boolean isImage(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        return EXTENSIONS.stream().anyMatch(n::endsWith);
    }

    public List<String> classes() {
        return List.copyOf(classes);
    }

    @Override
    public long size() {
        return files.size();
    }

    @Override
    public String name() {
        return root;
    }

    @Override
    public TarSample get(long index) throws IOException {
        String rel = files.get(Math.toIntExact(index));
        int dot = rel.lastIndexOf('.');
        String ext = rel.substring(dot + 1).toLowerCase(Locale.ROOT);
        byte[] bytes;
        if (remote) {
            try (java.io.InputStream in = Storage.open(root + rel)) {
                bytes = in.readAllBytes();
            }
        } else {
            bytes = Files.readAllBytes(Path.of(root, rel));
        }
        Map<String, MemorySegment> fields = new LinkedHashMap<>();
        fields.put(ext, MemorySegment.ofArray(bytes));
        fields.put("cls", MemorySegment.ofArray(Integer.toString(labels[(int) index]).getBytes(StandardCharsets.US_ASCII)));
        return new TarSample(rel.substring(0, dot), root, fields);
    }

    /**
     * Samples {@code [from, to)} into {@code shards}, as {@code stoker prepare shards} writes them:
     * each image under its key with {@code .} made {@code _} (a tar member's key has no dot), and
     * its class number as field {@code cls}; {@code step} runs after each. Returns the bytes of the
     * fields written.
     */
    public long writeTo(dev.stoker.formats.tar.ShardWriter shards, long from, long to, Runnable step) throws IOException {
        long bytes = 0;
        for (long i = from; i < to; i++) {
            TarSample s = get(i);
            Map<String, byte[]> fields = new LinkedHashMap<>();
            s.fields().forEach((k, v) -> fields.put(k, v.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
            shards.write(s.key().replace('.', '_'), fields);
            for (byte[] v : fields.values()) {
                bytes += v.length;
            }
            step.run();
        }
        return bytes;
    }
}
