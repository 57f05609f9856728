package dev.stoker;

/** One pass of a loader over (the rest of) an epoch; iterating it is iterating the loader. */
abstract class Pass implements Batches {
    /** Workers numbered below this take work; the others wait (NOTE [Autotune] in Tuner). */
    volatile int active = Integer.MAX_VALUE;

    abstract void start();

    abstract boolean finished();

    /** Where the loader stands now: the position after the last batch delivered. */
    abstract LoaderState state();

    /** Batches this pass delivers in all, or -1 when that is not known in advance. */
    abstract long batches();

    /**
     * Stops the workers and waits for them; the pass can not be continued afterwards. False when
     * a worker did not end (closing only: stuck in a read that ignores interrupts).
     */
    abstract boolean stop(boolean closing);

    /** The consumer gives a batch back before the next call would. */
    abstract void release(Batch b);

    abstract WorkerCounters[] counters();

    /** Positions below this may be worked on now. */
    abstract long windowEnd();

    abstract boolean cancelled();

    /** The workers' busy time (fetch, transform, collate) in this pass, summed. */
    static long busyNanos(PassWorker[] workers) {
        long n = 0;
        for (PassWorker w : workers) {
            n += w.fetchNanos + w.transformNanos + w.collateNanos;
        }
        return n;
    }

    /** The workers' time blocked at the end of the prefetch window in this pass, summed. */
    static long blockedNanos(PassWorker[] workers) {
        long n = 0;
        for (PassWorker w : workers) {
            n += w.blockedNanos;
        }
        return n;
    }

    /**
     * A failure in words: an I/O error's or a refused argument's own message (it names what
     * failed; a class name adds nothing for a reader; a codec's failure is put in words where it
     * is read, NOTE [Codec errors] in the formats' Compression); anything else (a bug's
     * exception) with its class, which is then the most telling part.
     */
    static String describe(Throwable e) {
        String m = e.getMessage();
        if (m == null) {
            return e instanceof java.io.EOFException ? "the data ends too early (cut short?)" : e.getClass().getSimpleName();
        }
        if (e instanceof java.io.IOException || e instanceof IllegalArgumentException) {
            return m; // what failed, or a sample the code refuses, in words: no class name for the user
        }
        return e.getClass().getSimpleName() + ": " + m;
    }

    /**
     * {@link #describe(Throwable)} for a message that already names {@code resource}: a wrapper
     * whose message is only its cause ({@code new RuntimeException(cause)}, an
     * {@code UncheckedIOException}) gives way to the cause, and a leading {@code resource: } is
     * not said twice.
     */
    static String describe(Throwable e, String resource) {
        while (e.getCause() != null && (e instanceof java.io.UncheckedIOException
                || java.util.Objects.equals(e.getMessage(), e.getCause().toString()))) {
            e = e.getCause();
        }
        String m = describe(e);
        String prefix = resource + ": ";
        while (resource != null && !resource.isEmpty() && m.startsWith(prefix)) {
            m = m.substring(prefix.length());
        }
        return m;
    }
}
