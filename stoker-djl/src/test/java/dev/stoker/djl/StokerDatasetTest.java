package dev.stoker.djl;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Blocks;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.EasyTrain;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.Batch;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import dev.stoker.DType;
import dev.stoker.Field;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.LoaderState;
import dev.stoker.Schema;
import dev.stoker.formats.image.ImageFolder;
import dev.stoker.formats.image.ImagePipeline;
import dev.stoker.formats.tokens.TokenFile;
import dev.stoker.formats.tokens.TokenWindows;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Stoker under DJL's Trainer, on DJL's PyTorch engine (CPU). */
class StokerDatasetTest {
    private static final int CLASSES = 4;
    private static final int VOCAB = 64;
    private static final int SEQ = 32;
    private static final ImagePipeline SMALL = ImagePipeline.of(new ImagePipeline.ResizeCenterCrop(32, 32),
            ImagePipeline.HorizontalFlip.NONE, ImagePipeline.Normalize.IMAGENET);

    @TempDir
    static Path dir;
    static Path images;
    static Path tokens;

    @BeforeAll
    static void data() throws IOException {
        images = Generated.images(dir.resolve("images"), CLASSES, 24, 40, 1);
        tokens = Generated.tokens(dir.resolve("tokens.bin"), 100_000, VOCAB, 2);
    }

    private static LoaderBuilder images(ImagePipeline p, long seed) throws IOException {
        return Loader.builder(new ImageFolder(images), p.transform(), p.collator()).batchSize(16).shuffle()
                .seed(seed).workers(2);
    }

    private static LoaderBuilder windows(TokenFile f, long seed) {
        return Loader.builder(TokenWindows.disjoint(f, SEQ, DType.INT64)).batchSize(32).shuffle().seed(seed)
                .workers(2);
    }

    // ---- training ----------------------------------------------------------------------------

    @Test
    void anMlpLearnsImagesUnderEasyTrain() throws Exception {
        Engine.getInstance().setRandomSeed(11);
        try (StokerDataset data = StokerDataset.builder(images(SMALL, 7)).build();
             Model model = Model.newInstance("mlp")) {
            assertEquals(List.of("image"), data.dataFields());
            assertEquals(List.of("label"), data.labelFields());
            model.setBlock(new SequentialBlock().add(Blocks.batchFlattenBlock()).add(Linear.builder().setUnits(32).build())
                    .add(Activation::relu).add(Linear.builder().setUnits(CLASSES).build()));
            try (Trainer trainer = model.newTrainer(config(0.05f))) {
                trainer.initialize(new Shape(16, 3, 32, 32));
                data.prepare();
                float before = meanLoss(trainer, data);
                EasyTrain.fit(trainer, 40, data, null); // 6 batches an epoch: 240 steps
                float after = meanLoss(trainer, data);
                assertTrue(after < before / 4, "loss " + before + " -> " + after);
                assertEquals(42, data.loader().epoch());
            }
        }
    }

    @Test
    void aLanguageModelLearnsTokenWindows() throws Exception {
        Engine.getInstance().setRandomSeed(12);
        try (TokenFile f = TokenFile.open(tokens, DType.UINT16);
             StokerDataset data = StokerDataset.builder(windows(f, 3)).build();
             Model model = lm()) {
            assertEquals(List.of("x"), data.dataFields());
            assertEquals(List.of("y"), data.labelFields());
            try (Trainer trainer = model.newTrainer(config(0.5f))) {
                trainer.initialize(new Shape(32, SEQ, VOCAB));
                List<Float> losses = new ArrayList<>();
                for (int epoch = 0; epoch < 3; epoch++) { // 98 batches an epoch, the last of 20
                    for (Batch b : trainer.iterateDataset(data)) {
                        losses.add(step(trainer, b));
                        b.close();
                    }
                }
                assertEquals(294, losses.size());
                double first = losses.subList(0, 20).stream().mapToDouble(x -> x).average().orElseThrow();
                double last = losses.subList(losses.size() - 20, losses.size()).stream().mapToDouble(x -> x).average()
                        .orElseThrow();
                // from ln 64 = 4.16 toward the tokens' entropy given the last one (about 0.8)
                assertTrue(first > 3.5 && last < 1.6, "loss " + first + " -> " + last);
            }
        }
    }

