package dev.stoker.sources;

import dev.stoker.Loader;
import dev.stoker.formats.image.ImagePipeline;
import dev.stoker.formats.io.Unreadable;
import dev.stoker.formats.records.RecordDataset;
import dev.stoker.formats.records.RecordSource;
import dev.stoker.formats.tfrecord.TfRecordFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

/**
 * What the record formats' specs ({@link Mds}, {@link TfRecord}, {@link ArrayRecord}) share: their
 * files fetched to local copies, the records opened, and the loader over them made when first
 * asked (NOTE [Records] in {@code RecordSource}), so that {@code stoker cat} reads records a
 * loader could not batch.
 */
final class RecordFormats {
    private RecordFormats() {
    }

    /** Opens one file as records. */
    @FunctionalInterface
    interface Opener {
        RecordSource open(Path local) throws IOException;
    }

    /**
     * A recipe over {@code paths} (local or remote files) each opened by {@code opener}, one after
     * the other; under the loader's skip policy, a file that cannot be read is left out and counted
     * (NOTE [Unreadable shards] in {@link Unreadable}).
     */
    static Recipe open(String kind, List<String> paths, RemoteCache cache, LoaderSpec loader, List<String> fields, String image,
                       Images images, Opener opener) throws IOException {
        if (paths.isEmpty()) {
            throw new SpecException("paths", "must name one or more files");
        }
        return Recipe.open(kind, r -> {
            List<Path> files = r.hold(new LocalCopies(paths, cache)).paths();
            List<RecordSource> parts = Unreadable.open(files.size(), skips(loader), i -> opener.open(files.get(i)));
            parts.forEach(r::hold);
            finish(r, RecordSource.concat(parts, files.size() - parts.size()), fields, image, images);
        });
    }

    /** Whether the loader's error policy leaves out a file or chunk that cannot be read. */
    static boolean skips(LoaderSpec loader) {
        return loader.errorPolicy() != dev.stoker.ErrorPolicy.FAIL;
    }

    /**
     * Sets the recipe's records, and its loader over them: their fields (made once, when first
     * built), or with {@code image} the image pipeline over that field's encoded images, the label
     * from the field {@code images.label()} names (none when it is null or {@code none}).
     */
    static void finish(Recipe r, RecordSource records, List<String> fields, String image, Images images) {
        r.records(records);
        if (image != null) {
            if (!fields.isEmpty()) {
                throw SpecException.naming("fields", "is for batches of the records' own fields; with {image} a batch is the "
                        + "images and their labels");
            }
            if (images.transform() == Images.Transform.NONE) {
                throw SpecException.naming("image", "is decoded by {transform} train or eval, not none");
            }
            String label = images.label() == null || images.label().equals("none") ? null : images.label();
            Images own = images.withLabel(label == null ? "none" : "cls");
            RecordImages samples = new RecordImages(records, image, label);
            ImagePipeline pipeline;
            try {
                pipeline = own.cached(r, own.pipeline(), samples);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            r.base(() -> Loader.builder(samples, pipeline.transform(), pipeline.collator()));
            return;
        }
        RecordDataset[] made = new RecordDataset[1];
        r.base(() -> {
            synchronized (made) {
                if (made[0] == null) {
                    try {
                        made[0] = new RecordDataset(records, fields);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    } catch (IllegalArgumentException e) {
                        throw new SpecException("fields", e.getMessage());
                    }
                }
                return Loader.builder(made[0]);
            }
        });
    }

    static TfRecordFile.Decode decode(TfRecord.Decode value) {
        return TfRecordFile.Decode.valueOf(value.name());
    }
}
