package dev.stoker.formats.tar;

import dev.stoker.formats.io.TarReader;
import dev.stoker.formats.io.TarWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Writes samples into a numbered series of tar shards, as WebDataset's {@code ShardWriter}:
 * {@code pattern} is a printf pattern such as {@code train-%06d.tar}; a new shard starts when the
 * current one holds {@code maxCount} samples or would pass {@code maxSize} bytes. The set is
 * published whole: each shard is finished under a temporary name, and all of them are renamed
 * into place by {@link #close()}, so that an interrupted run leaves no set that looks complete
 * (and, stopped by a signal, nothing at all).
 */
public final class ShardWriter implements AutoCloseable {
    private final String pattern;
    private final long maxCount;
    private final long maxSize;
    private final List<Path> written = new ArrayList<>();
    /** Finished shards, not yet published: their files alone (a writer's buffer is gone with it). */
    private final List<dev.stoker.storage.io.PendingFile> finished = new ArrayList<>();
    private TarWriter current;
    private int shard;

    public ShardWriter(String pattern, long maxCount, long maxSize) {
        if (maxCount < 1 || maxSize < 1) {
            throw new IllegalArgumentException("maxCount and maxSize must be >= 1");
        }
        String probe = String.format(pattern, 0);
        if (probe.equals(String.format(pattern, 1))) {
            throw new IllegalArgumentException("pattern '" + pattern + "' has no shard number (use e.g. train-%06d.tar)");
        }
        this.pattern = pattern;
        this.maxCount = maxCount;
        this.maxSize = maxSize;
    }

    public void write(String key, Map<String, byte[]> fields) throws IOException {
        long size = 0;
        for (byte[] v : fields.values()) {
            size += 2L * TarReader.BLOCK + v.length;
        }
        if (current != null && (current.samples() >= maxCount || current.samples() > 0 && current.bytes() + size > maxSize)) {
            finished.add(current.finish());
            current = null;
        }
        if (current == null) {
            Path p = Path.of(String.format(pattern, shard++));
            current = new TarWriter(p);
            written.add(p);
        }
        current.write(key, fields);
    }

    /** The shards written (or being written). */
    public List<Path> shards() {
        return List.copyOf(written);
    }

    /** Publishes the set: every shard renamed into place, in order; one that fails takes back those renamed before it. */
    @Override
    public void close() throws IOException {
        if (current != null) {
            finished.add(current.finish());
            current = null;
        }
        int published = 0;
        try {
            for (dev.stoker.storage.io.PendingFile f : finished) {
                f.commit();
                published++;
            }
        } catch (IOException | RuntimeException e) {
            for (int i = 0; i < finished.size(); i++) {
                try {
                    if (i < published) {
                        finished.get(i).unpublish();
                    } else {
                        finished.get(i).abandon();
                    }
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            finished.clear();
            written.clear();
            throw e;
        }
        finished.clear();
    }

    /** For a writer that failed half-way: nothing of the set is published, and nothing is left behind. */
    public void abandon() throws IOException {
        if (current != null) {
            current.abandon();
            current = null;
        }
        for (dev.stoker.storage.io.PendingFile f : finished) {
            f.abandon();
        }
        finished.clear();
        written.clear();
    }
}
