package dev.stoker;

/**
 * A per-sample stage between fetching a sample and collating it: decode, augment, tokenize.
 * Called on worker threads; must be safe to call concurrently. Random choices must come from
 * {@link SampleContext#seed()}, so that results do not depend on which worker ran them.
 */
@FunctionalInterface
public interface Transform<T, R> {

    R apply(T sample, SampleContext context) throws Exception;

    /**
     * This stage, then {@code next} on its result, with the same sample context: stages compose
     * into one transform, run on one worker per sample. Two stages that both draw random numbers
     * take independent ones with {@link SampleContext#seed(long)} and a stream of their own.
     */
    default <V> Transform<T, V> andThen(Transform<? super R, ? extends V> next) {
        java.util.Objects.requireNonNull(next, "next");
        return (sample, context) -> next.apply(apply(sample, context), context);
    }

    /** The stage that hands its sample on as it is. */
    static <T> Transform<T, T> identity() {
        return (sample, context) -> sample;
    }
}
