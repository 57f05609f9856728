package dev.stoker.cli;

import dev.stoker.SyntheticDataset;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code stoker bench SOURCE ...}: runs a loader over a source and reports what it measured. */
@Command(name = "bench", description = "Run a loader over a source and report throughput, wait and stage times.")
final class BenchCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a source is needed (for example: synthetic)");
    }

    @Command(name = "synthetic", description = "N samples whose bytes are a pure function of the sample index.")
    static final class Synthetic implements java.util.concurrent.Callable<Integer> {
        @Option(names = "--samples", defaultValue = "1000000", description = "Samples (default ${DEFAULT-VALUE}).")
        long samples;

        @Option(names = "--sample-bytes", defaultValue = "64", description = "Bytes per sample (default ${DEFAULT-VALUE}).")
        int sampleBytes;

        @Option(names = "--work-us", defaultValue = "0", description = "CPU microseconds spent per sample, like a decoder (default ${DEFAULT-VALUE}).")
        double workUs;

        @Mixin
        BenchOptions options;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            if (samples < 0 || sampleBytes < 1 || workUs < 0) {
                throw new Main.UsageException("--samples must be >= 0, --sample-bytes >= 1 and --work-us >= 0");
            }
            SyntheticDataset data = new SyntheticDataset(samples, sampleBytes, Math.round(workUs * 1000));
            return new BenchRunner(options, spec.commandLine().getOut(), "synthetic", 0)
                    .run(() -> dev.stoker.Loader.builder(data));
        }
    }

    @Command(name = "tokens", description = "Windows of --seq-len + 1 tokens from token files as x and y shifted by one "
            + "(raw .bin, .npy, or Megatron .bin/.idx, whose documents are packed).")
    static final class TokensBench implements java.util.concurrent.Callable<Integer> {
        @CommandLine.Parameters(paramLabel = "PATH", arity = "1..*", description = "Token files (local paths or http(s):// "
                + "and s3:// URLs, read through the cache); several are concatenated, or mixed with --weights.")
        java.util.List<String> paths;

        @Mixin
        RemoteFiles.CacheOptions cache;

        @Option(names = "--seq-len", defaultValue = "1024", description = "Tokens per sample (default ${DEFAULT-VALUE}).")
        int seqLen;

        @Option(names = "--dtype", defaultValue = "uint16", description = "Token type of raw .bin files (default ${DEFAULT-VALUE}).")
        String dtype;

        @Option(names = "--out-dtype", defaultValue = "int64", description = "x and y as int64 or int32 (default ${DEFAULT-VALUE}).")
        String outDtype;

        @Option(names = "--windows", defaultValue = "disjoint", paramLabel = "disjoint|random",
                description = "disjoint: non-overlapping windows, each token once per epoch (default); random: "
                        + "windows at random offsets with replacement, as nanoGPT's get_batch.")
        String windows;

        @Option(names = "--weights", split = ",", description = "Mix the files in these proportions instead of concatenating them.")
        double[] weights;

        @Option(names = "--separator", defaultValue = "-1", description = "For Megatron data: the token put between packed documents (default: none, as when documents end with one).")
        long separator;

        @Mixin
        BenchOptions options;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            boolean random = switch (windows) {
                case "disjoint" -> false;
                case "random" -> true;
                default -> throw new Main.UsageException("--windows must be disjoint or random, got '" + windows + "'");
            };
            try (RemoteFiles files = new RemoteFiles(paths, cache);
                 TokensSource src = new TokensSource(files.paths(), TokensSource.tokenType(dtype), seqLen, random,
                    TokensSource.outType(outDtype), separator)) {
                dev.stoker.DirectDataset data;
                if (weights != null) {
                    if (weights.length != src.datasets.size()) {
                        throw new Main.UsageException("--weights needs one weight per path: " + weights.length + " for " + src.datasets.size());
                    }
                    long total = src.datasets.stream().mapToLong(dev.stoker.DirectDataset::size).sum();
                    data = dev.stoker.DirectDataset.mix(total, weights, src.datasets);
                } else {
                    data = src.datasets.size() == 1 ? src.datasets.get(0) : dev.stoker.DirectDataset.concat(src.datasets);
                }
                BenchRunner runner = new BenchRunner(options, spec.commandLine().getOut(), "tokens", seqLen);
                if (random) {
                    // as many draws per epoch as disjoint windows would give
                    long draws = data.size() / Math.max(1, seqLen);
                    runner.sampler(dev.stoker.Sampler.random(Math.max(1, draws)));
                }
                final dev.stoker.DirectDataset d = data;
                return runner.run(() -> dev.stoker.Loader.builder(d));
            }
        }
    }

    @Command(name = "jsonl", description = "JSON lines tokenized and packed into windows of --seq-len tokens (field tokens), "
            + "an end-of-text token after each document; plain files are read by several workers in ranges.")
    static final class JsonlBench implements java.util.concurrent.Callable<Integer> {
        @CommandLine.Parameters(paramLabel = "PATH", arity = "1..*", description = ".jsonl files (plain, .gz, .zst; local "
                + "paths or http(s):// and s3:// URLs, read through the cache).")
        java.util.List<String> paths;

        @Mixin
        RemoteFiles.CacheOptions cache;

        @Option(names = "--tokenizer", defaultValue = "bytes", description = "bytes, r50k_base (gpt2), p50k_base, cl100k_base or o200k_base (default ${DEFAULT-VALUE}).")
        String tokenizer;

        @Option(names = "--seq-len", defaultValue = "1024", description = "Tokens per sample (default ${DEFAULT-VALUE}).")
        int seqLen;

        @Option(names = "--field", defaultValue = "text", description = "The JSON field holding the text (default ${DEFAULT-VALUE}).")
        String field;

        @Option(names = "--shard-kb", defaultValue = "1024", description = "Size of the ranges a plain file is read in (default ${DEFAULT-VALUE} KB).")
        long shardKb;

        @Option(names = "--shard-buffer", defaultValue = "1024", description = "Windows each shard read ahead may hold (default ${DEFAULT-VALUE}).")
        int shardBuffer;

        @Option(names = "--out-dtype", defaultValue = "int64", description = "int64 or int32 (default ${DEFAULT-VALUE}).")
        String outDtype;

        @Option(names = "--skip-bad", description = "Leave out malformed lines (counted) instead of failing: --errors skip-sample.")
        boolean skipBad;

        @Mixin
        BenchOptions options;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            dev.stoker.formats.tokens.Tokenizer tok;
            try {
                tok = dev.stoker.formats.tokens.Tokenizer.named(tokenizer);
            } catch (IllegalArgumentException e) {
                throw new Main.UsageException(e.getMessage());
            }
            if (seqLen < 1 || shardKb < 1 || shardBuffer < 1) {
                throw new Main.UsageException("--seq-len, --shard-kb and --shard-buffer must be >= 1");
            }
            if (skipBad) {
                if (!options.errors.equals("fail") && !options.errors.equals("skip-sample")) {
                    throw new Main.UsageException("--skip-bad is --errors skip-sample, not --errors " + options.errors);
                }
                options.errors = "skip-sample";
            }
            try (RemoteFiles files = new RemoteFiles(paths, cache)) {
                java.util.List<java.nio.file.Path> local = files.paths();
                for (java.nio.file.Path p : local) {
                    if (!java.nio.file.Files.isRegularFile(p)) {
                        throw new java.nio.file.NoSuchFileException(p.toString());
                    }
                }
                // the documents, tokenized and packed as they stream
                dev.stoker.formats.tokens.Pack pack = new dev.stoker.formats.tokens.Pack(tok, seqLen);
                dev.stoker.StreamingDataset<dev.stoker.formats.tokens.Pack.Window> data =
                        new dev.stoker.formats.text.TextStream(local, field, shardKb << 10)
                                .through(new dev.stoker.formats.tokens.Tokenize(tok).andThen(pack));
                dev.stoker.Collator<dev.stoker.formats.tokens.Pack.Window> collator = pack.collator(TokensSource.outType(outDtype));
                return new BenchRunner(options, spec.commandLine().getOut(), "jsonl", seqLen).shardBuffer(shardBuffer)
                        .run(() -> dev.stoker.Loader.builder(data, collator));
            }
        }
    }

    /** The --transform option of image sources. */
    static final class ImageOptions {
        @Option(names = "--transform", defaultValue = "train224", paramLabel = "train|eval|none",
                description = "train (or train224): RandomResizedCrop + flip + normalize (default); eval (or eval224): Resize "
                        + "+ CenterCrop + normalize; none: the raw fields.")
        String transform;

        @Option(names = "--size", paramLabel = "N", description = "The side of the square crop (default 224).")
        Integer size;

        @Option(names = "--scale", paramLabel = "MIN,MAX", description = "train: the crop's share of the image's area "
                + "(default 0.08,1, torchvision's).")
        String scale;

        @Option(names = "--ratio", paramLabel = "MIN,MAX", description = "train: the crop's aspect ratio, drawn log-uniform "
                + "(default 0.75,1.3333, torchvision's).")
        String ratio;

        @Option(names = "--flip", paramLabel = "P", description = "The probability of a horizontal flip (default: 0.5 for "
                + "train, 0 for eval).")
        Double flip;

        @Option(names = "--resize", paramLabel = "N", description = "eval: the shorter side before the center crop "
                + "(default: the size times 8/7, 256 for 224).")
        Integer resize;

        @Option(names = "--label", paramLabel = "cls|MEMBER|json:FIELD|none", description = "Where the label comes from: "
                + "cls (default: the .cls member, -1 where a sample has none), another member holding one integer (txt), an "
                + "integer field of the .json member (json:FIELD), or none (no label field).")
        String label;

        @Option(names = "--keys", description = "Each batch carries its samples' keys, as the variable-length field __key__ "
                + "(WebDataset's name).")
        boolean keys;

        @Option(names = "--members", paramLabel = "NAME,...", split = ",", description = "none: the members each sample "
                + "gives, each a field of its own (default: those of the first sample; a sample without one of them, or, by "
                + "default, with others, is bad data).")
        java.util.List<String> members;

        @Option(names = "--image-dtype", paramLabel = "float32|uint8",
                description = "float32: normalized by ImageNet's mean and std (default); uint8: the pixels, "
                        + "for the GPU to normalize (a quarter of the bytes to copy).")
        String imageDtype;

        int run(dev.stoker.Dataset<dev.stoker.formats.tar.TarSample> data, BenchOptions options, java.io.PrintWriter out,
                String source) throws Exception {
            BenchRunner runner = new BenchRunner(options, out, source, 0);
            if (transform.equals("none")) {
                var raw = raw(() -> data.size() > 0 ? data.get(0) : null);
                return runner.run(() -> dev.stoker.Loader.builder(data, raw));
            }
            dev.stoker.formats.image.ImagePipeline p = pipeline();
            return runner.run(() -> dev.stoker.Loader.builder(data, p.transform(), p.collator()));
        }

        /** A sample, for the member names of the "none" transform when none are given. */
        @FunctionalInterface
        private interface FirstSample {
            dev.stoker.formats.tar.TarSample get() throws java.io.IOException;
        }

        /** The "none" transform's collator: each member a field of its own; the image options make no sense there. */
        private dev.stoker.Collator<dev.stoker.formats.tar.TarSample> raw(FirstSample first) throws java.io.IOException {
            if (imageDtype != null || size != null || scale != null || ratio != null || flip != null || resize != null
                    || label != null) { // --keys applies: the samples' keys beside their members
                throw new Main.UsageException("--image-dtype, --size, --scale, --ratio, --flip, --resize and --label are for "
                        + "--transform train or eval, not none");
            }
            if (members != null) {
                return new Members(members, true, keys);
            }
            dev.stoker.formats.tar.TarSample s = first.get();
            if (s == null) {
                throw new Main.UsageException("--transform none over no samples: give --members to say what a sample holds");
            }
            return new Members(new java.util.ArrayList<>(s.fields().keySet()), false, keys);
        }

        /** The same over a stream of shards (compressed ones have no random access). */
        int run(dev.stoker.StreamingDataset<dev.stoker.formats.tar.TarSample> data, BenchOptions options, java.io.PrintWriter out,
                String source) throws Exception {
            BenchRunner runner = new BenchRunner(options, out, source, 0);
            if (transform.equals("none")) {
                var raw = raw(() -> {
                    if (data.shards() == 0) {
                        return null;
                    }
                    try (var reader = data.open(0)) {
                        return reader.next();
                    } catch (java.io.IOException e) {
                        throw e;
                    } catch (Exception e) {
                        throw new java.io.IOException(data.shardName(0) + ": " + Main.message(e), e);
                    }
                });
                return runner.run(() -> dev.stoker.Loader.builder(data, raw));
            }
            dev.stoker.formats.image.ImagePipeline p = pipeline();
            return runner.run(() -> dev.stoker.Loader.builder(data, p.transform(), p.collator()));
        }

        /** The image pipeline the options describe: torchvision's transforms, as values. */
        private dev.stoker.formats.image.ImagePipeline pipeline() {
            boolean train = switch (transform) {
                case "train", "train224" -> true;
                case "eval", "eval224" -> false;
                default -> throw new Main.UsageException("--transform must be train, eval or none (or train224, eval224), got '"
                        + transform + "'");
            };
            if (train && resize != null) {
                throw new Main.UsageException("--resize is for --transform eval (train crops at random: --scale, --ratio)");
            }
            if (!train && (scale != null || ratio != null)) {
                throw new Main.UsageException("--scale and --ratio are for --transform train (eval resizes: --resize)");
            }
            int side = size != null ? size : 224;
            try {
                dev.stoker.formats.image.ImagePipeline.Cropping cropping;
                if (train) {
                    double[] sc = pair("--scale", scale, 0.08, 1.0);
                    double[] ra = pair("--ratio", ratio, 3.0 / 4, 4.0 / 3);
                    cropping = new dev.stoker.formats.image.ImagePipeline.RandomResizedCrop(side, sc[0], sc[1], ra[0], ra[1]);
                } else {
                    cropping = new dev.stoker.formats.image.ImagePipeline.ResizeCenterCrop(resize != null ? resize : side * 8 / 7, side);
                }
                var hflip = new dev.stoker.formats.image.ImagePipeline.HorizontalFlip(flip != null ? flip : train ? 0.5 : 0);
                dev.stoker.formats.image.ImagePipeline.Output output = switch (imageDtype == null ? "float32" : imageDtype) {
                    case "float32" -> dev.stoker.formats.image.ImagePipeline.Normalize.IMAGENET;
                    case "uint8" -> new dev.stoker.formats.image.ImagePipeline.Uint8();
                    default -> throw new Main.UsageException("--image-dtype must be float32 or uint8, got '" + imageDtype + "'");
                };
                dev.stoker.formats.image.ImagePipeline p = dev.stoker.formats.image.ImagePipeline.of(cropping, hflip, output)
                        .label(label());
                return keys ? p.keys() : p;
            } catch (IllegalArgumentException e) {
                throw new Main.UsageException(e.getMessage());
            }
        }

        private dev.stoker.formats.image.ImagePipeline.Label label() {
            if (label == null || label.equals("cls")) {
                return dev.stoker.formats.image.ImagePipeline.Label.CLS;
            }
            if (label.equals("none")) {
                return dev.stoker.formats.image.ImagePipeline.Label.NONE;
            }
            if (label.startsWith("json:")) {
                return dev.stoker.formats.image.ImagePipeline.Label.json("json", label.substring(5));
            }
            if (!label.matches("[A-Za-z0-9_.-]+")) {
                throw new Main.UsageException("--label must be cls, a member name, json:FIELD or none, got '" + label + "'");
            }
            return dev.stoker.formats.image.ImagePipeline.Label.member(label);
        }

        private static double[] pair(String option, String value, double min, double max) {
            if (value == null) {
                return new double[] {min, max};
            }
            String[] parts = value.split(",");
            try {
                if (parts.length == 2) {
                    return new double[] {Double.parseDouble(parts[0].strip()), Double.parseDouble(parts[1].strip())};
                }
            } catch (NumberFormatException e) {
                // said below
            }
            throw new Main.UsageException(option + " takes MIN,MAX (two numbers), got '" + value + "'");
        }

        /**
         * The "none" transform's collator: each of {@code names} (sorted) a variable-length field of
         * the member's bytes, and with {@code keys} the sample's key. A sample without one of them
         * is bad data; so is one with others, unless the names were chosen ({@code only}).
         */
        static final class Members implements dev.stoker.Collator<dev.stoker.formats.tar.TarSample> {
            private final String[] names;
            private final boolean chosen;
            private final boolean keys;
            private final dev.stoker.Schema schema;

            Members(java.util.List<String> names, boolean chosen, boolean keys) {
                this.names = new java.util.TreeSet<>(names).toArray(String[]::new);
                this.chosen = chosen;
                this.keys = keys;
                java.util.List<dev.stoker.Field> fields = new java.util.ArrayList<>();
                for (String n : this.names) {
                    if (n.isEmpty() || n.equals(dev.stoker.formats.image.ImagePipeline.KEY_FIELD)) {
                        throw new Main.UsageException("--members: '" + n + "' is not a member name");
                    }
                    fields.add(dev.stoker.Field.bytes(n, 32 * 1024));
                }
                if (keys) {
                    fields.add(dev.stoker.Field.bytes(dev.stoker.formats.image.ImagePipeline.KEY_FIELD, 64));
                }
                this.schema = dev.stoker.Schema.of(fields.toArray(dev.stoker.Field[]::new));
            }

            @Override
            public dev.stoker.Schema schema() {
                return schema;
            }

            @Override
            public void write(dev.stoker.formats.tar.TarSample s, dev.stoker.Row row) throws dev.stoker.CorruptRecordException {
                java.util.Map<String, java.lang.foreign.MemorySegment> fields = s.fields();
                if (!chosen && fields.size() != names.length) {
                    throw differs(s);
                }
                for (int i = 0; i < names.length; i++) {
                    java.lang.foreign.MemorySegment f = fields.get(names[i]);
                    if (f == null) {
                        throw differs(s);
                    }
                    row.append(i, f, 0, f.byteSize());
                }
                if (keys) {
                    row.append(names.length, s.key().getBytes(java.nio.charset.StandardCharsets.UTF_8));
                }
            }

            private dev.stoker.CorruptRecordException differs(dev.stoker.formats.tar.TarSample s) {
                return new dev.stoker.CorruptRecordException(s.url(), -1, "sample '" + s.key() + "' has members "
                        + new java.util.TreeSet<>(s.fields().keySet()) + ", not " + java.util.Arrays.toString(names)
                        + (chosen ? "" : " as the first sample (--members chooses which to take)"));
            }
        }
    }

    @Command(name = "shards", description = "WebDataset tar shards (brace patterns, local paths or http(s):// and s3:// URLs); "
            + "local plain tars are read at random through an index (--stream: as a stream), remote shards stream through a "
            + "local shard cache.")
    static final class ShardsBench implements java.util.concurrent.Callable<Integer> {
        @CommandLine.Parameters(paramLabel = "PATTERN", arity = "1..*",
                description = "Shards, e.g. images-{000000..000019}.tar, https://host/images-{000000..000019}.tar, "
                        + "an s3://bucket/prefix/ ending in / for every object under it, or a glob: s3://bucket/train/*.tar.")
        java.util.List<String> patterns;

        @Mixin
        RemoteFiles.CacheOptions cache;

        @Option(names = "--stream", description = "Read the shards as a stream (shard order shuffled, each shard front to "
                + "back; --shuffle-window shuffles samples within a window, and implies it) rather than at random through "
                + "the index, which a remote shard is read through once the cache holds every shard.")
        boolean stream;

        @Mixin
        ImageOptions image;

        @Mixin
        BenchOptions options;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            if (patterns.stream().anyMatch(dev.stoker.storage.Storage::isRemote)) {
                return remote();
            }
            java.util.List<java.nio.file.Path> shards = new java.util.ArrayList<>();
            for (String p : patterns) {
                try {
                    for (String s : dev.stoker.storage.ShardPattern.expand(p)) {
                        shards.add(java.nio.file.Path.of(s));
                    }
                } catch (IllegalArgumentException e) {
                    throw new Main.UsageException(e.getMessage());
                }
            }
            if (streamed()) {
                return stream(shards);
            }
            dev.stoker.formats.tar.TarDataset data;
            try {
                // opening stats every shard, and names one that is missing
                data = new dev.stoker.formats.tar.TarDataset(shards, shards.stream().map(java.nio.file.Path::toString).toList(),
                        true, !options.errors.equals("fail"));
            } catch (dev.stoker.formats.tar.TarDataset.CompressedShardException e) {
                return stream(shards); // compressed shards are read as streams: shard order shuffled, --shuffle-window for samples
            }
            try (data) {
                return image.run(data, options, spec.commandLine().getOut(), "shards");
            }
        }

        private int stream(java.util.List<java.nio.file.Path> shards) throws Exception {
            for (java.nio.file.Path p : shards) {
                if (!java.nio.file.Files.isRegularFile(p)) {
                    throw new java.nio.file.NoSuchFileException(p.toString());
                }
            }
            return image.run(new dev.stoker.formats.tar.TarShards(shards), options, spec.commandLine().getOut(), "shards");
        }

        private int remote() throws Exception {
            java.util.List<String> locations = new java.util.ArrayList<>();
            for (String p : patterns) {
                if (dev.stoker.storage.Storage.isListing(p)) {
                    locations.addAll(dev.stoker.storage.Storage.list(p));
                    continue;
                }
                try {
                    locations.addAll(dev.stoker.storage.ShardPattern.expand(p));
                } catch (IllegalArgumentException e) {
                    throw new Main.UsageException(e.getMessage());
                }
            }
            if (locations.isEmpty()) {
                throw new Main.UsageException("no shards under " + String.join(" ", patterns));
            }
            java.nio.file.Path dir = cache.dir();
            try (dev.stoker.storage.ShardCache shardCache = new dev.stoker.storage.ShardCache(dir, cache.cacheSize, 4)) {
                // compressed shards have no index: they stream, as local ones
                boolean global = !streamed() && locations.stream().allMatch(l -> dev.stoker.storage.Storage.baseName(l).endsWith(".tar"));
                int rc = global ? throughIndex(locations, shardCache)
                        : image.run(dev.stoker.formats.tar.RemoteShards.tar(locations, shardCache, 2), options,
                        spec.commandLine().getOut(), "shards");
                var st = shardCache.stats();
                spec.commandLine().getErr().printf("shard cache %s: %d hits, %d misses, %.1f MB downloaded, %.2f s waited%n",
                        dir, st.hits(), st.misses(), st.bytesDownloaded() / 1e6, st.waitNanos() / 1e9);
                return rc;
            }
        }

        /** The stream rather than the index: asked for, or implied by a shuffle window. */
        private boolean streamed() {
            return stream || options.shuffleWindow > 0 || options.shuffleWindowBytes != null && options.shuffleWindowBytes > 0;
        }

        /**
         * Remote plain shards in the same order as local ones (a global shuffle through the
         * index): every shard in the cache first, then read as local shards under their URLs.
         */
        private int throughIndex(java.util.List<String> locations, dev.stoker.storage.ShardCache shardCache) throws Exception {
            long total = 0;
            for (String l : locations) {
                total += dev.stoker.storage.Storage.size(l);
            }
            if (total > cache.cacheSize) {
                throw new Main.UsageException(String.format(java.util.Locale.ROOT, "a shuffle over all %d shards reads them "
                        + "through the cache, and their %,d bytes do not fit its %,d: raise --cache-size, or read them as a "
                        + "stream (--stream, with --shuffle-window-bytes for a window of samples)", locations.size(), total,
                        cache.cacheSize));
            }
            locations.forEach(shardCache::prefetch); // downloads run in parallel
            java.util.List<java.nio.file.Path> local = new java.util.ArrayList<>();
            try {
                for (String l : locations) {
                    // a copy that is no tar archive (an error page sent as a success) is fetched again, once
                    local.add(shardCache.acquire(l, dev.stoker.formats.tar.TarReader::checkStart));
                }
                try (dev.stoker.formats.tar.TarDataset data = new dev.stoker.formats.tar.TarDataset(local, locations, false,
                        !options.errors.equals("fail"))) {
                    return image.run(data, options, spec.commandLine().getOut(), "shards");
                }
            } finally {
                for (int i = 0; i < local.size(); i++) {
                    shardCache.release(locations.get(i));
                }
            }
        }
    }

    @Command(name = "folder", description = "An image folder (root/CLASS/IMAGE.jpg), as torchvision's ImageFolder; "
            + "local, or a prefix of S3 (s3://bucket/train/), each image read by one request.")
    static final class FolderBench implements java.util.concurrent.Callable<Integer> {
        @CommandLine.Parameters(paramLabel = "DIR", description = "The folder, or an s3:// prefix.")
        String dir;

        @Mixin
        ImageOptions image;

        @Mixin
        BenchOptions options;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            if (!dev.stoker.storage.Storage.isRemote(dir) && !java.nio.file.Files.isDirectory(java.nio.file.Path.of(dir))) {
                throw new java.nio.file.NoSuchFileException(dir);
            }
            return image.run(new dev.stoker.formats.image.ImageFolder(dir), options, spec.commandLine().getOut(), "folder");
        }
    }

    @Command(name = "hdf5", description = "Datasets of an HDF5 file, the first axis being the sample axis.")
    static final class Hdf5Bench implements java.util.concurrent.Callable<Integer> {
        @CommandLine.Parameters(paramLabel = "PATH", description = "The HDF5 file (a local path or an http(s):// or s3:// "
                + "URL, read through the cache whole).")
        String path;

        @Mixin
        RemoteFiles.CacheOptions cache;

        @Option(names = "--dataset", required = true, paramLabel = "/NAME", description = "A dataset to read (repeat for several).")
        java.util.List<String> datasets;

        @Mixin
        BenchOptions options;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            try (RemoteFiles files = new RemoteFiles(java.util.List.of(path), cache)) {
                java.nio.file.Path local = files.paths().get(0);
                if (!java.nio.file.Files.isRegularFile(local)) {
                    throw new java.nio.file.NoSuchFileException(path);
                }
                dev.stoker.hdf5.Hdf5Dataset data;
                try {
                    data = new dev.stoker.hdf5.Hdf5Dataset(local, datasets);
                } catch (IllegalArgumentException e) {
                    throw new Main.UsageException(e.getMessage());
                }
                try (data) {
                    return new BenchRunner(options, spec.commandLine().getOut(), "hdf5", 0).run(() -> dev.stoker.Loader.builder(data));
                }
            }
        }
    }

    @Command(name = "parquet", description = "Rows of a Parquet file, projected columns as batch fields.")
    static final class ParquetBench implements java.util.concurrent.Callable<Integer> {
        @CommandLine.Parameters(paramLabel = "PATH", description = "The Parquet file: a local path, or an http(s):// or s3:// "
                + "URL read by ranged requests for the footer and the projected column chunks only.")
        String path;

        @Option(names = "--columns", split = ",", paramLabel = "A,B", description = "Columns to read (default: all top-level columns).")
        java.util.List<String> columns = java.util.List.of();

        @Option(names = "--where", paramLabel = "EXPR", description = "Keep rows where 'column op value' holds (op: == != < <= > >=); row groups are skipped by their statistics.")
        String where;

        @Option(names = "--cache-mb", defaultValue = "512", paramLabel = "MB", description = "Decoded row groups held at once (default ${DEFAULT-VALUE} MB).")
        long cacheMb;

        @Option(names = "--shuffle-row-groups", paramLabel = "N", description = "Shuffle by row group instead of --order: the row "
                + "groups in a random order, and the rows of each N consecutive ones in a random order among themselves; N row "
                + "groups are decoded at a time, each once per epoch.")
        Integer shuffleRowGroups;

        @Option(names = "--ceiling", paramLabel = "THREADS", description = "Also measure the decompression ceiling, after the "
                + "loader: the projected column chunks in memory, every page decompressed (nothing decoded) on THREADS threads; "
                + "printed to stderr as a line 'ceiling: …'.")
        Integer ceiling;

        @Mixin
        BenchOptions options;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            dev.stoker.parquet.ParquetDataset data;
            try {
                dev.stoker.parquet.Where filter = where == null ? null : dev.stoker.parquet.Where.parse(where);
                data = new dev.stoker.parquet.ParquetDataset(path, columns, filter, cacheMb << 20);
            } catch (IllegalArgumentException e) {
                throw new Main.UsageException(e.getMessage());
            }
            try (data) {
                // every configuration starts with no decoded row group, as a fresh process would
                BenchRunner runner = new BenchRunner(options, spec.commandLine().getOut(), "parquet", 0);
                if (shuffleRowGroups != null) {
                    if (shuffleRowGroups < 1) {
                        throw new Main.UsageException("--shuffle-row-groups must be >= 1, got " + shuffleRowGroups);
                    }
                    runner.sampler(dev.stoker.Sampler.blockShuffle(data.rowGroupStarts(), shuffleRowGroups));
                }
                if (ceiling != null && ceiling < 1) {
                    throw new Main.UsageException("--ceiling takes a number of threads >= 1, got " + ceiling);
                }
                int rc = runner.run(() -> {
                    data.dropCache();
                    return dev.stoker.Loader.builder(data);
                });
                if (ceiling != null) {
                    var c = data.decompressionCeiling(ceiling);
                    spec.commandLine().getErr().printf(java.util.Locale.ROOT, "ceiling: %d threads decompressed %.2f MB into %.2f MB "
                            + "in %.3f s: %.0f MB/s, %.2f M rows/s%n", c.threads(), c.compressedBytes() / 1e6, c.uncompressedBytes() / 1e6,
                            c.seconds(), c.uncompressedBytes() / 1e6 / c.seconds(), data.size() / 1e6 / c.seconds());
                }
                if (dev.stoker.storage.Storage.isRemote(path)) {
                    var t = data.traffic();
                    spec.commandLine().getErr().printf(java.util.Locale.ROOT, "parquet %s: fetched %.2f MB in %d requests; "
                            + "the projection needs %.2f MB of the file's %.2f MB%n", path, t.bytesFetched() / 1e6, t.requests(),
                            t.projectionBytes() / 1e6, t.fileBytes() / 1e6);
                }
                return rc;
            }
        }
    }
}
