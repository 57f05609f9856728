package dev.stoker.djl;

import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.training.dataset.Batch;
import ai.djl.training.dataset.Dataset;
import ai.djl.util.Progress;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.LoaderState;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * A DJL {@link Dataset} fed by a Stoker {@link Loader}: each {@link #getData} pass is the loader's
 * next pass, and each batch a {@link StokerBatch} whose arrays are the Stoker batch's memory.
 *
 * <pre>{@code
 * LoaderBuilder images = Loader.builder(new ImageFolder(root), pipeline.transform(), pipeline.collator())
 *         .batchSize(256).shuffle().seed(7);
 * try (StokerDataset data = StokerDataset.builder(images).build()) {
 *     EasyTrain.fit(trainer, epochs, data, null);
 * }
 * }</pre>
 *
 * <p>Fields named {@code label}, {@code labels}, {@code y}, {@code target} or {@code targets}
 * become the batch's labels and every other field its data, in schema order, unless
 * {@link Builder#data} and {@link Builder#labels} say otherwise: images give
 * {@code (image, label)} and token windows {@code (x, y)}.
 *
 * <p>A batch is leased until it is closed (NOTE [Leased batches]); everything here is called from
 * the training thread, as DJL's loops do.
 */
public final class StokerDataset implements Dataset, AutoCloseable {
    private final Loader loader;
    private final Columns columns;
    private final int holds;
    /** The batches handed out and not yet closed: at most {@link #holds}. */
    private final List<StokerBatch> open = new ArrayList<>();
    /** The pass {@link #prepare} started, for the next {@link #getData} iterator to take. */
    private Iterator<dev.stoker.Batch> started;
    private boolean closed;

    private StokerDataset(Loader loader, Columns columns, int holds) {
        this.loader = loader;
        this.columns = columns;
        this.holds = holds;
    }

    /** A dataset over the loader {@code loader} describes (the builder sets its {@code holds}). */
    public static Builder builder(LoaderBuilder loader) {
        return new Builder(loader);
    }

    // NOTE [Leased batches]: a batch's arrays are its memory in the loader's pool, so the memory
    // must not go back before the arrays are closed. The loader is built with holds(n): a batch
    // goes back only by its close() (StokerBatch.close, after DJL closed the arrays), never
    // implicitly by the next next(); asking for a batch while n are open is an error that says
    // so, rather than a refilled buffer under live arrays. A new pass while batches of the last
    // one are open is refused for the same reason, and close() closes the open batches' arrays
    // before it frees the pool: an array used afterwards fails in DJL ("released"), it does not
    // read freed memory.

    /**
     * The next pass of the loader: the rest of the current epoch, or the next epoch once it is
     * done. A pass abandoned part-way (a {@code break}) is continued by the next one, as Stoker's
     * own iterator is.
     *
     * @throws IllegalStateException on the iterator, if batches of the last pass are still open
     */
    @Override
    public Iterable<Batch> getData(NDManager manager) {
        Objects.requireNonNull(manager, "manager");
        return () -> new Pass(manager);
    }

    /**
     * Starts the loader's next pass and waits for its first batch, so that training starts on a
     * full prefetch window; the next {@link #getData} iterator continues it. Idempotent.
     */
    @Override
    public void prepare(Progress progress) {
        checkOpen();
        if (started != null) {
            return;
        }
        if (progress != null) {
            progress.reset("Stoker: first batch of epoch " + loader.epoch(), 1);
        }
        checkNoneOpen();
        Iterator<dev.stoker.Batch> it = loader.iterator();
        it.hasNext();
        started = it;
        if (progress != null) {
            progress.increment(1);
            progress.end();
        }
    }

    /** The loader behind this dataset: its statistics, epoch and tuning. */
    public Loader loader() {
        return loader;
    }

    /** The fields that become each batch's data, in order. */
    public List<String> dataFields() {
        return columns.dataNames();
    }

    /** The fields that become each batch's labels, in order. */
    public List<String> labelFields() {
        return columns.labelNames();
    }

    /** The loader's position after the last batch handed out (call it between steps). */
    public LoaderState state() {
        checkOpen();
        return loader.state();
    }

    /**
     * Writes {@link #state()} to {@code file} as JSON, whole or not at all ({@link LoaderState#write});
     * {@link LoaderState#read} reads it back for {@link LoaderBuilder#resume}. {@link DjlCheckpoint}
     * writes it next to a model's parameters.
     */
    public void saveState(Path file) throws IOException {
        state().write(file);
    }

    /** Closes the open batches' arrays, then the loader (its workers and its memory). Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (StokerBatch b : new ArrayList<>(open)) {
                b.close();
            }
        } finally {
            open.clear();
            started = null;
            loader.close();
        }
    }

    /** A batch closed: its memory goes back to the loader. */
    void released(StokerBatch batch, dev.stoker.Batch source) {
        open.remove(batch);
        source.close();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the dataset is closed");
        }
    }

    private void checkNoneOpen() {
        if (!open.isEmpty()) {
            throw new IllegalStateException(open.size() + " batch(es) of the last pass are still open: close each "
                    + "batch (EasyTrain.fit does, after the step) before the next pass reuses their memory");
        }
    }

    /** One pass: Stoker batches in, DJL batches out. */
    private final class Pass implements Iterator<Batch> {
        private final NDManager manager;
        private final Iterator<dev.stoker.Batch> batches;
        private final long total;

        Pass(NDManager manager) {
            checkOpen();
            this.manager = manager;
            if (started != null) {
                this.batches = started;
                started = null;
            } else {
                checkNoneOpen();
                this.batches = loader.iterator();
            }
            this.total = loader.batches();
        }

        @Override
        public boolean hasNext() {
            checkOpen();
            return batches.hasNext();
        }

        @Override
        public Batch next() {
            checkOpen();
            if (open.size() >= holds) {
                throw new IllegalStateException(open.size() + " batches are open, as many as the dataset holds ("
                        + "StokerDataset.Builder.holds): close each batch after its step (EasyTrain.fit does)");
            }
            if (!batches.hasNext()) {
                throw new NoSuchElementException("the pass is over");
            }
            dev.stoker.Batch b = batches.next();
            NDManager sub = manager.newSubManager();
            StokerBatch out;
            try {
                NDList data = columns.data(sub, b);
                NDList labels = columns.labels(sub, b);
                out = new StokerBatch(StokerDataset.this, sub, data, labels, b, total);
            } catch (RuntimeException | Error e) {
                sub.close();
                b.close();
                throw e;
            }
            open.add(out);
            return out;
        }
    }

    /** Builds a {@link StokerDataset}: which fields are data and which labels, and how many batches may be open. */
    public static final class Builder {
        private final LoaderBuilder loader;
        private List<String> data;
        private List<String> labels;
        private int holds = 2;

        private Builder(LoaderBuilder loader) {
            this.loader = Objects.requireNonNull(loader, "loader");
        }

        /** The fields that become the batch's data, in this order (default: every field not a label). */
        public Builder data(String... fields) {
            this.data = List.of(fields);
            return this;
        }

        /** The fields that become the batch's labels, in this order (default: those named as labels are). */
        public Builder labels(String... fields) {
            this.labels = List.of(fields);
            return this;
        }

        /**
         * Batches the training loop may hold open at once (default 2: the one training, and one
         * more for a loop that fetches the next before it closes the last). Each is a buffer of
         * the loader's pool on top of its prefetch window.
         */
        public Builder holds(int batches) {
            if (batches < 1) {
                throw new IllegalArgumentException("holds must be >= 1, got " + batches);
            }
            this.holds = batches;
            return this;
        }

        /**
         * The dataset, with its loader built (every option checked now, a {@code resume} state
         * included).
         *
         * @throws IllegalArgumentException for a field DJL cannot hold, or one named that the
         *                                  batches do not have
         */
        public StokerDataset build() {
            Columns columns = Columns.of(loader.schema(), data, labels);
            return new StokerDataset(loader.holds(holds).build(), columns, holds);
        }
    }
}
