package dev.stoker.storage;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.stream.Stream;

/**
 * Copies a dataset to fast local storage (a local disk, {@code /dev/shm}) before training. The
 * source is a local file or directory (copied with its tree), a brace pattern of local or remote
 * shards, one URL, or an {@code s3://} prefix or glob. Files already at the destination with the right
 * size are kept, so an interrupted staging resumes; each copy goes to a temporary name, is checked
 * against the expected size and renamed into place. Before copying, the destination's free space
 * is checked against what is still to copy.
 */
public final class Stager {
    private Stager() {
    }

    /** One file to stage: where it is, its path under the destination, its size. */
    public record Item(String location, String relative, long size) {
    }

    /** What staging did. */
    public record Result(int files, int copied, int kept, long bytesCopied, long bytesTotal) {
    }

    /** The files a source names, with their sizes, in order. */
    public static List<Item> plan(String source) throws IOException {
        List<Item> items = new ArrayList<>();
        if (Locations.isListing(source)) {
            int glob = Locations.firstWildcard(source);
            String dirPart = source.substring(0, source.lastIndexOf('/', glob < 0 ? source.length() - 1 : glob) + 1);
            for (Storage.Entry e : Storage.entries(source)) {
                if (!e.location().endsWith("/")) {
                    items.add(new Item(e.location(), e.location().substring(dirPart.length()), e.size()));
                }
            }
            if (items.isEmpty()) {
                throw new NoSuchFileException(source, null, "no objects under this prefix");
            }
            return items;
        }
        if (source.contains("{") || Locations.isRemote(source)) {
            for (String location : ShardPattern.expand(source)) {
                items.add(new Item(location, Locations.baseName(location), Storage.size(location)));
            }
            return items;
        }
        Path root = Locations.localPath(source);
        if (Files.isRegularFile(root)) {
            return List.of(new Item(root.toString(), root.getFileName().toString(), Files.size(root)));
        }
        if (!Files.isDirectory(root)) {
            throw new NoSuchFileException(source);
        }
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                items.add(new Item(f.toString(), root.relativize(f).toString(), Files.size(f)));
            }
        }
        return items;
    }

    /**
     * Copies {@code items} under {@code dest}, calling {@code progress} with each chunk of bytes
     * copied (or kept). Fails before copying anything if the destination has too little space.
     */
    public static Result stage(List<Item> items, Path dest, LongConsumer progress) throws IOException {
        Path existing = dest.toAbsolutePath();
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent(); // the destination is made only once the space is known to be there
        }
        return stage(items, dest, progress, Files.getFileStore(existing == null ? dest.toAbsolutePath().getRoot() : existing));
    }

    static Result stage(List<Item> items, Path dest, LongConsumer progress, FileStore store) throws IOException {
        long total = 0;
        long toCopy = 0;
        for (Item it : items) {
            total += it.size();
            if (!present(dest.resolve(it.relative()), it.size())) {
                toCopy += it.size();
            }
        }
        long free = store.getUsableSpace();
        if (toCopy > free) {
            throw new IOException(dest + ": staging needs " + toCopy + " bytes but " + store.name() + " has " + free
                    + " bytes free");
        }
        Files.createDirectories(dest);
        int copied = 0;
        int kept = 0;
        long bytes = 0;
        for (Item it : items) {
            Path target = dest.resolve(it.relative()).normalize();
            if (!target.startsWith(dest.normalize())) {
                throw new IOException(it.location() + ": its name leads outside " + dest);
            }
            if (present(target, it.size())) {
                kept++;
                progress.accept(it.size());
                continue;
            }
            Files.createDirectories(target.getParent());
            Storage.Copy copy = Storage.copy(it.location(), target, progress);
            long n = copy.bytes();
            try {
                if (n != it.size()) {
                    throw new IOException(it.location() + ": copied " + n + " bytes but expected " + it.size());
                }
                copy.file().commit();
            } finally {
                copy.file().abandon();
            }
            copied++;
            bytes += n;
        }
        return new Result(items.size(), copied, kept, bytes, total);
    }

    private static boolean present(Path p, long size) throws IOException {
        return Files.isRegularFile(p) && Files.size(p) == size;
    }
}
