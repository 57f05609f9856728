package dev.stoker;

import java.util.Objects;

/**
 * What the loader reads: a sample index in, a written batch row out, with the time each stage
 * took added to the worker's counters. Two shapes: fetch, transform and collate an object; or
 * write directly (a {@link DirectDataset}).
 */
abstract class RowSource {
    abstract long size();

    abstract Schema schema();

    abstract String name();

    /** True when {@link #load} adds its own stage times; otherwise the loader times it as fetch. */
    abstract boolean timesStages();

    abstract void load(long index, Row row, SampleContext context, StageTimes times) throws Exception;

    /** The dataset's content fingerprint (see {@link Dataset#fingerprint}). */
    abstract long fingerprint();

    /** Shards the dataset left out when it was opened (see {@link Dataset#shardsLeftOut}). */
    long shardsLeftOut() {
        return 0;
    }

    /** Passes {@link DirectDataset#willStack} on to a dataset that writes directly. */
    void willStack(java.util.List<String> fields) {
    }

    /** True when {@link #loadAll} may write a whole batch at once. */
    boolean readsBatches() {
        return false;
    }

    /** Writes the samples {@code indices[0, count)} (see {@link DirectDataset#readAll}). */
    boolean loadAll(long[] indices, int count, Row row) throws Exception {
        return false;
    }

    static <T, R> RowSource of(Dataset<T> dataset, Transform<? super T, ? extends R> transform, Collator<? super R> collator) {
        return new Transformed<>(dataset, transform, collator);
    }

    static RowSource of(DirectDataset dataset) {
        return new Direct(dataset);
    }

    private static final class Transformed<T, R> extends RowSource {
        private final Dataset<T> dataset;
        private final Transform<? super T, ? extends R> transform;
        private final Collator<? super R> collator;
        private final Schema schema;

        Transformed(Dataset<T> dataset, Transform<? super T, ? extends R> transform, Collator<? super R> collator) {
            this.dataset = Objects.requireNonNull(dataset, "dataset");
            this.transform = transform;
            this.collator = Objects.requireNonNull(collator, "collator");
            this.schema = Objects.requireNonNull(collator.schema(), "collator schema");
        }

        @Override
        long size() {
            return dataset.size();
        }

        @Override
        Schema schema() {
            return schema;
        }

        @Override
        String name() {
            return dataset.name();
        }


        @Override
        boolean timesStages() {
            return true;
        }

        @Override
        long shardsLeftOut() {
            return dataset.shardsLeftOut();
        }

        @Override
        long fingerprint() {
            return dataset.fingerprint();
        }

        @Override
        @SuppressWarnings("unchecked")
        void load(long index, Row row, SampleContext context, StageTimes times) throws Exception {
            long t0 = System.nanoTime();
            T sample = dataset.get(index);
            long t1 = System.nanoTime();
            times.fetch += t1 - t0;
            R out;
            if (transform == null) {
                out = (R) sample;
            } else {
                out = transform.apply(sample, context);
                long t2 = System.nanoTime();
                times.transform += t2 - t1;
                t1 = t2;
            }
            collator.write(out, row);
            times.collate += System.nanoTime() - t1;
        }
    }

    private static final class Direct extends RowSource {
        private final DirectDataset dataset;
        /** Every field a tensor, and the dataset has not yet said it writes one sample at a time. */
        private boolean batches;

        Direct(DirectDataset dataset) {
            this.dataset = Objects.requireNonNull(dataset, "dataset");
            this.batches = dataset.schema().fields().stream().noneMatch(Field::isVariable);
        }

        @Override
        long size() {
            return dataset.size();
        }

        @Override
        Schema schema() {
            return dataset.schema();
        }

        @Override
        String name() {
            return dataset.name();
        }

        @Override
        void willStack(java.util.List<String> fields) {
            dataset.willStack(fields);
        }

        @Override
        boolean timesStages() {
            return false;
        }

        @Override
        void load(long index, Row row, SampleContext context, StageTimes times) throws Exception {
            dataset.read(index, row);
        }

        @Override
        boolean readsBatches() {
            return batches;
        }

        @Override
        long shardsLeftOut() {
            return dataset.shardsLeftOut();
        }

        @Override
        long fingerprint() {
            return dataset.fingerprint();
        }

        @Override
        boolean loadAll(long[] indices, int count, Row row) throws Exception {
            if (dataset.readAll(indices, 0, count, row)) {
                return true;
            }
            batches = false; // a plain write, read by every worker sooner or later: asking again is only wasted
            return false;
        }
    }
}
