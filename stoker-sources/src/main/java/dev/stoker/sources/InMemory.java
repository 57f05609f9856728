package dev.stoker.sources;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.stoker.storage.Locations;
import dev.stoker.storage.ShardPattern;
import dev.stoker.storage.io.Temporaries;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * A source's local files (its paths; the arrays source's files and their lengths' files) loaded into memory before the first epoch ({@code in_memory},
 * {@code --in-memory}): copied into a private folder of a memory file system ({@code /dev/shm},
 * or {@code $STOKER_SHM_DIR}), which the source then reads in place of the originals (NOTE [In
 * memory]).
 *
 * <p>NOTE [In memory]: the seeds' "whole dataset in RAM when it fits". Every format maps or
 * reads its files, so a copy in a memory file system is the dataset in memory for every format at
 * once: no epoch touches the disk again, and unlike the page cache the kernel does not drop it
 * under pressure. The size is checked first: the files' total against the memory file system's
 * free space and the memory the kernel says is available, refused with the numbers when it does
 * not fit. Remote sources are left as they are (they read through the shard cache). The copy is
 * the process's own ({@link Temporaries#folder}): deleted when the source closes, by a shutdown
 * hook when the process ends first, by a reaper child a second after a SIGKILL (NOTE [Reaper]),
 * and, named by its pid, swept when the next source opens otherwise; another user's entries in
 * the memory file system are never read or followed (NOTE [Folders of one's own]). Content
 * fingerprints do not depend on where the bytes live, so a state saved from the copy resumes on
 * the originals and back.
 */
final class InMemory implements AutoCloseable {
    private static final String PREFIX = "stoker-memory-";

    private final Path folder;
    private boolean closed;

    private InMemory(Path folder) {
        this.folder = folder;
    }

    /**
     * Opens {@code spec} from a copy of its local files in memory: the recipe holds the copy and
     * deletes it when closed.
     *
     * @throws SpecException naming {@code in_memory}, with the numbers, when the files do not fit
     */
    static Recipe open(SourceSpec spec, LoaderSpec loader) throws IOException {
        ObjectNode json = (ObjectNode) Specs.tree(Specs.json(spec));
        List<Copy> copies = new ArrayList<>();
        JsonNode paths = json.get("paths");
        if (paths instanceof ArrayNode a) {
            for (int i = 0; i < a.size(); i++) {
                copies.add(plan(a.get(i).asText(), copies.size()));
            }
        } else if (json.get("path") instanceof TextNode t) {
            copies.add(plan(t.asText(), 0));
        }
        int named = copies.size();
        List<ObjectNode> fields = new ArrayList<>(); // the arrays source's files, and their lengths' files
        if (json.get("files") instanceof ObjectNode files) {
            for (JsonNode f : files) {
                for (JsonNode at = f; at instanceof ObjectNode o && o.get("path") instanceof TextNode t; at = o.get("lengths")) {
                    fields.add(o);
                    copies.add(plan(t.asText(), copies.size()));
                }
            }
        }
        long bytes = copies.stream().mapToLong(Copy::bytes).sum();
        Path root = shmRoot();
        long free = Files.getFileStore(root).getUsableSpace();
        long available = memAvailable();
        if (bytes > free || bytes > available) {
            throw new SpecException("in_memory", String.format(Locale.ROOT, "the source's files take %,d bytes; %s has "
                    + "%,d bytes free and the kernel has %,d bytes of memory available: they do not fit (read them from "
                    + "disk, or stage a part)", bytes, root, free, available));
        }
        InMemory memory = new InMemory(Temporaries.folder(root, PREFIX, true));
        try {
            long t0 = System.nanoTime();
            ArrayNode rewritten = json.arrayNode();
            for (Copy c : copies) {
                rewritten.add(c.into(memory.folder));
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            if (paths instanceof ArrayNode) {
                ArrayNode copied = json.arrayNode();
                for (int i = 0; i < named; i++) {
                    copied.add(rewritten.get(i));
                }
                json.set("paths", copied);
            } else if (named > 0) {
                json.set("path", rewritten.get(0));
            }
            for (int i = 0; i < fields.size(); i++) {
                fields.get(i).set("path", rewritten.get(named + i));
            }
            Recipe r = Specs.source(json.toString()).open(loader);
            r.hold(memory);
            r.report(() -> String.format(Locale.ROOT, "in memory: %,d bytes of the source's files copied into %s in %.2f s",
                    bytes, memory.folder, seconds));
            return r;
        } catch (IOException | RuntimeException | Error e) {
            memory.close();
            throw e;
        }
    }

    /** One path of the spec: a remote location (kept), a folder (copied whole) or files (a pattern's). */
    private record Copy(String location, int index, Path folder, List<Path> files, long bytes) {
        /** Copies into {@code root}; the location the spec then names. */
        String into(Path root) throws IOException {
            if (files == null && folder == null) {
                return location;
            }
            Path to = Files.createDirectory(root.resolve(Integer.toString(index)));
            if (folder != null) {
                Path target = to.resolve(folder.getFileName() == null ? "data" : folder.getFileName().toString());
                copyTree(folder, target);
                return target.toString();
            }
            for (Path f : files) {
                Files.copy(f, to.resolve(f.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
            }
            String name = Path.of(location).getFileName().toString(); // the pattern's own name, in the copy's folder
            return to.resolve(name).toString();
        }
    }

    private static Copy plan(String location, int index) throws IOException {
        if (Locations.isRemote(location)) {
            return new Copy(location, index, null, null, 0);
        }
        Path p = Path.of(location);
        if (Files.isDirectory(p)) {
            long[] size = {0};
            Files.walkFileTree(p, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path f, BasicFileAttributes a) {
                    size[0] += a.size();
                    return FileVisitResult.CONTINUE;
                }
            });
            return new Copy(location, index, p, null, size[0]);
        }
        List<Path> files = new ArrayList<>();
        List<String> names;
        try {
            names = ShardPattern.expand(location);
        } catch (IllegalArgumentException e) {
            throw new SpecException("paths", e.getMessage());
        }
        for (String n : names) {
            Path f = Path.of(n);
            if (!Files.isRegularFile(f)) {
                throw new java.nio.file.NoSuchFileException(n);
            }
            files.add(f);
            String partner = n.endsWith(".bin") ? n.substring(0, n.length() - 4) + ".idx"
                    : n.endsWith(".idx") ? n.substring(0, n.length() - 4) + ".bin" : null;
            if (partner != null && Files.isRegularFile(Path.of(partner)) && !names.contains(partner)) {
                files.add(Path.of(partner)); // a Megatron pair travels together
            }
        }
        long bytes = 0;
        for (Path f : files) {
            bytes += Files.size(f);
        }
        return new Copy(location, index, null, files, bytes);
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> all = Files.walk(from)) {
            all.forEach(p -> {
                try {
                    Path target = to.resolve(from.relativize(p).toString());
                    if (Files.isDirectory(p)) {
                        Files.createDirectories(target);
                    } else {
                        Files.copy(p, target, StandardCopyOption.COPY_ATTRIBUTES);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Where copies in memory go: {@code $STOKER_SHM_DIR}, else {@code /dev/shm}. */
    private static Path memoryFolder() {
        String dir = System.getenv("STOKER_SHM_DIR");
        return Path.of(dir != null && !dir.isBlank() ? dir : "/dev/shm");
    }

    /** The memory file system ({@link #memoryFolder}), refused when it is no folder. */
    static Path shmRoot() throws IOException {
        Path root = memoryFolder();
        if (!Files.isDirectory(root)) {
            throw new SpecException("in_memory", root + " is no folder: in_memory copies into a memory file system "
                    + "(set STOKER_SHM_DIR to a tmpfs)");
        }
        return root;
    }

    /**
     * Removes this user's copies whose process is gone (NOTE [Reaper]: when a kill of its whole
     * process group took the reaper too): cheap, one listing of the memory file system's
     * {@code stoker-memory-*}, done whenever a source opens.
     */
    static void sweep() {
        Path root = memoryFolder();
        if (Files.isDirectory(root)) {
            Temporaries.sweepFolders(root, PREFIX);
        }
    }

    /** MemAvailable of {@code /proc/meminfo}, in bytes (unbounded where it cannot be read). */
    static long memAvailable() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux, or unreadable: the file system's free space is the bound
        }
        return Long.MAX_VALUE;
    }

    /** Deletes the copy. Idempotent. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            Temporaries.removeFolder(folder);
        }
    }
}
