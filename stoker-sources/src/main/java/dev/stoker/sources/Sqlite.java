package dev.stoker.sources;

import dev.stoker.DType;
import dev.stoker.Loader;
import dev.stoker.formats.sqlite.SqliteEvents;
import dev.stoker.sources.Schema.Choices;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Events of an SQLite database in GraphNeT's layout (a local path, or an http(s):// or s3:// URL
 * read through {@code cache} whole): a {@code pulses} table of many rows per event and a
 * {@code truth} table of one row per event, joined on the {@code index} column. Each event is a
 * sample, in the truth table's event order; each of {@code features} a ragged field (the event's
 * rows in stored order), each of {@code truthFeatures} a scalar. The file is read without SQLite and
 * never written to.
 *
 * @param truth         the per-event table (null: none; the events are the pulse table's event numbers)
 * @param index         the event column both tables have
 * @param features      the pulse columns (empty: every column but {@code index})
 * @param truthFeatures the truth columns
 * @param dtype         {@code float32}, {@code float64} or {@code int64} for every field (null: int64 for
 *                      a column declared INTEGER, float64 for any other)
 */
public record Sqlite(String path, String pulses, String truth, String index, List<String> features,
        List<String> truthFeatures, @Choices({"float32", "float64", "int64"}) String dtype, RemoteCache cache) implements SourceSpec {
    public Sqlite {
        features = features == null ? List.of() : List.copyOf(features);
        truthFeatures = truthFeatures == null ? List.of() : List.copyOf(truthFeatures);
        index = index == null ? "event_no" : index;
        cache = cache == null ? RemoteCache.DEFAULT : cache;
        if (dtype != null) {
            type(dtype);
        }
    }

    /** The events of the database at {@code path}: {@code pulses} joined with {@code truth} on {@code event_no}. */
    public static Sqlite of(String path, String pulses, String truth) {
        return new Sqlite(path, pulses, truth, "event_no", List.of(), List.of(), null, RemoteCache.DEFAULT);
    }

    private static DType type(String dtype) {
        return switch (dtype.toLowerCase(Locale.ROOT)) {
            case "float32" -> DType.FLOAT32;
            case "float64" -> DType.FLOAT64;
            case "int64" -> DType.INT64;
            default -> throw new SpecException("dtype", "must be float32, float64 or int64, got '" + dtype + "'");
        };
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        if (path == null || path.isEmpty()) {
            throw new SpecException("path", "must name the SQLite database");
        }
        if (pulses == null || pulses.isEmpty()) {
            throw new SpecException("pulses", "must name the table of many rows per event (GraphNeT's pulse map)");
        }
        return Recipe.open(kind(), r -> {
            Path local = r.hold(new LocalCopies(List.of(path), cache)).paths().get(0);
            if (!Files.isRegularFile(local)) {
                throw new NoSuchFileException(path);
            }
            SqliteEvents data;
            try {
                data = r.hold(new SqliteEvents(local, pulses, truth, index, features, truthFeatures,
                        dtype == null ? null : type(dtype)));
            } catch (IllegalArgumentException e) {
                throw new SpecException(null, e.getMessage());
            }
            if (data.unmatchedRows() > 0) {
                r.report(() -> String.format(Locale.ROOT, "sqlite %s: %,d rows of %s belong to events %s does not have, "
                        + "and are not read", path, data.unmatchedRows(), pulses, truth));
            }
            r.base(() -> Loader.builder(data));
        });
    }
}
