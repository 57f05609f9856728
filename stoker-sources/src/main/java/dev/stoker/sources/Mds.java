package dev.stoker.sources;

import dev.stoker.formats.mds.MdsDataset;
import dev.stoker.sources.Schema.Min;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * A MosaicML Streaming (MDS) dataset as it is: the folder (a local path, or an http(s):// or
 * s3:// URL whose {@code index.json} and shards are fetched through {@code cache}) holding
 * {@code index.json} and its shards, each column a field ({@link MdsDataset}).
 *
 * @param fields  the columns to batch (empty: all)
 * @param decodedCacheMb decompressed shards held at once, in MB (for zstd or gz shards)
 * @param image   the field of encoded images (JPEG, PNG) to decode, crop and flip by {@code images}
 *                (its {@code label} the field of integer labels); null: the records' own fields
 */
public record Mds(String path, List<String> fields, @Min(1) long decodedCacheMb, String image, Images images, RemoteCache cache)
        implements SourceSpec {
    public Mds {
        fields = fields == null ? List.of() : List.copyOf(fields);
        SpecException.atLeast("decoded_cache_mb", decodedCacheMb, 1);
        images = images == null ? Images.DEFAULT : images;
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /** Every column of the dataset in {@code path}. */
    public static Mds of(String path) {
        return new Mds(path, List.of(), 1024, null, Images.DEFAULT, RemoteCache.DEFAULT);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        if (path == null || path.isEmpty()) {
            throw new SpecException("path", "must name the dataset's folder (where index.json is)");
        }
        return Recipe.open(kind(), r -> {
            LocalCopies copies = r.hold(new LocalCopies(List.of(), cache));
            Path index = copies.under(path, "index.json");
            if (!Files.isRegularFile(index)) {
                throw new NoSuchFileException(index.toString(), null, "an MDS dataset's folder holds index.json");
            }
            MdsDataset data = r.hold(MdsDataset.open(index.getParent(), decodedCacheMb << 20)); // reads the index alone
            for (String shard : data.files()) {
                copies.under(path, shard); // fetched, for a remote dataset; there already, for a local one
            }
            if (loader.errorPolicy() == dev.stoker.ErrorPolicy.SKIP_SHARD) { // every shard read once and checked, one that cannot be read left out
                data = r.hold(MdsDataset.open(index.getParent(), decodedCacheMb << 20, true));
            }
            RecordFormats.finish(r, data, fields, image, images);
        });
    }
}
