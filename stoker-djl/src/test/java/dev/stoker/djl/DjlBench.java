package dev.stoker.djl;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.basicdataset.cv.classification.ImageFolder;
import ai.djl.engine.Engine;
import ai.djl.modality.cv.transform.Normalize;
import ai.djl.modality.cv.transform.RandomFlipLeftRight;
import ai.djl.modality.cv.transform.RandomResizedCrop;
import ai.djl.modality.cv.transform.ToTensor;
import ai.djl.modality.nlp.DefaultVocabulary;
import ai.djl.modality.nlp.embedding.TrainableWordEmbedding;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Blocks;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.nn.pooling.Pool;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.dataset.Batch;
import ai.djl.training.dataset.Dataset;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import dev.stoker.DType;
import dev.stoker.Loader;
import dev.stoker.formats.image.ImagePipeline;
import dev.stoker.formats.tokens.TokenFile;
import dev.stoker.formats.tokens.TokenWindows;

import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.stream.IntStream;

/**
 * A DJL training loop fed by DJL's own datasets or by {@link StokerDataset}: the same model, step
 * and batches, timed per step. Prints one JSON line per run.
 *
 * <pre>
 * DjlBench W3|W1 djl|stoker DATA_DIR [--epochs N] [--djl-threads N] [--djl-prefetch N]
 * </pre>
 *
 * <ul>
 *   <li>W3: the ImageFolder of JPEGs; torchvision's training transform at 224 (random resized
 *       crop, flip, float32, normalized), batches of 64; the step is a small classifier (8×8
 *       average pool, one linear layer) trained with SGD. DJL: {@code ImageFolder} with its
 *       transforms.</li>
 *   <li>W1: disjoint windows of 1,024 uint16 tokens as int64 (x, y), batches of 32; the step is
 *       an embedding (65,536 × 16) and a 256-way head over each next token's low byte, trained
 *       with SGD. DJL: {@code ArrayDataset} over the windows of the first 20 M tokens, in memory.</li>
 * </ul>
 *
 * <p>The first epoch warms up; the last is measured: samples a second, and the share of the loop's
 * time spent in {@code hasNext()}/{@code next()}, waiting for data ({@code wait_ms} a step; for
 * Stoker, {@code not_ready_ms} is the part of it when its loader had no batch ready, the rest
 * being the hand-off and the making of the arrays).
 */
public final class DjlBench {
    private static final int IMAGE_BATCH = 64;
    private static final int TOKEN_BATCH = 32;
    private static final int SEQ = 1024;
    private static final int DJL_TOKENS = 20_000_000;

    private DjlBench() {
    }

