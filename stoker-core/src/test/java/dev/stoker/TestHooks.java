package dev.stoker;

/** What the engine's tests set and users may not: the builder's package-private fields. */
final class TestHooks {
    private TestHooks() {
    }

    /** A streaming pass with workers always (true) or never (false) collates on a thread of its own; null: decided while running. */
    static LoaderBuilder collatorThread(LoaderBuilder b, Boolean always) {
        b.collatorThread = always;
        return b;
    }

    /** {@code n} batches ahead, or a stream's shards ahead, where it applies: with workers. */
    /** The builder, shuffled or in order, and with its short last batch dropped or kept, as a case says. */
    static LoaderBuilder order(LoaderBuilder b, boolean shuffle, boolean dropLast) {
        b.sampler(shuffle ? Sampler.shuffle() : Sampler.sequential());
        return dropLast ? b.dropLast() : b;
    }

    static LoaderBuilder ahead(LoaderBuilder b, int workers, int n) {
        if (workers == 0) {
            return b;
        }
        return b.streams() ? b.shardsAhead(n) : b.prefetch(n);
    }

    /** Batch buffers the loader has made so far (NOTE [Holding batches]: those of held batches as they are held). */
    static int madeBuffers(Loader l) {
        return l.madeBuffers();
    }
}
