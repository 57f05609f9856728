package dev.stoker.cli;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * When the command started, as its user counts: from the launcher's start ({@code ./stoker}
 * exports {@code STOKER_STARTED_AT_NS}, epoch nanoseconds, before it checks the build and starts
 * the JVM; a build it had to make first is not counted), else from the JVM's start.
 * {@code bench} reports its first batch from here, so that starting the JVM and opening, listing
 * and indexing the data are counted.
 */
final class CommandClock {
    private static volatile long started = System.nanoTime();
    private static final AtomicBoolean claimed = new AtomicBoolean();

    private CommandClock() {
    }

    /** A command run in this JVM starts now (the tests' commands, run in one JVM). */
    static void beginNow() {
        begin(System.nanoTime());
    }

    /** The process's command started when the launcher, or else the JVM, did. */
    static void beginAtLaunch() {
        long nowNanos = System.nanoTime();
        Instant now = Instant.now();
        long nowEpochNs = now.getEpochSecond() * 1_000_000_000L + now.getNano();
        long launched = -1;
        String env = System.getenv("STOKER_STARTED_AT_NS");
        if (env != null) {
            try {
                launched = Long.parseLong(env.strip());
            } catch (NumberFormatException e) {
                launched = -1;
            }
        }
        long jvm = ProcessHandle.current().info().startInstant()
                .map(i -> i.getEpochSecond() * 1_000_000_000L + i.getNano()).orElse(nowEpochNs);
        // the launcher starts the JVM at once: an older value came from another command's launcher
        if (launched <= 0 || launched > nowEpochNs || launched < jvm - 10_000_000_000L) {
            launched = jvm;
        }
        begin(nowNanos - Math.max(0, nowEpochNs - launched));
    }

    private static void begin(long nanoTime) {
        started = nanoTime;
        claimed.set(false);
    }

    /**
     * The command's start on {@link System#nanoTime()}'s clock, for its first loader run; -1 for
     * any later run of the same command (a sweep's), whose data was opened for the first.
     */
    static long claimForFirstRun() {
        return claimed.compareAndSet(false, true) ? started : -1;
    }
}
