package dev.stoker.sources;

import dev.stoker.Loader;
import dev.stoker.formats.records.RecordDataset;
import dev.stoker.formats.records.RecordSource;
import dev.stoker.formats.tfrecord.Examples;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

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

    /** A recipe over {@code paths} (local or remote files) each opened by {@code opener}, one after the other. */
    static Recipe open(String kind, List<String> paths, RemoteCache cache, List<String> fields, Opener opener) throws IOException {
        if (paths.isEmpty()) {
            throw new SpecException("paths", "must name one or more files");
        }
        return Recipe.open(kind, r -> {
            List<RecordSource> parts = new ArrayList<>();
            for (Path p : r.hold(new LocalCopies(paths, cache)).paths()) {
                parts.add(r.hold(opener.open(p)));
            }
            finish(r, RecordSource.concat(parts), fields);
        });
    }

    /** Sets the recipe's records, and its loader over them, made once when first built. */
    static void finish(Recipe r, RecordSource records, List<String> fields) {
        r.records(records);
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

    static Examples.Decode decode(String value) {
        SpecException.oneOf("decode", value, "example", "sequence_example", "raw");
        return Examples.Decode.valueOf(value.toUpperCase(Locale.ROOT));
    }
}