    public static void main(String[] args) throws Exception {
        String workload = args[0];
        String loader = args[1];
        Path data = Path.of(args[2]);
        int epochs = 2;
        int threads = 0; // DJL's default executor: the common pool
        int prefetch = 2; // DJL's default prefetch
        for (int i = 3; i < args.length; i += 2) {
            switch (args[i]) {
                case "--epochs" -> epochs = Integer.parseInt(args[i + 1]);
                case "--djl-threads" -> threads = Integer.parseInt(args[i + 1]);
                case "--djl-prefetch" -> prefetch = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Engine.getInstance().setRandomSeed(1);
        ExecutorService executor = threads > 0 ? Executors.newFixedThreadPool(threads) : ForkJoinPool.commonPool();
        long start = System.nanoTime();
        try (NDManager manager = NDManager.newBaseManager(Device.cpu())) {
            Result r = switch (workload) {
                case "W3" -> images(loader, data.resolve("small-files"), epochs, prefetch, executor, manager, start);
                case "W1" -> tokens(loader, data.resolve("tokens/train.bin"), epochs, prefetch, executor, manager, start);
                default -> throw new IllegalArgumentException("workload W3 or W1, not " + workload);
            };
            String djl = loader.equals("djl") ? String.format(Locale.ROOT, ", \"djl_threads\": %s, \"djl_prefetch\": %d",
                    threads > 0 ? Integer.toString(threads) : "\"common pool (" + ForkJoinPool.getCommonPoolParallelism() + ")\"",
                    prefetch) : "";
            System.out.printf(Locale.ROOT, "{\"workload\": \"%s\", \"loader\": \"%s\"%s, \"samples_per_s\": %.1f, "
                            + "\"tokens_per_s\": %.0f, \"wait_share\": %.3f, \"wait_ms\": %.3f, \"not_ready_ms\": %s, \"step_ms\": %.2f, "
                            + "\"first_batch_s\": %.2f, \"measured_batches\": %d}%n", workload, loader, djl, r.samples / r.seconds,
                    workload.equals("W1") ? r.samples * SEQ / r.seconds : 0.0, r.waitNanos / (r.seconds * 1e9),
                    r.waitNanos / 1e6 / r.batches,
                    r.loaderWaitNanos < 0 ? "null" : String.format(Locale.ROOT, "%.3f", r.loaderWaitNanos / 1e6 / r.batches),
                    r.stepNanos / 1e6 / r.batches, r.firstBatchSeconds, r.batches);
        } finally {
            if (threads > 0) {
                executor.shutdownNow();
            }
        }
    }

    /** {@code loaderWaitNanos}: of {@code waitNanos}, the time Stoker's loader had no batch ready (-1 for DJL's datasets). */
    record Result(long samples, long batches, double seconds, long waitNanos, long stepNanos, double firstBatchSeconds,
                  long loaderWaitNanos) {
    }

    private static Result images(String loader, Path root, int epochs, int prefetch, ExecutorService executor,
                                 NDManager manager, long start) throws Exception {
        Dataset dataset;
        AutoCloseable closer = () -> { };
        if (loader.equals("djl")) {
            ImageFolder f = ImageFolder.builder().setRepositoryPath(root)
                    .addTransform(new RandomResizedCrop(224, 224))
                    .addTransform(new RandomFlipLeftRight())
                    .addTransform(new ToTensor())
                    .addTransform(new Normalize(new float[] {0.485f, 0.456f, 0.406f}, new float[] {0.229f, 0.224f, 0.225f}))
                    .setSampling(IMAGE_BATCH, true).optPrefetchNumber(prefetch).build();
            f.prepare();
            dataset = f;
        } else {
            ImagePipeline p = ImagePipeline.train(224);
            StokerDataset s = StokerDataset.builder(Loader.builder(new dev.stoker.formats.image.ImageFolder(root),
                    p.transform(), p.collator()).batchSize(IMAGE_BATCH).shuffle().seed(1)).build();
            dataset = s;
            closer = s;
        }
        try (AutoCloseable c = closer; Model model = Model.newInstance("images")) {
            model.setBlock(new SequentialBlock().add(Pool.avgPool2dBlock(new Shape(8, 8))).add(Blocks.batchFlattenBlock())
                    .add(Linear.builder().setUnits(10).build()));
            try (Trainer trainer = model.newTrainer(config(executor))) {
                trainer.initialize(new Shape(IMAGE_BATCH, 3, 224, 224));
                return loop(trainer, dataset, epochs, Long.MAX_VALUE, start, b -> {
                    NDArray logits = trainer.forward(b.getData()).singletonOrThrow();
                    return trainer.getLoss().evaluate(new NDList(b.getLabels().head().reshape(-1)), new NDList(logits));
                });
            }
        }
    }

    private static Result tokens(String loader, Path file, int epochs, int prefetch, ExecutorService executor,
                                 NDManager manager, long start) throws Exception {
        try (TokenFile f = TokenFile.open(file, DType.UINT16)) {
            Dataset dataset;
            AutoCloseable closer = () -> { };
            if (loader.equals("djl")) {
                int windows = (int) Math.min((f.length() - 1) / SEQ, DJL_TOKENS / SEQ);
                long[] x = new long[windows * SEQ];
                long[] y = new long[windows * SEQ];
                var seg = f.segment();
                for (int i = 0; i < x.length; i++) {
                    long at = (long) (i / SEQ) * SEQ + i % SEQ;
                    x[i] = Short.toUnsignedLong(seg.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, at));
                    y[i] = Short.toUnsignedLong(seg.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, at + 1));
                }
                dataset = new ArrayDataset.Builder().setData(manager.create(x, new Shape(windows, SEQ)))
                        .optLabels(manager.create(y, new Shape(windows, SEQ))).setSampling(TOKEN_BATCH, true)
                        .optPrefetchNumber(prefetch).build();
            } else {
                StokerDataset s = StokerDataset.builder(Loader.builder(TokenWindows.disjoint(f, SEQ, DType.INT64))
                        .batchSize(TOKEN_BATCH).shuffle().seed(1)).build();
                dataset = s;
                closer = s;
            }
            List<String> vocabulary = IntStream.range(0, 65536).mapToObj(Integer::toString).toList();
            try (AutoCloseable c = closer; Model model = Model.newInstance("tokens")) {
                model.setBlock(new SequentialBlock().add(new TrainableWordEmbedding(new DefaultVocabulary(vocabulary), 16))
                        .add(Linear.builder().setUnits(256).build()));
                try (Trainer trainer = model.newTrainer(config(executor))) {
                    trainer.initialize(new Shape(TOKEN_BATCH, SEQ));
                    return loop(trainer, dataset, epochs, 300, start, b -> { // an epoch is 6,000+ batches
                        NDArray logits = trainer.forward(b.getData()).singletonOrThrow().reshape(-1, 256);
                        NDArray target = b.getLabels().head().reshape(-1).mod(256);
                        return trainer.getLoss().evaluate(new NDList(target), new NDList(logits));
                    });
                }
            }
        }
    }

    private interface Step {
        NDArray loss(Batch b);
    }

    /** {@code epochs} passes of at most {@code maxBatches} batches each; the last one timed. */
    private static Result loop(Trainer trainer, Dataset dataset, int epochs, long maxBatches, long start, Step step)
            throws Exception {
        double first = -1;
        Result last = null;
        for (int e = 0; e < epochs; e++) {
            long samples = 0, batches = 0, wait = 0, stepping = 0;
            long t0 = System.nanoTime();
            long loaderWait = dataset instanceof StokerDataset s ? s.loader().stats().waitNanos() : 0;
            Iterator<Batch> it = trainer.iterateDataset(dataset).iterator();
            while (true) {
                long a = System.nanoTime();
                if (!it.hasNext()) {
                    break;
                }
                Batch b = it.next();
                long c = System.nanoTime();
                wait += c - a;
                if (first < 0) {
                    first = (c - start) / 1e9;
                }
                try (GradientCollector gc = trainer.newGradientCollector()) {
                    gc.backward(step.loss(b));
                }
                trainer.step();
                samples += b.getSize();
                b.close();
                stepping += System.nanoTime() - c;
                if (++batches == maxBatches) {
                    break; // a prefetched DJL batch left behind is its manager's to free
                }
            }
            loaderWait = dataset instanceof StokerDataset s ? s.loader().stats().waitNanos() - loaderWait : -1;
            last = new Result(samples, batches, (System.nanoTime() - t0) / 1e9, wait, stepping, first, loaderWait);
        }
        return last;
    }

    private static DefaultTrainingConfig config(ExecutorService executor) {
        return new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                .optOptimizer(Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.01f)).build())
                .optDevices(new Device[] {Device.cpu()}).optExecutorService(executor);
    }
}
