package dev.stoker.sources;

import dev.stoker.formats.litdata.LitDataset;
import dev.stoker.sources.Schema.Min;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * A LitData optimized dataset as it is ({@link LitDataset}): the folder (a local path, or an
 * http(s):// or s3:// URL whose index and chunks are fetched through {@code cache}) of
 * {@code index.json} and its chunks; PyTree items, each leaf a field, or a TokensLoader dataset's
 * blocks of {@code block_size} tokens (the field {@code tokens}).
 *
 * @param blockSize   tokens per sample, for a TokensLoader dataset (required there)
 * @param passwordEnv the environment variable holding an encrypted dataset's password (the
 *                    password itself is never part of a spec, so never sent, saved or printed)
 * @param fields      the leaves to batch (empty: all)
 * @param image       the leaf of encoded images (JPEG, PNG) to decode, crop and flip by {@code images} (whose
 *                    {@code label} is the leaf of integer labels); null: the leaves themselves
 */
public record LitData(String path, @Min(1) Integer blockSize, String passwordEnv, List<String> fields, String image, Images images,
                      RemoteCache cache) implements SourceSpec {
    public LitData {
        if (blockSize != null) {
            SpecException.atLeast("block_size", blockSize, 1);
        }
        fields = fields == null ? List.of() : List.copyOf(fields);
        images = images == null ? Images.DEFAULT : images;
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /** Every leaf of the dataset in {@code path}. */
    public static LitData of(String path) {
        return new LitData(path, null, null, List.of(), null, Images.DEFAULT, RemoteCache.DEFAULT);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        if (path == null || path.isEmpty()) {
            throw new SpecException("path", "must name the dataset's folder (where index.json is)");
        }
        char[] password = null;
        if (passwordEnv != null) {
            String p = System.getenv(passwordEnv);
            if (p == null || p.isEmpty()) {
                throw new SpecException("password_env", "names " + passwordEnv + ", which is not set in the environment");
            }
            password = p.toCharArray();
        }
        char[] key = password;
        return Recipe.open(kind(), r -> {
            LocalCopies copies = r.hold(new LocalCopies(List.of(), cache));
            Path index = copies.under(path, "index.json");
            if (!Files.isRegularFile(index)) {
                throw new NoSuchFileException(index.toString(), null, "a LitData dataset's folder holds index.json");
            }
            if (key != null) {
                copies.under(path, "fernet.pem");
            }
            LitDataset data;
            try {
                data = r.hold(LitDataset.open(index.getParent(), blockSize == null ? 0 : blockSize, key));
            } catch (IllegalArgumentException e) {
                throw new SpecException("block_size", e.getMessage());
            }
            for (String chunk : data.files()) {
                copies.under(path, chunk);
            }
            if (loader.errorPolicy() == dev.stoker.ErrorPolicy.SKIP_SHARD) { // every chunk read once and checked, one that cannot be read left out
                data = r.hold(LitDataset.open(index.getParent(), blockSize == null ? 0 : blockSize, key, true));
            }
            RecordFormats.finish(r, data, fields, image, images);
        });
    }
}