    // ---- what DJL sees -----------------------------------------------------------------------

    @Test
    void djlSeesStokersBytesForImagesAndTokens() throws Exception {
        ImagePipeline uint8 = ImagePipeline.train(24).uint8();
        assertEquals(digests(images(uint8, 5), 2), djlDigests(images(uint8, 5), 2));
        assertEquals(digests(images(ImagePipeline.train(24), 5), 1), djlDigests(images(ImagePipeline.train(24), 5), 1));
        try (TokenFile f = TokenFile.open(tokens, DType.UINT16)) {
            assertEquals(digests(windows(f, 9), 1), djlDigests(windows(f, 9), 1));
        }
    }

    @Test
    void arraysAreTheBatchsMemoryNotACopy() throws Exception {
        try (StokerDataset data = StokerDataset.builder(images(SMALL.uint8(), 1)).build();
             NDManager manager = NDManager.newBaseManager(Device.cpu())) {
            StokerBatch b = (StokerBatch) data.getData(manager).iterator().next();
            NDArray image = b.getData().singletonOrThrow();
            assertEquals(new Shape(16, 3, 32, 32), image.getShape());
            assertEquals(ai.djl.ndarray.types.DataType.UINT8, image.getDataType());
            byte first = image.toByteArray()[0];
            b.source().data(0).set(ValueLayout.JAVA_BYTE, 0, (byte) ~first); // written after the array was made
            assertEquals((byte) ~first, image.toByteArray()[0]);
            long label = b.source().data(1).get(ValueLayout.JAVA_LONG_UNALIGNED, 8);
            assertEquals(label, b.getLabels().singletonOrThrow().getLong(1));
            assertEquals(b.source().index(3), b.getIndices().get(3));
            b.close();
        }
    }

    @Test
    void anEarlyCloseLeavesNoThreadAndNoArray() throws Exception {
        try (TokenFile f = TokenFile.open(tokens, DType.UINT16);
             NDManager manager = NDManager.newBaseManager(Device.cpu())) {
            StokerDataset data = StokerDataset.builder(windows(f, 2)).build(); // 98 batches: the workers are busy
            Iterator<Batch> it = data.getData(manager).iterator();
            it.next().close();
            it.next().close();
            StokerBatch held = (StokerBatch) it.next();
            NDArray x = held.getData().head();
            assertTrue(workers() > 0);
            data.close();
            data.close(); // idempotent
            assertTrue(held.isClosed());
            assertTrue(x.isReleased(), "the open batch's arrays were closed with the dataset");
            assertEquals(0, manager.getManagedArrays().size());
            assertThrows(IllegalStateException.class, it::hasNext);
        }
        assertEquals(0, workers(), "worker threads left");
    }

    // ---- misuse ------------------------------------------------------------------------------

