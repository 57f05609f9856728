package dev.stoker.sources;

import java.io.IOException;

/**
 * A source as a value: which data, and how a sample is made of it. Each kind is a record of plain
 * data ({@link Specs} reads and writes it as JSON, {@code {"kind": "tokens", "paths": [...], ...}})
 * whose {@link #open} is its opener. The loader's own options are a {@link LoaderSpec}, apart.
 *
 * <p>NOTE [Sources as values]: every way in opens a source through its spec, so the same options
 * give the same batches whoever asks. {@code stoker bench} maps its flags to a spec (a flag is the
 * option's name, dashed: {@code FlagsContractTest}); {@code stoker.Loader} builds the same specs
 * from its keywords, checked against the schema these records make (NOTE [One schema]), and sends
 * them as JSON in the bridge's OPEN; a Java or DJL program builds them directly. A
 * spec's constructor checks each value's range; {@code open} checks what needs the whole spec (a
 * required option, one weight per path) and then touches data: what a source needs of the loader's
 * options (a shuffle window reads tar shards as a stream; a skip policy opens past unreadable
 * shards) comes with the {@link LoaderSpec}. A {@link Recipe} is the opened source, and builds a
 * loader as often as asked (a sweep, the bridge's rebuilt passes), each from the same opened data.
 *
 * <pre>{@code
 * try (Recipe r = Shards.of("https://host/train-{000000..000146}.tar").withImages(Images.train(176)).open(loader);
 *      Loader l = r.builder(loader).build()) { ... }
 * }</pre>
 */
public sealed interface SourceSpec permits Synthetic, Tokens, Jsonl, Shards, Folder, Hdf5, Parquet, Mds, TfRecord,
        ArrayRecord, Arrow, LitData, NamedArrays, Root, Sqlite {
    /** The kind's name in JSON and on the command line ({@code tokens}, {@code shards}, ...). */
    default String kind() {
        return Specs.kind(getClass());
    }

    /**
     * Opens the data: files mapped, indexes read, remote shards fetched where the source reads them
     * through the cache. {@code loader}'s options that change how a source is read count here (a
     * shuffle window reads tar shards as a stream; a skip policy opens past unreadable shards).
     *
     * @throws SpecException a spec that cannot be opened as given (a required option missing)
     * @throws IOException   data that cannot be read, named
     */
    Recipe open(LoaderSpec loader) throws IOException;
}
