package dev.stoker.spark;

import java.nio.file.Path;
import java.util.List;

/**
 * What a Spark job published: its shards in order, what they hold (documents or samples, tokens,
 * records skipped), their bytes, the job's seconds, and its manifest, written last.
 */
public record Published(List<Path> shards, long count, long tokens, long skipped, long bytes, double seconds,
                        Path manifest) {
    /** Tokens written per second of the job (0 for shards of samples, or a job of no time). */
    public double tokensPerSecond() {
        return seconds == 0 ? 0 : tokens / seconds;
    }
}