    @Test
    void aNewPassWhileBatchesAreOpenIsRefused() throws Exception {
        try (StokerDataset data = StokerDataset.builder(images(SMALL, 3)).build();
             NDManager manager = NDManager.newBaseManager(Device.cpu())) {
            Batch open = data.getData(manager).iterator().next();
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> data.getData(manager).iterator());
            assertTrue(e.getMessage().contains("still open"), e.getMessage());
            open.close();
            assertTrue(data.getData(manager).iterator().hasNext()); // the rest of the epoch
        }
    }

    @Test
    void holdingMoreThanItsBatchesIsRefused() throws Exception {
        try (StokerDataset data = StokerDataset.builder(images(SMALL, 3)).holds(2).build();
             NDManager manager = NDManager.newBaseManager(Device.cpu())) {
            Iterator<Batch> it = data.getData(manager).iterator();
            Batch a = it.next();
            Batch b = it.next();
            IllegalStateException e = assertThrows(IllegalStateException.class, it::next);
            assertTrue(e.getMessage().contains("close each batch"), e.getMessage());
            a.close();
            it.next().close();
            b.close();
        }
    }

    @Test
    void fieldsDjlCannotHoldAreNamed() {
        Schema s = Schema.of(Field.tensor("x", DType.BFLOAT16, 4), Field.scalar("label", DType.INT64));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Columns.of(s, null, null));
        assertTrue(e.getMessage().contains("'x' is bfloat16"), e.getMessage());
        Schema v = Schema.of(Field.bytes("text", 64), Field.scalar("label", DType.INT64));
        e = assertThrows(IllegalArgumentException.class, () -> Columns.of(v, null, null));
        assertTrue(e.getMessage().contains("'text' is variable-length"), e.getMessage());
        Schema ok = Schema.of(Field.tensor("a", DType.FLOAT32, 2), Field.tensor("b", DType.UINT8, 2));
        e = assertThrows(IllegalArgumentException.class, () -> Columns.of(ok, List.of("a"), List.of("a")));
        assertTrue(e.getMessage().contains("both"), e.getMessage());
        assertEquals(List.of("b"), Columns.of(ok, List.of("b"), List.of()).dataNames());
    }

    // ---- resume ------------------------------------------------------------------------------

    @Test
    void resumingFromACheckpointRepeatsTheUninterruptedRun() throws Exception {
        Path ckpt = dir.resolve("ckpt");
        List<String> uninterrupted = new ArrayList<>();
        List<Float> uninterruptedLoss = new ArrayList<>();
        Engine.getInstance().setRandomSeed(13);
        try (TokenFile f = TokenFile.open(tokens, DType.UINT16);
             StokerDataset data = StokerDataset.builder(windows(f, 4)).build();
             Model model = lm();
             Trainer trainer = model.newTrainer(config(0.5f))) {
            trainer.initialize(new Shape(32, SEQ, VOCAB));
            int steps = 0;
            for (int epoch = 0; epoch < 2; epoch++) {
                for (Batch b : trainer.iterateDataset(data)) {
                    steps++;
                    if (steps > 120) {
                        uninterrupted.add(digest(b));
                    }
                    float loss = step(trainer, b);
                    if (steps > 120) {
                        uninterruptedLoss.add(loss);
                    }
                    b.close();
                    if (steps == 120) { // epoch 1, its 22nd batch
                        DjlCheckpoint.save(model, data, ckpt);
                    }
                }
            }
        }
        assertTrue(Files.exists(ckpt.resolve("lm-0000.params")) && Files.exists(ckpt.resolve("lm-0000.stoker.json")));
        try (var left = Files.list(ckpt)) {
            assertEquals(2, left.count(), "only the checkpoint's two files");
        }

        List<String> resumed = new ArrayList<>();
        List<Float> resumedLoss = new ArrayList<>();
        try (TokenFile f = TokenFile.open(tokens, DType.UINT16); Model model = lm()) {
            Optional<LoaderState> at = DjlCheckpoint.restore(model, ckpt);
            assertTrue(at.isPresent());
            try (StokerDataset data = StokerDataset.builder(windows(f, 4).resume(at.get())).build();
                 Trainer trainer = model.newTrainer(config(0.5f))) {
                trainer.initialize(new Shape(32, SEQ, VOCAB));
                for (Batch b : trainer.iterateDataset(data)) {
                    resumed.add(digest(b));
                    resumedLoss.add(step(trainer, b));
                    b.close();
                }
            }
        }
        assertEquals(2 * 98 - 120, uninterrupted.size());
        assertEquals(uninterrupted, resumed);
        for (int i = 0; i < resumed.size(); i++) {
            assertEquals(uninterruptedLoss.get(i), resumedLoss.get(i), 1e-5f, "step " + i);
        }
    }

    @Test
    void aCheckpointWithoutItsStateIsNamed() throws Exception {
        Path ckpt = Files.createDirectories(dir.resolve("bare"));
        try (Model model = lm(); Trainer trainer = model.newTrainer(config(0.1f))) {
            trainer.initialize(new Shape(32, SEQ, VOCAB));
            model.save(ckpt, "lm");
        }
        try (Model model = lm()) {
            IOException e = assertThrows(IOException.class, () -> DjlCheckpoint.restore(model, ckpt));
            assertTrue(e.getMessage().contains("lm-0000.params has no loader state"), e.getMessage());
        }
        try (Model model = lm()) {
            assertFalse(DjlCheckpoint.restore(model, dir.resolve("none")).isPresent());
        }
    }

    // ---- helpers -----------------------------------------------------------------------------

    /** A bigram language model: one-hot tokens into a hidden layer, then logits over the vocabulary. */
    private static Model lm() {
        Model m = Model.newInstance("lm");
        m.setBlock(new SequentialBlock().add(Linear.builder().setUnits(32).build()).add(Linear.builder().setUnits(VOCAB).build()));
        return m;
    }

    private static DefaultTrainingConfig config(float lr) {
        return new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                .optOptimizer(Optimizer.sgd().setLearningRateTracker(Tracker.fixed(lr)).build())
                .optDevices(new Device[] {Device.cpu()});
    }

    /** One training step of the language model on a batch of windows; its loss. */
    private static float step(Trainer trainer, Batch b) {
        float value;
        try (GradientCollector gc = trainer.newGradientCollector()) {
            NDList x = new NDList(b.getData().head().oneHot(VOCAB));
            NDArray logits = trainer.forward(x).singletonOrThrow().reshape(-1, VOCAB); // one row per position
            NDArray loss = trainer.getLoss().evaluate(new NDList(b.getLabels().head().reshape(-1)), new NDList(logits));
            gc.backward(loss);
            value = loss.getFloat();
        }
        trainer.step();
        return value;
    }

    private static float meanLoss(Trainer trainer, StokerDataset data) throws Exception {
        float sum = 0;
        int n = 0;
        for (Batch b : trainer.iterateDataset(data)) {
            sum += trainer.getLoss().evaluate(b.getLabels(), trainer.evaluate(b.getData())).getFloat();
            n++;
            b.close();
        }
        return sum / n;
    }

    /** Each batch's fields, hashed in schema order, over {@code epochs} epochs of a plain loader. */
    private static List<String> digests(LoaderBuilder builder, int epochs) {
        List<String> out = new ArrayList<>();
        try (Loader loader = builder.build()) {
            for (int e = 0; e < epochs; e++) {
                for (dev.stoker.Batch b : loader) {
                    MessageDigest md = dev.stoker.testing.Digests.sha256();
                    for (int f = 0; f < b.schema().size(); f++) {
                        md.update(b.data(f).asSlice(0, b.byteSize(f)).toArray(ValueLayout.JAVA_BYTE));
                    }
                    out.add(HexFormat.of().formatHex(md.digest()));
                }
            }
        }
        return out;
    }

    /** The same, of the arrays DJL's trainer gets from a {@link StokerDataset} of the same options. */
    private static List<String> djlDigests(LoaderBuilder builder, int epochs) throws Exception {
        List<String> out = new ArrayList<>();
        try (StokerDataset data = StokerDataset.builder(builder).build();
             Model model = Model.newInstance("id")) {
            model.setBlock(Blocks.identityBlock());
            try (Trainer trainer = model.newTrainer(config(0.1f))) {
                for (int e = 0; e < epochs; e++) {
                    for (Batch b : trainer.iterateDataset(data)) {
                        out.add(digest(b));
                        b.close();
                    }
                }
            }
        }
        return out;
    }

    /** Data then labels, each array's bytes: the schema's order for (image, label) and (x, y). */
    private static String digest(Batch b) {
        MessageDigest md = dev.stoker.testing.Digests.sha256();
        for (NDArray a : b.getData()) {
            md.update(a.toByteArray());
        }
        for (NDArray a : b.getLabels()) {
            md.update(a.toByteArray());
        }
        return HexFormat.of().formatHex(md.digest());
    }

    private static long workers() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("stoker-worker-")).count();
    }
}
