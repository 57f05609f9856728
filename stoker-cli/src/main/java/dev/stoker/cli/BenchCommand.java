package dev.stoker.cli;

import dev.stoker.sources.Folder;
import dev.stoker.sources.Hdf5;
import dev.stoker.sources.Jsonl;
import dev.stoker.sources.NamedArrays;
import dev.stoker.sources.Parquet;
import dev.stoker.sources.Root;
import dev.stoker.sources.Shards;
import dev.stoker.sources.SourceSpec;
import dev.stoker.sources.Sqlite;
import dev.stoker.sources.Synthetic;
import dev.stoker.sources.Tokens;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code stoker bench SOURCE ...}: runs a loader over a source and reports what it measured. Each
 * source's flags map to its spec in {@code dev.stoker.sources} (a flag is its spec option's name,
 * dashed), the common flags to a loader spec; what the specs mean is theirs to say.
 */
@Command(name = "bench", description = "Run a loader over a source and report throughput, wait and stage times.")
final class BenchCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a source is needed (for example: synthetic)");
    }

    /** What every source's command shares: the loader's options and the run. */
    abstract static class Subcommand implements Callable<Integer> {
        @Mixin
        BenchOptions options;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        /** The source these flags describe. */
        abstract SourceSpec source();

        @Override
        public Integer call() throws Exception {
            if (!(spec.parent().userObject() instanceof BenchCommand)) {
                refuseLoaderOptions();
            }
            SourceSpec source = source(); // first: a source's flag may set a loader's (--skip-bad)
            return spec.parent().userObject() instanceof CatCommand cat ? cat.print(source, options.loader(), spec.commandLine().getOut())
                    : spec.parent().userObject() instanceof ShowCommand show ? show.draw(source, spec.commandLine().getErr())
                    : BenchRunner.bench(source, options, spec.commandLine()); // the command this source is under decides
        }

        /**
         * {@code cat} and {@code show} read in storage order on one thread and stop at the first
         * error: a loader's option ({@link BenchOptions}) given to them would be ignored, so it is
         * refused; {@code cat} takes the padding flags ({@link BenchOptions#PADDING}), which change what a sample is.
         */
        private void refuseLoaderOptions() {
            java.util.List<CommandLine.Model.OptionSpec> loaderOptions = spec.mixins().get("options").options();
            CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
            for (CommandLine.Model.OptionSpec o : parsed.matchedOptions()) {
                if (spec.parent().userObject() instanceof CatCommand && BenchOptions.PADDING.contains(o.longestName())) {
                    continue;
                }
                if (loaderOptions.stream().anyMatch(l -> l.longestName().equals(o.longestName()))) {
                    String typed = parsed.originalArgs().stream().map(a -> a.split("=", 2)[0])
                            .filter(java.util.Arrays.asList(o.names())::contains).findFirst().orElse(o.longestName());
                    throw new Main.UsageException(spec.parent().name() + " does not take " + typed + ": it is an option of "
                            + "stoker bench (" + spec.parent().name() + " reads in storage order and stops at the first error)");
                }
            }
        }
    }

    @Command(name = "synthetic", description = "N samples whose bytes are a pure function of the sample index.")
    static final class SyntheticBench extends Subcommand {
        @Option(names = "--samples", description = "Samples (default ${DEFAULT-VALUE}).")
        long samples;

        @Option(names = "--sample-bytes", description = "Bytes per sample (default ${DEFAULT-VALUE}).")
        int sampleBytes;

        @Option(names = "--work-us", description = "CPU microseconds spent per sample, like a decoder (default ${DEFAULT-VALUE}).")
        double workUs;

        @Override
        SourceSpec source() {
            return new Synthetic(samples, sampleBytes, workUs);
        }
    }

    @Command(name = "tokens", description = "Windows of --seq-len + 1 tokens from token files as x and y shifted by one "
            + "(raw .bin, .npy, one tensor of a torch.save .pt or a .safetensors file, or Megatron .bin/.idx, whose documents are packed).")
    static final class TokensBench extends Subcommand {
        @Parameters(paramLabel = "PATH", arity = "1..*", description = "Token files (local paths or http(s):// "
                + "and s3:// URLs, read through the cache); several are concatenated, or mixed with --weights.")
        List<String> paths;

        @Mixin
        CacheOptions cache;

        @Option(names = "--seq-len", description = "Tokens per sample (default ${DEFAULT-VALUE}).")
        int seqLen;

        @Option(names = "--dtype", description = "Token type of raw .bin files (default ${DEFAULT-VALUE}).")
        String dtype;

        @Option(names = "--out-dtype", description = "x and y as int64 or int32 (default ${DEFAULT-VALUE}).")
        String outDtype;

        @Option(names = "--windows", paramLabel = "disjoint|random|offset",
                description = "disjoint: non-overlapping windows, each token once per epoch (default); random: "
                        + "windows at random offsets with replacement, as nanoGPT's get_batch; offset: each disjoint "
                        + "window shifted by a random offset below the sequence length each epoch, in the loader's order.")
        String windows;

        @Option(names = "--weights", split = ",", description = "Mix the files in these proportions instead of concatenating them.")
        List<Double> weights;

        @Option(names = "--separator", description = "For Megatron data: the token put between packed documents (default: none, as when documents end with one).")
        long separator;

        @Option(names = "--raw", description = "Read every file as raw token ids of --dtype, as it is: also one whose "
                + "first bytes look like another format (a .npy array, a zip archive, text), which is otherwise refused.")
        boolean raw;

        @Override
        SourceSpec source() {
            return new Tokens(paths, seqLen, dtype, outDtype, Tokens.Windows.of(windows), weights, separator, raw, cache.spec());
        }
    }

    @Command(name = "jsonl", description = "JSON lines tokenized and packed into windows of --seq-len tokens (field tokens), "
            + "an end-of-text token after each document; plain files are read by several workers in ranges.")
    static final class JsonlBench extends Subcommand {
        @Parameters(paramLabel = "PATH", arity = "1..*", description = ".jsonl files (plain, .gz, .zst; local "
                + "paths or http(s):// and s3:// URLs, read through the cache).")
        List<String> paths;

        @Mixin
        CacheOptions cache;

        @Option(names = "--tokenizer", description = "bytes, r50k_base (gpt2), p50k_base, cl100k_base or o200k_base (default ${DEFAULT-VALUE}).")
        String tokenizer;

        @Option(names = "--seq-len", description = "Tokens per sample (default ${DEFAULT-VALUE}).")
        int seqLen;

        @Option(names = "--field", description = "The JSON field holding the text (default ${DEFAULT-VALUE}).")
        String field;

        @Option(names = "--shard-kb", description = "Size of the ranges a plain file is read in (default ${DEFAULT-VALUE} KB).")
        long shardKb;

        @Option(names = "--window-cache", paramLabel = "disk|DIR", description = "Keep each shard's packed windows in a file "
                + "once a pass has packed it whole (disk: in ~/.cache/stoker/windows, $XDG_CACHE_HOME; DIR: in that folder, a path with a /); "
                + "later epochs, processes and runs read them instead of tokenizing again. A file is used only while its "
                + "shard's bytes are those it was made from. It pays for a BPE tokenizer (W4 with r50k_base: 20x); the bytes "
                + "tokenizer is as cheap as reading its windows back.")
        String windowCache;

        @Option(names = "--shard-buffer", description = "Windows each shard read ahead may hold (default ${DEFAULT-VALUE}).")
        int shardBuffer;

        @Option(names = "--out-dtype", description = "int64 or int32 (default ${DEFAULT-VALUE}).")
        String outDtype;

        @Option(names = "--skip-bad", description = "Leave out malformed lines (counted) instead of failing: --errors skip-sample.")
        boolean skipBad;

        @Override
        SourceSpec source() {
            if (skipBad) {
                if (!options.errors.equals("fail") && !options.errors.equals("skip-sample")) {
                    throw new Main.UsageException("--skip-bad is --errors skip-sample, not --errors " + options.errors);
                }
                options.errors = "skip-sample";
            }
            return new Jsonl(paths, tokenizer, seqLen, field, shardKb, shardBuffer, outDtype, windowCache, cache.spec());
        }
    }

    @Command(name = "shards", description = "WebDataset tar shards (brace patterns, local paths or http(s):// and s3:// URLs); "
            + "local plain tars are read at random through an index (--stream: as a stream), remote shards stream through a local shard cache.")
    static final class ShardsBench extends Subcommand {
        @Parameters(paramLabel = "PATTERN", arity = "1..*",
                description = "Shards, e.g. images-{000000..000019}.tar, https://host/images-{000000..000019}.tar, "
                        + "an s3://bucket/prefix/ ending in / for every object under it, or a glob: s3://bucket/train/*.tar.")
        List<String> patterns;

        @Mixin
        CacheOptions cache;

        @Option(names = "--stream", description = "Read the shards as a stream (shard order shuffled, each shard front to "
                + "back; --shuffle-window shuffles samples within a window, and implies it) rather than at random through "
                + "the index, which a remote shard is read through once the cache holds every shard.")
        boolean stream;

        @Mixin
        ImageOptions image;

        @Override
        SourceSpec source() {
            return new Shards(patterns, stream, image.spec(), cache.spec());
        }
    }

    @Command(name = "folder", description = "An image folder (root/CLASS/IMAGE.jpg), as torchvision's ImageFolder; "
            + "local, or a prefix of S3 (s3://bucket/train/), each image read by one request.")
    static final class FolderBench extends Subcommand {
        @Parameters(paramLabel = "DIR", description = "The folder, or an s3:// prefix.")
        String dir;

        @Mixin
        ImageOptions image;

        @Override
        SourceSpec source() {
            return new Folder(dir, image.spec());
        }
    }

    @Command(name = "hdf5", description = "Datasets of an HDF5 file, the first axis being the sample axis.")
    static final class Hdf5Bench extends Subcommand {
        @Parameters(paramLabel = "PATH", description = "The HDF5 file (a local path or an http(s):// or s3:// URL, read through the cache whole).")
        String path;

        @Mixin
        CacheOptions cache;

        @Option(names = {"--dataset", "--datasets"}, required = true, paramLabel = "/NAME", description = "A dataset to read (repeat for several).")
        List<String> datasets;

        @Override
        SourceSpec source() {
            return new Hdf5(path, datasets, cache.spec());
        }
    }

    @Command(name = "sqlite", description = "Events of an SQLite database in GraphNeT's layout: a pulse table of many "
            + "rows per event joined with a truth table of one row per event; pulse columns as ragged fields, truth columns "
            + "as scalars. Read without SQLite; the file is never written to.")
    static final class SqliteBench extends Subcommand {
        @Parameters(paramLabel = "PATH", description = "The database (a local path or an http(s):// or s3:// URL, read through the cache whole).")
        String path;

        @Mixin
        CacheOptions cache;

        @Option(names = "--pulses", required = true, paramLabel = "TABLE", description = "The table of many rows per event (GraphNeT's pulse map).")
        String pulses;

        @Option(names = "--truth", paramLabel = "TABLE", description = "The table of one row per event; events come in its "
                + "event order (default: none, the pulse table's event numbers, ascending).")
        String truth;

        @Option(names = "--index", paramLabel = "COLUMN", description = "The event column of both tables (default ${DEFAULT-VALUE}).")
        String index;

        @Option(names = "--features", split = ",", paramLabel = "A,B", description = "Pulse columns to read, each a ragged field (default: every column but the event column).")
        List<String> features = List.of();

        @Option(names = "--truth-features", split = ",", paramLabel = "A,B", description = "Truth columns to read, each a scalar field.")
        List<String> truthFeatures = List.of();

        @Option(names = "--dtype", paramLabel = "TYPE", description = "float32, float64 or int64 for every field (default: "
                + "int64 for a column declared INTEGER, float64 for any other).")
        String dtype;

        @Override
        SourceSpec source() {
            return new Sqlite(path, pulses, truth, index, features, truthFeatures, dtype, cache.spec());
        }
    }

    @Command(name = "arrays", description = "Named arrays as fields, the first dimension the sample: .npy files of any rank, "
            + "raw files (np.memmap) with a dtype and shape or a properties JSON, a padded array with its lengths as a ragged "
            + "field; or the tensors of one .pt (torch.save), .safetensors or .npz file.")
    static final class ArraysBench extends Subcommand {
        @Parameters(paramLabel = "FILE", arity = "0..1", description = "One .pt, .safetensors or .npz file whose named tensors "
                + "are the fields (instead of --files); a local path or an http(s):// or s3:// URL, read through the cache whole.")
        String path;

        @Option(names = "--files", paramLabel = "NAME=FILE", description = "A field and its file: a path, or a JSON object "
                + "{\"path\": ..., \"dtype\": \"float32\", \"shape\": [N, ...], \"lengths\": FILE} (a raw file's dtype and shape; "
                + "a padded array's lengths make a ragged field). Repeat for each field.")
        Map<String, String> files;

        @Option(names = "--properties", paramLabel = "FILE.json", description = "The dtypes and shapes of raw files, "
                + "{\"NAME\": {\"dtype\": ..., \"shape\": [...]}}, looked up by field name, then by file name without its "
                + "extension (PolarBERT's memmap_properties.json).")
        String properties;

        @Mixin
        CacheOptions cache;

        @Override
        SourceSpec source() {
            Map<String, NamedArrays.ArrayFile> given = new java.util.LinkedHashMap<>();
            if (files != null) {
                files.forEach((k, v) -> given.put(k, NamedArrays.ArrayFile.parse(v)));
            }
            return new NamedArrays(path, given, properties, cache.spec());
        }
    }

    @Command(name = "root", description = "Entries of a tree (a TTree or an RNTuple) in CERN ROOT files, one after the "
            + "other in file order, each selected branch a field (variable-length branches as ragged fields).")
    static final class RootBench extends Subcommand {
        @Parameters(paramLabel = "PATH", arity = "0..*", description = "The ROOT files: local paths, or http(s):// or s3:// "
                + "URLs read by ranged requests; several are one dataset, in order (or --groups).")
        List<String> paths = List.of();

        @Option(names = "--groups", paramLabel = "NAME=PATH[,PATH...]", description = "Groups of files in place of the "
                + "paths, each NAME=PATH[,PATH...] (signal=s.root; the option once a group): one dataset, group after group, "
                + "with a label field holding each entry's group number (0, 1, ... in the order given).")
        java.util.LinkedHashMap<String, String> groups = new java.util.LinkedHashMap<>();

        @Option(names = "--label", paramLabel = "NAME", description = "The name of the groups' "
                + "label field (default ${DEFAULT-VALUE}).")
        String label;

        @Option(names = "--weights", split = ",", paramLabel = "NAME=W", description = "Each group's share of an epoch's "
                + "draws (signal=1,background=3), each group in its own shuffled order; default: every entry once an epoch.")
        java.util.LinkedHashMap<String, Double> weights = new java.util.LinkedHashMap<>();

        @Option(names = "--tree", required = true, paramLabel = "NAME", description = "The tree to read (dir/name in a subdirectory).")
        String tree;

        @Option(names = "--branches", split = ",", paramLabel = "A,B*", description = "Branches to read, as globs (default: every "
                + "branch Stoker reads; a selected string, object or nested container is an error naming it).")
        List<String> branches = List.of();

        @Option(names = {"--decoded-cache-mb", "--cache-mb"}, paramLabel = "MB", description = "Decoded clusters held at once (default ${DEFAULT-VALUE} MB).")
        long cacheMb;

        @Override
        SourceSpec source() {
            Map<String, List<String>> files = new java.util.LinkedHashMap<>();
            groups.forEach((name, given) -> files.put(name, List.of(given.split(","))));
            return new Root(paths, tree, branches, cacheMb, files, label, weights);
        }
    }

    @Command(name = "parquet", description = "Rows of a Parquet file, projected columns as batch fields.")
    static final class ParquetBench extends Subcommand {
        @Parameters(paramLabel = "PATH", description = "The Parquet file: a local path, or an http(s):// or s3:// "
                + "URL read by ranged requests for the footer and the projected column chunks only.")
        String path;

        @Option(names = "--columns", split = ",", paramLabel = "A,B", description = "Columns to read (default: all top-level columns).")
        List<String> columns = List.of();

        @Option(names = "--where", paramLabel = "EXPR", description = "Keep rows where 'column op value' holds (op: == != < <= > >=); row groups are skipped by their statistics.")
        String where;

        @Option(names = {"--decoded-cache-mb", "--cache-mb"}, paramLabel = "MB", description = "Decoded row groups held at once (default ${DEFAULT-VALUE} MB).")
        long cacheMb;

        @Option(names = "--shuffle-row-groups", paramLabel = "N", description = "Shuffle by row group instead of --order: the row "
                + "groups in a random order, and the rows of each N consecutive ones in a random order among themselves; N row "
                + "groups are decoded at a time, each once per epoch.")
        Integer shuffleRowGroups;

        @Option(names = "--ceiling", paramLabel = "THREADS", description = "Also measure the decompression ceiling, after the "
                + "loader: the projected column chunks in memory, every page decompressed (nothing decoded) on THREADS threads; "
                + "printed to stderr as a line 'ceiling: …'.")
        Integer ceiling;

        @Override
        SourceSpec source() {
            return new Parquet(path, columns, where, cacheMb, shuffleRowGroups);
        }

        @Override
        public Integer call() throws Exception {
            if (ceiling != null && ceiling < 1) {
                throw new Main.UsageException("--ceiling takes a number of threads >= 1, got " + ceiling);
            }
            int rc = super.call();
            if (ceiling != null) {
                BenchRunner.ceiling((Parquet) source(), ceiling, spec.commandLine().getErr());
            }
            return rc;
        }
    }
}
