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
    private final List<MappedFile> files = new ArrayList<>();
    private final List<TarIndex> indexes = new ArrayList<>();
    private final long[] ends;
    private final String name;

    public TarDataset(List<Path> shards) throws IOException {
        if (shards.isEmpty()) {
            throw new IllegalArgumentException("no shards");
        }
        this.name = shards.get(0).toString();
        this.ends = new long[shards.size()];
        long total = 0;
        try {
            for (int i = 0; i < shards.size(); i++) {
                TarIndex idx = TarIndex.of(shards.get(i));
                indexes.add(idx);
                files.add(MappedFile.open(shards.get(i)));
                total += idx.samples();
                ends[i] = total;
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    public long size() {
        return ends[ends.length - 1];
    }

    @Override
    public String name() {
        return name;
    }

    /** Samples in shard {@code s}. */
    public int samples(int s) {
        return indexes.get(s).samples();
    }

    @Override
    public TarSample get(long index) {
        if (index < 0 || index >= size()) {
            throw new IndexOutOfBoundsException(name + ": sample " + index + " of " + size());
        }
        int lo = 0;
        int hi = ends.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (index < ends[mid]) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        int s = (int) (index - (lo == 0 ? 0 : ends[lo - 1]));
        TarIndex idx = indexes.get(lo);
        MappedFile f = files.get(lo);
        Map<String, MemorySegment> fields = new LinkedHashMap<>();
        for (int k = idx.firstField[s]; k < idx.firstField[s + 1]; k++) {
            fields.put(idx.fieldNames[k], f.segment().asSlice(idx.offsets[k], idx.sizes[k]));
        }
        return new TarSample(idx.keys[s], f.path().toString(), fields);
    }

    @Override
    public void close() {
        for (MappedFile f : files) {
            f.close();
        }
        files.clear();
    }
}
