package dev.stoker.formats.image;

import dev.stoker.Dataset;
import dev.stoker.formats.TarSample;
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
 * without the extension.
 */
public final class ImageFolder implements Dataset<TarSample> {
    private static final List<String> EXTENSIONS = List.of(".jpg", ".jpeg", ".png");

    private final Path root;
    private final List<String> classes = new ArrayList<>();
    private final List<Path> files = new ArrayList<>();
    private final int[] labels;
    /** Characters of a file's path before its path below root. */
    private final int prefix;

    public ImageFolder(Path root) throws IOException {
        this.root = root;
        List<Integer> lab = new ArrayList<>();
        try (Stream<Path> dirs = Files.list(root)) {
            for (Path d : dirs.filter(Files::isDirectory).sorted().toList()) {
                int c = classes.size();
                List<Path> images;
                try (Stream<Path> walk = Files.walk(d)) {
                    images = walk.filter(Files::isRegularFile).filter(ImageFolder::isImage).sorted().toList();
                }
                if (images.isEmpty()) {
                    continue;
                }
                classes.add(d.getFileName().toString());
                for (Path p : images) {
                    files.add(p);
                    lab.add(c);
                }
            }
        }
        if (files.isEmpty()) {
            throw new IOException(root + ": no images (expected root/CLASS/IMAGE.jpg)");
        }
        this.labels = lab.stream().mapToInt(Integer::intValue).toArray();
        this.prefix = files.getFirst().toString().length() - root.relativize(files.getFirst()).toString().length();
    }

    private static boolean isImage(Path p) {
        String n = p.getFileName().toString().toLowerCase(Locale.ROOT);
        return EXTENSIONS.stream().anyMatch(n::endsWith);
    }

    public List<String> classes() {
        return List.copyOf(classes);
    }

    public Path path(long i) {
        return files.get(Math.toIntExact(i));
    }

    @Override
    public long size() {
        return files.size();
    }

    @Override
    public String name() {
        return root.toString();
    }

    @Override
    public TarSample get(long index) throws IOException {
        Path p = files.get(Math.toIntExact(index));
        // the files were found below root, so their paths start with root's and a separator
        String rel = p.toString().substring(prefix);
        int dot = rel.lastIndexOf('.');
        String ext = rel.substring(dot + 1).toLowerCase(Locale.ROOT);
        Map<String, MemorySegment> fields = new LinkedHashMap<>();
        fields.put(ext, MemorySegment.ofArray(Files.readAllBytes(p)));
        fields.put("cls", MemorySegment.ofArray(Integer.toString(labels[(int) index]).getBytes(StandardCharsets.US_ASCII)));
        return new TarSample(rel.substring(0, dot), root.toString(), fields);
    }
}
