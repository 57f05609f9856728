package dev.stoker;

/**
 * A per-sample stage between fetching a sample and collating it: decode, augment, tokenize.
 * Called on worker threads; must be safe to call concurrently. Random choices must come from
 * {@link SampleContext#seed()}, so that results do not depend on which worker ran them.
 */
@FunctionalInterface
public interface Transform<T, R> {

    R apply(T sample, SampleContext context) throws Exception;
}
