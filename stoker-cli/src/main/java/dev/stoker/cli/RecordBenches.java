package dev.stoker.cli;

import dev.stoker.sources.ArrayRecord;
import dev.stoker.sources.Arrow;
import dev.stoker.sources.LitData;
import dev.stoker.sources.Mds;
import dev.stoker.sources.SourceSpec;
import dev.stoker.sources.TfRecord;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code stoker bench} (and {@code cat}) over other loaders' record formats, read as they are: their flags map to their specs. */
final class RecordBenches {
    private RecordBenches() {
    }

    @Command(name = "mds", description = "A MosaicML Streaming (MDS) dataset as it is: index.json and its shards, each column a field.")
    static final class MdsBench extends BenchCommand.Subcommand {
        @Parameters(paramLabel = "DIR", description = "The dataset's folder, where index.json is (a local path, or an http(s):// "
                + "or s3:// URL whose index and shards are fetched through the cache).")
        String path;

        @Mixin
        CacheOptions cache;

        @Mixin
        RecordImageOptions images;

        @Option(names = "--fields", split = ",", paramLabel = "A,B", description = "Columns to batch (default: all).")
        List<String> fields = List.of();

        @Option(names = {"--decoded-cache-mb", "--cache-mb"}, paramLabel = "MB",
                description = "Decompressed shards held at once, for zstd and gz shards (default ${DEFAULT-VALUE} MB).")
        long cacheMb;

        @Override
        SourceSpec source() {
            return new Mds(path, fields, cacheMb, images.image, images.spec(), cache.spec());
        }
    }

    @Command(name = "tfrecord", description = "TFRecord files as they are (plain, GZIP or ZLIB), records as tf.train.Example "
            + "(each feature a field), SequenceExample, or raw bytes.")
    static final class TfRecordBench extends BenchCommand.Subcommand {
        @Parameters(paramLabel = "PATH", arity = "1..*", description = "TFRecord files (local paths or http(s):// and s3:// "
                + "URLs, read through the cache), one after the other.")
        List<String> paths;

        @Mixin
        CacheOptions cache;

        @Option(names = "--compression", paramLabel = "auto|none|gzip|zlib",
                description = "How the files are compressed (default ${DEFAULT-VALUE}: by name, then by content).")
        String compression;

        @Option(names = "--decode", paramLabel = "example|sequence_example|raw",
                description = "What a record is (default ${DEFAULT-VALUE}).")
        String decode;

        @Mixin
        RecordImageOptions images;

        @Option(names = "--fields", split = ",", paramLabel = "A,B", description = "Features to batch (default: all).")
        List<String> fields = List.of();

        @Override
        SourceSpec source() {
            return new TfRecord(paths, compression, TfRecord.Decode.of(decode), fields, images.image, images.spec(), cache.spec());
        }
    }

    @Command(name = "arrayrecord", description = "ArrayRecord files (Grain's format) as they are, read by index: each "
            + "record's bytes, or tf.train.Examples.")
    static final class ArrayRecordBench extends BenchCommand.Subcommand {
        @Parameters(paramLabel = "PATH", arity = "1..*", description = "ArrayRecord files (local paths or http(s):// and s3:// "
                + "URLs, read through the cache), one after the other.")
        List<String> paths;

        @Mixin
        CacheOptions cache;

        @Option(names = "--decode", paramLabel = "raw|example|sequence_example",
                description = "What a record is (default ${DEFAULT-VALUE}: its bytes, the field 'record').")
        String decode;

        @Mixin
        RecordImageOptions images;

        @Option(names = "--fields", split = ",", paramLabel = "A,B", description = "Fields to batch (default: all).")
        List<String> fields = List.of();

        @Override
        SourceSpec source() {
            return new ArrayRecord(paths, TfRecord.Decode.of(decode), fields, images.image, images.spec(), cache.spec());
        }
    }

    @Command(name = "arrow", description = "Arrow IPC files as Hugging Face datasets saves them: a save_to_disk folder, a "
            + "split's folder, or .arrow files, each column a field.")
    static final class ArrowBench extends BenchCommand.Subcommand {
        @Parameters(paramLabel = "PATH", arity = "1..*", description = "A saved dataset's folder (its state.json gives the "
                + "files' order), or .arrow files (local paths or http(s):// and s3:// URLs, read through the cache).")
        List<String> paths;

        @Mixin
        CacheOptions cache;

        @Mixin
        RecordImageOptions images;

        @Option(names = "--fields", split = ",", paramLabel = "A,B", description = "Columns to batch, dotted for a struct's "
                + "members, as image.bytes (default: all).")
        List<String> fields = List.of();

        @Override
        SourceSpec source() {
            return new Arrow(paths, fields, images.image, images.spec(), cache.spec());
        }
    }

    @Command(name = "litdata", description = "A LitData optimized dataset as it is: PyTree items (each leaf a field), or a "
            + "TokensLoader dataset's blocks of --block-size tokens.")
    static final class LitDataBench extends BenchCommand.Subcommand {
        @Parameters(paramLabel = "DIR", description = "The dataset's folder, where index.json is (a local path, or an http(s):// "
                + "or s3:// URL whose index and chunks are fetched through the cache).")
        String path;

        @Mixin
        CacheOptions cache;

        @Option(names = "--block-size", paramLabel = "N", description = "Tokens per sample, for a TokensLoader dataset.")
        Integer blockSize;

        @Option(names = "--password-env", paramLabel = "VAR", description = "The environment variable holding an encrypted "
                + "dataset's password.")
        String passwordEnv;

        @Mixin
        RecordImageOptions images;

        @Option(names = "--fields", split = ",", paramLabel = "A,B", description = "Leaves to batch (default: all).")
        List<String> fields = List.of();

        @Override
        SourceSpec source() {
            return new LitData(path, blockSize, passwordEnv, fields, images.image, images.spec(), cache.spec());
        }
    }
}
