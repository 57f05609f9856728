package dev.stoker.formats.tar;

import dev.stoker.StreamingDataset;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.io.RemoteShards;
import dev.stoker.formats.io.TarGrouping;
import dev.stoker.formats.io.TarReader;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * WebDataset tar shards read as a stream: each shard front to back (plain, gzip, zstd or lz4; a
 * plain one through a mapping, its samples' fields slices of it, valid until the shard's reader
 * is closed),
 * members grouped into samples as WebDataset groups them: consecutive members with the same key
 * form one sample; a field seen twice in one sample is an error. Works on any shard, compressed
 * or not; for exact resume without replaying a shard use {@link TarDataset} on plain tars.
 */
public final class TarShards implements StreamingDataset<TarSample> {
    private final List<Path> shards;
    private final List<String> names;

    public TarShards(List<Path> shards) {
        this(shards, shards.stream().map(Path::toString).toList());
    }

    /** Shards named {@code names} in errors and stats (the locations local copies came from). */
    public TarShards(List<Path> shards, List<String> names) {
        if (names.size() != shards.size()) {
            throw new IllegalArgumentException(names.size() + " names for " + shards.size() + " shards");
        }
        this.shards = List.copyOf(shards);
        this.names = List.copyOf(names);
    }

    @Override
    public int shards() {
        return shards.size();
    }

    @Override
    public String shardName(int shard) {
        return names.get(shard);
    }

    @Override
    public String name() {
        return names.isEmpty() ? "tar" : names.get(0);
    }

    /** The shards' names ({@link Fingerprints#names}): the same as {@link RemoteShards}' for the same shards anywhere. */
    @Override
    public long fingerprint() {
        return Fingerprints.names(names);
    }

    /** The shard's ends ({@link Fingerprints#ends}): the same as {@link RemoteShards}' for the same bytes. */
    @Override
    public long shardCheck(int shard) throws IOException {
        return Fingerprints.ends(shards.get(shard));
    }

    @Override
    public ShardReader<TarSample> open(int shard) throws IOException {
        TarReader reader = TarReader.open(shards.get(shard), names.get(shard));
        return samples(reader);
    }

    /**
     * The samples of a tar reader, grouped by key. A plain tar file's fields are slices of its
     * mapping (no copy), valid until the reader is closed; others are read into arrays.
     */
    static ShardReader<TarSample> samples(TarReader reader) {
        MemorySegment mapped = reader.mapped();
        TarGrouping grouping = new TarGrouping(reader.shard());
        return new ShardReader<>() {
            private TarReader.Member pending;

            @Override
            public TarSample next() throws IOException {
                String key = null;
                Map<String, MemorySegment> fields = new LinkedHashMap<>();
                while (true) {
                    TarReader.Member m = pending != null ? pending : reader.next(mapped == null);
                    pending = null;
                    if (m == null) {
                        return key == null ? null : new TarSample(key, reader.shard(), fields);
                    }
                    String[] kf = TarGrouping.keyAndField(m);
                    if (kf == null) {
                        continue; // no sample has it, as in WebDataset
                    }
                    if (key != null && grouping.starts(kf[0])) {
                        pending = m;
                        return new TarSample(key, reader.shard(), fields);
                    }
                    grouping.add(kf, m);
                    key = kf[0];
                    fields.put(kf[1], mapped != null ? mapped.asSlice(m.dataOffset(), m.size()) : MemorySegment.ofArray(m.data()));
                }
            }

            @Override
            public void close() throws IOException {
                reader.close();
            }
        };
    }
}
