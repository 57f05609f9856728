package dev.stoker.sources;

import dev.stoker.Loader;
import dev.stoker.Sampler;
import dev.stoker.parquet.ParquetDataset;
import dev.stoker.parquet.Where;
import dev.stoker.sources.Schema.Min;
import dev.stoker.storage.Locations;
import java.io.IOException;
import java.util.List;
import java.util.Locale;

/**
 * Rows of a Parquet file (a local path, or an http(s):// or s3:// URL read by ranged requests for
 * the footer and the projected column chunks only), the projected {@code columns} (empty: every
 * top-level column) as fields.
 *
 * @param where            keep the rows where {@code column op value} holds ({@code == != < <= > >=});
 *                         row groups are skipped by their statistics
 * @param decodedCacheMb          decoded row groups held at once, in MB
 * @param shuffleRowGroups shuffle by row group instead of the loader's order: the row groups in a
 *                         random order, the rows of each N consecutive ones in a random order among
 *                         themselves; N row groups are decoded at a time, each once per epoch
 */
public record Parquet(String path, List<String> columns, String where, @Min(1) long decodedCacheMb, @Min(1) Integer shuffleRowGroups)
        implements SourceSpec {
    public Parquet {
        columns = columns == null ? List.of() : List.copyOf(columns);
        SpecException.atLeast("decoded_cache_mb", decodedCacheMb, 1);
        if (shuffleRowGroups != null) {
            SpecException.atLeast("shuffle_row_groups", shuffleRowGroups, 1);
        }
    }

    /** Every column of the file at {@code path}, 512 MB of decoded row groups. */
    public static Parquet of(String path) {
        return new Parquet(path, List.of(), null, 512, null);
    }

    /** The dataset this spec reads, opened on its own (the caller closes it). */
    public ParquetDataset dataset() throws IOException {
        if (path == null || path.isEmpty()) {
            throw new SpecException("path", "must name the Parquet file");
        }
        Where filter;
        try {
            filter = where == null ? null : Where.parse(where);
        } catch (IllegalArgumentException e) {
            throw new SpecException("where", e.getMessage());
        }
        try {
            return ParquetDataset.open(path, new ParquetDataset.Options(columns, filter, decodedCacheMb << 20));
        } catch (IllegalArgumentException e) {
            throw new SpecException(null, e.getMessage()); // a column that is not in the file
        }
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        ParquetDataset data = dataset();
        return Recipe.open(kind(), r -> {
            r.hold(data);
            r.shown(data::shown);
            if (shuffleRowGroups != null) {
                r.sampler(Sampler.blockShuffle(data.rowGroupStarts(), shuffleRowGroups));
            }
            if (Locations.isRemote(path)) {
                r.report(() -> {
                    var t = data.traffic();
                    return String.format(Locale.ROOT, "parquet %s: fetched %.2f MB in %d requests; the projection needs "
                            + "%.2f MB of the file's %.2f MB", path, t.bytesFetched() / 1e6, t.requests(),
                            t.projectionBytes() / 1e6, t.fileBytes() / 1e6);
                });
            }
            r.base(() -> {
                data.dropCache(); // every loader starts with no decoded row group, as a fresh process would
                return Loader.builder(data);
            });
        });
    }
}
