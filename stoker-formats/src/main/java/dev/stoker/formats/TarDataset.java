package dev.stoker.formats;

import dev.stoker.Dataset;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Uncompressed WebDataset tar shards as one random-access dataset: sample {@code i} of the
 * shards laid end to end, its fields as slices of the mapped shard (no copy). With a
 * {@link TarIndex} per shard, the loader's orders, exact and elastic resume work as on any other
 * dataset, without replaying a shard. {@link #close()} unmaps the shards.
 */
public final class TarDataset implements Dataset<TarSample>, AutoCloseable {
    private final List<Shard> shards = new ArrayList<>();
    private final Dataset<TarSample> all;

    /** One mapped shard and its index. */
    private record Shard(MappedFile file, TarIndex index) implements Dataset<TarSample> {
        @Override
        public long size() {
            return index.samples();
        }

        @Override
        public TarSample get(long i) {
            int s = Math.toIntExact(i);
            Map<String, MemorySegment> fields = new LinkedHashMap<>();
            for (int k = index.firstField[s]; k < index.firstField[s + 1]; k++) {
                fields.put(index.fieldNames[k], file.segment().asSlice(index.offsets[k], index.sizes[k]));
            }
            return new TarSample(index.keys[s], file.path().toString(), fields);
        }

        @Override
        public String name() {
            return file.path().toString();
        }
    }

    public TarDataset(List<Path> paths) throws IOException {
        if (paths.isEmpty()) {
            throw new IllegalArgumentException("no shards");
        }
        try {
            for (Path p : paths) {
                TarIndex idx = TarIndex.of(p);
                shards.add(new Shard(MappedFile.open(p), idx));
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
        this.all = Dataset.concat(shards);
    }

    @Override
    public long size() {
        return all.size();
    }

    @Override
    public String name() {
        return shards.get(0).name();
    }

    /** Samples in shard {@code s}. */
    public int samples(int s) {
        return shards.get(s).index().samples();
    }

    @Override
    public TarSample get(long index) throws IOException {
        return all.get(index);
    }

    @Override
    public void close() {
        for (Shard s : shards) {
            s.file().close();
        }
    }
}
