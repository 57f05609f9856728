package dev.stoker;

/**
 * Receives the loader's spans, for a timeline of who did what when (e.g. a Chrome trace): each
 * batch a worker filled, and each wait of the consumer. Called from the worker and consumer
 * threads, so implementations must be thread-safe; they are called once per batch, never per
 * sample. Times are {@link System#nanoTime()} values.
 */
@FunctionalInterface
public interface Tracer {

    /**
     * A span on thread {@code thread}: {@code what} (e.g. "batch 17", "wait"), from {@code start}
     * to {@code end} nanoseconds; {@code fetch}, {@code transform} and {@code collate} are the
     * stage times inside it (0 when not measured).
     */
    record Span(String thread, String what, long start, long end, long fetch, long transform, long collate) {
    }

    /** Receives one span. */
    void span(Span span);
}
