package dev.stoker.sources;

import dev.stoker.Loader;
import dev.stoker.hdf5.Hdf5Dataset;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code datasets} of an HDF5 file (a local path, or an http(s):// or s3:// URL read whole through
 * {@code cache}), the first axis being the sample axis, each a field.
 */
public record Hdf5(String path, List<String> datasets, RemoteCache cache) implements SourceSpec {
    public Hdf5 {
        datasets = datasets == null ? List.of() : List.copyOf(datasets);
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /** {@code datasets} of the file at {@code path}. */
    public static Hdf5 of(String path, List<String> datasets) {
        return new Hdf5(path, datasets, RemoteCache.DEFAULT);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        if (path == null || path.isEmpty()) {
            throw new SpecException("path", "must name the HDF5 file");
        }
        if (datasets.isEmpty()) {
            throw new SpecException("datasets", "must name the datasets to read (one or more)");
        }
        return Recipe.open(kind(), r -> {
            Path local = r.hold(new LocalCopies(List.of(path), cache)).paths().get(0);
            if (!Files.isRegularFile(local)) {
                throw new NoSuchFileException(path);
            }
            Hdf5Dataset data;
            try {
                data = r.hold(new Hdf5Dataset(local, datasets));
            } catch (IllegalArgumentException e) {
                throw new SpecException("datasets", e.getMessage());
            }
            r.base(() -> Loader.builder(data));
        });
    }
}
