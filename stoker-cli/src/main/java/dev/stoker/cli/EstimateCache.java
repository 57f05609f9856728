package dev.stoker.cli;

import dev.stoker.Batch;
import dev.stoker.Dataset;
import dev.stoker.Loader;
import dev.stoker.formats.image.ImageCache;
import dev.stoker.formats.image.ImagePipeline;
import dev.stoker.formats.tar.TarDataset;
import dev.stoker.formats.tar.TarSample;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code stoker estimate cache}: what {@code --image-cache ram} would keep of these shards, whether its
 * bound holds it, and what it would save each epoch after the first, measured on a probe of the
 * shards' samples on one thread: the pipeline as it runs without a cache, against the same crops
 * resampled from kept images (NOTE [Image cache]).
 */
@Command(name = "cache", description = "The image cache (--image-cache ram) of these tar shards: its size, whether it fits its "
        + "bound, and the speed-up of the epochs after the first, measured on a probe of their images.")
final class EstimateCache implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "SHARD", description = "Local tar shards (patterns such as a-{000..009}.tar work).")
    List<String> shards;

    @Option(names = "--transform", defaultValue = "train", paramLabel = "train|eval", description = "The crops (default ${DEFAULT-VALUE}).")
    String transform;

    @Option(names = "--size", defaultValue = "224", paramLabel = "N", description = "The crop's side (default ${DEFAULT-VALUE}).")
    int size;

    @Option(names = {"--image-cache-max-side", "--cache-max-side"}, paramLabel = "N", description = "Images kept at the DCT scale whose longer side is at most N.")
    Integer maxSide;

    @Option(names = {"--image-cache-bytes", "--cache-bytes"}, paramLabel = "BYTES", description = "The cache's bound (default: half of this machine's memory).")
    Long bytes;

    @Option(names = "--probe", defaultValue = "128", paramLabel = "N", description = "Images timed, spread over the shards (default ${DEFAULT-VALUE}).")
    int probe;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (!transform.equals("train") && !transform.equals("eval")) {
            throw new Main.UsageException("--transform is train or eval, got '" + transform + "'");
        }
        if (size < 1 || probe < 1 || (maxSide != null && maxSide < 1) || (bytes != null && bytes < 1)) {
            throw new Main.UsageException("--size, --probe, --image-cache-max-side and --image-cache-bytes take positive numbers");
        }
        List<Path> paths = Main.expand(shards).stream().map(Path::of).toList();
        int side = maxSide == null ? 0 : maxSide;
        long bound = bytes != null ? bytes : ImageCache.defaultBytes();
        PrintWriter o = spec.commandLine().getOut();
        try (TarDataset data = new TarDataset(paths)) {
            long n = data.size();
            long kept = ImageCache.estimate(data, side);
            o.printf(Locale.ROOT, "%,d images; kept%s: about %s (from %d headers); bound %s: %s%n", n,
                    side == 0 ? " whole" : " at a longer side of at most " + side, gb(kept), Math.min(n, 64), gb(bound),
                    kept <= bound ? "fits" : "does not fit (--image-cache ram would be refused: raise --image-cache-bytes "
                            + "or lower --image-cache-max-side)");
            int m = (int) Math.min(n, probe);
            long[] indices = new long[m];
            for (int i = 0; i < m; i++) {
                indices[i] = i * n / m;
            }
            Dataset<TarSample> sub = data.subset(indices);
            ImagePipeline p = transform.equals("train") ? ImagePipeline.train(size) : ImagePipeline.eval(size);
            epoch(sub, p); // warm: the JIT and the decoder's tables
            double plain = epoch(sub, p) / m;
            ImagePipeline cached = p.cached(new ImageCache(m, Long.MAX_VALUE, side));
            double first = epoch(sub, cached) / m;
            double later = epoch(sub, cached) / m;
            o.printf(Locale.ROOT, "per image, one thread, %d images: without a cache %.3f ms; with it, the first epoch "
                    + "%.3f ms (decoding whole images), later epochs %.3f ms%n", m, plain * 1e3, first * 1e3, later * 1e3);
            o.printf(Locale.ROOT, "expected speed-up of the epochs after the first: %.2fx%s%n", plain / later,
                    side == 0 ? "" : " (on images at most " + side + " on their longer side: other data)");
        }
        o.flush();
        return 0;
    }

    /** Seconds of one epoch of {@code d} through {@code p}, on this thread. */
    private static double epoch(Dataset<TarSample> d, ImagePipeline p) throws IOException {
        long t0 = System.nanoTime();
        try (Loader l = Loader.builder(d, p.transform(), p.collator()).batchSize(16).shuffle().seed(1).build()) {
            for (Batch b : l) {
                b.size();
            }
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    private static String gb(long bytes) {
        return String.format(Locale.ROOT, "%.2f GB", bytes / 1e9);
    }
}
