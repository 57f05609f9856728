package dev.stoker;

/**
 * What a loader reads, one of two shapes: a dataset read by index ({@link Indexed}: a
 * {@link RowSource}, read by an {@link IndexedPass} per pass) or a stream of shards
 * ({@link Streamed}: a {@link StreamSource}, read by a {@link StreamPass}). The loader and its
 * builder hold one, and ask it rather than test which shape they hold.
 */
sealed interface Plan permits Plan.Indexed, Plan.Streamed {
    /** What an epoch orders: samples by index, or shards. */
    long positions();

    Schema schema();

    String name();

    /** The data's content fingerprint ({@link Dataset#fingerprint}). */
    long fingerprint();

    /** Shards left out when the dataset was opened (see {@link Dataset#shardsLeftOut}). */
    long shardsLeftOut();

    record Indexed(RowSource source) implements Plan {
        @Override
        public long positions() {
            return source.size();
        }

        @Override
        public Schema schema() {
            return source.schema();
        }

        @Override
        public String name() {
            return source.name();
        }

        @Override
        public long fingerprint() {
            return source.fingerprint();
        }

        @Override
        public long shardsLeftOut() {
            return source.shardsLeftOut();
        }
    }

    record Streamed(StreamSource<?, ?> stream) implements Plan {
        @Override
        public long positions() {
            return stream.shards();
        }

        @Override
        public Schema schema() {
            return stream.schema;
        }

        @Override
        public String name() {
            return stream.name();
        }

        @Override
        public long fingerprint() {
            return stream.dataset.fingerprint();
        }

        @Override
        public long shardsLeftOut() {
            return 0;
        }
    }
}
