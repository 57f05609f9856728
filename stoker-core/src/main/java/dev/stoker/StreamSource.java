package dev.stoker;

/** What a loader reads from a {@link StreamingDataset}: shards of samples, a transform, a collator. */
final class StreamSource<T, R> {
    final StreamingDataset<T> dataset;
    final Transform<? super T, ? extends R> transform;
    final Collator<? super R> collator;
    final Schema schema;

    StreamSource(StreamingDataset<T> dataset, Transform<? super T, ? extends R> transform, Collator<? super R> collator) {
        this.dataset = java.util.Objects.requireNonNull(dataset, "dataset");
        this.transform = transform;
        this.collator = java.util.Objects.requireNonNull(collator, "collator");
        this.schema = java.util.Objects.requireNonNull(collator.schema(), "collator schema");
        if (dataset.shards() < 0) {
            throw new IllegalArgumentException(dataset.name() + ": negative shard count " + dataset.shards());
        }
    }

    int shards() {
        return dataset.shards();
    }

    String name() {
        return dataset.name();
    }

    @SuppressWarnings("unchecked")
    R transform(T sample, SampleContext context) throws Exception {
        return transform == null ? (R) sample : transform.apply(sample, context);
    }

    @SuppressWarnings("unchecked")
    void collate(Object sample, Row row) throws Exception {
        collator.write((R) sample, row);
    }

    /** The index a batch reports for sample {@code offset} of shard {@code shard}. */
    static long sampleIndex(int shard, long offset) {
        return ((long) shard << 40) | offset;
    }
}
