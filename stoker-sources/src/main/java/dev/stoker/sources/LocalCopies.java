package dev.stoker.sources;

import dev.stoker.storage.Locations;
import dev.stoker.storage.ShardCache;
import dev.stoker.storage.Storage;
import dev.stoker.storage.io.Temporaries;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Local copies of remote files (HTTP, S3) for the formats that read a whole file mapped: token
 * files, {@code .npy}, Megatron pairs, JSON lines. Each goes through the shard cache and is seen
 * under its own name in a private folder (a link to the cached copy), so that a format that goes by
 * a file's name ({@code .npy}, {@code .gz}, a Megatron {@code .bin} beside its {@code .idx}) reads
 * it as it reads the local file. Local paths pass through untouched. The folder is this process's
 * ({@link Temporaries#folder}): removed when closed, on SIGINT and SIGTERM, and by a later run
 * after a SIGKILL.
 */
public final class LocalCopies implements AutoCloseable {

    private final List<String> locations;
    private final RemoteCache where;
    private ShardCache cache;
    private Path folder;
    private final List<String> pinned = new ArrayList<>();

    /** Copies of {@code locations} (local paths or URLs) through {@code cache}, made when {@link #paths()} is called. */
    public LocalCopies(List<String> locations, RemoteCache cache) {
        this.locations = locations;
        this.where = cache;
    }

    /** The local paths of the locations, in order: remote ones fetched (with a Megatron file's partner). */
    public List<Path> paths() throws IOException {
        return paths(true);
    }

    /**
     * The local paths of the locations, in order: remote ones fetched, with a Megatron file's
     * partner where {@code pairs} (files read as they are, raw tokens, need no index).
     */
    public List<Path> paths(boolean pairs) throws IOException {
        List<Path> out = new ArrayList<>();
        for (String l : locations) {
            if (!Locations.isRemote(l)) {
                out.add(Path.of(l));
                continue;
            }
            String partner = pairs ? partner(l) : null;
            boolean paired = partner != null && exists(partner, l);
            Path local = fetch(l);
            if (paired) {
                fetch(partner);
            }
            out.add(local);
        }
        return out;
    }

    private Path fetch(String location) throws IOException {
        return fetch(location, Locations.baseName(location));
    }

    /**
     * The local path of file {@code relative} (a name, or a path of names under it) of the folder
     * {@code base}: the file itself when {@code base} is local, else a copy seen at
     * {@code relative} under one private folder, so that a dataset whose index names its files
     * relative to itself (MDS's {@code index.json}) reads the copies as it reads a local folder.
     */
    public Path under(String base, String relative) throws IOException {
        if (!Locations.isRemote(base)) {
            return Path.of(base).resolve(relative);
        }
        return fetch(base.endsWith("/") ? base + relative : base + "/" + relative, relative);
    }

    private Path fetch(String location, String relative) throws IOException {
        if (folder == null) {
            folder = Temporaries.folder(Path.of(System.getProperty("java.io.tmpdir")), "stoker-remote-", false);
        }
        if (cache == null) {
            cache = new ShardCache(where.dir(), where.shardCacheBytes(), 4);
        }
        Path link = folder.resolve(relative).normalize();
        if (!link.startsWith(folder) || link.equals(folder)) {
            throw new IOException(location + ": '" + relative + "' is not a path inside its dataset's folder");
        }
        Path copy = cache.acquire(location);
        pinned.add(location);
        Files.createDirectories(link.getParent());
        Files.deleteIfExists(link);
        Locations.alias(link, location); // errors in the copy name the URL
        Locations.alias(copy, location);
        return Files.createSymbolicLink(link, copy);
    }

    /** A Megatron file's other half ({@code .bin} for {@code .idx} and back), or null. */
    private static String partner(String location) {
        if (location.endsWith(".idx")) {
            return location.substring(0, location.length() - 4) + ".bin";
        }
        if (location.endsWith(".bin")) {
            return location.substring(0, location.length() - 4) + ".idx";
        }
        return null;
    }

    /**
     * Whether {@code partner} (a Megatron file's other half) exists beside {@code location}: only
     * a clear "not found" says no (a raw token file has no index beside it); a server that cannot
     * say (a 500, a 403, a timeout) fails naming the partner and why, for a {@code .bin} read
     * without its index would be read as raw tokens.
     */
    private static boolean exists(String partner, String location) throws IOException {
        try {
            Storage.size(partner);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            throw new IOException(Locations.redact(e.getMessage() != null && e.getMessage().contains(partner) ? e.getMessage()
                    : partner + ": " + e.getMessage()) + " (whether " + Locations.baseName(location)
                    + " has this Megatron partner cannot be told: not read without it; --raw, raw=True in Python, "
                    + "reads a token file as it is without asking)", e);
        }
    }

    /** Unpins the copies, removes the links and their folder. Idempotent. */
    @Override
    public void close() throws IOException {
        if (folder != null) {
            Temporaries.removeFolder(folder); // the links, not what they point at
            folder = null;
        }
        if (cache == null) {
            return;
        }
        try {
            for (String l : pinned) {
                cache.release(l);
            }
            pinned.clear();
        } finally {
            cache.close();
            cache = null;
        }
    }
}
