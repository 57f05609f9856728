package dev.stoker.sources;

import dev.stoker.formats.arrow.ArrowFile;
import dev.stoker.formats.io.ArrowFiles;
import dev.stoker.formats.io.Unreadable;
import dev.stoker.formats.records.RecordSource;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Arrow IPC files as they are, as Hugging Face {@code datasets} saves them: a {@code save_to_disk}
 * folder (its data files in its {@code state.json}'s order), a split's folder, or {@code .arrow}
 * files (stream or file format; local paths, or http(s):// and s3:// URLs of files read through
 * {@code cache}), one after the other, each column a field ({@link ArrowFile}).
 *
 * @param fields the columns to batch (empty: all; dotted names for a struct's members, as
 *               {@code image.bytes})
 * @param image  the field of encoded images (JPEG, PNG; a Hugging Face {@code Image} column) to decode, crop and flip by {@code images}
 *               (its {@code label} the field of integer labels); null: the records' own fields
 */
public record Arrow(List<String> paths, List<String> fields, String image, Images images, RemoteCache cache) implements SourceSpec {
    public Arrow {
        paths = paths == null ? List.of() : List.copyOf(paths);
        fields = fields == null ? List.of() : List.copyOf(fields);
        images = images == null ? Images.DEFAULT : images;
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /** Every column of the folders or files at {@code paths}. */
    public static Arrow of(List<String> paths) {
        return new Arrow(paths, List.of(), null, Images.DEFAULT, RemoteCache.DEFAULT);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        if (paths.isEmpty()) {
            throw new SpecException("paths", "must name a saved dataset's folder or .arrow files");
        }
        return Recipe.open(kind(), r -> {
            List<Path> files = new ArrayList<>();
            for (Path local : r.hold(new LocalCopies(paths, cache)).paths()) {
                files.addAll(ArrowFiles.of(local));
            }
            // a file that cannot be read is left out under a skip policy (NOTE [Unreadable shards] in Unreadable)
            List<ArrowFile> parts = Unreadable.open(files.size(), RecordFormats.skips(loader), i -> ArrowFile.open(files.get(i)));
            parts.forEach(r::hold);
            List<String> columns = parts.get(0).columns();
            for (ArrowFile f : parts) {
                if (!columns.equals(f.columns())) {
                    throw new java.io.IOException(f.name() + ": columns " + f.columns() + " differ from the first file's " + columns);
                }
            }
            RecordFormats.finish(r, RecordSource.concat(parts, files.size() - parts.size()), fields, image, images);
        });
    }
}
