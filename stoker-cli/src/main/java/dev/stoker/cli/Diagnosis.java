package dev.stoker.cli;

import dev.stoker.LoaderStats;
import java.util.Locale;

/**
 * Plain words under a bench run: what bounded throughput, by how much, and what would help,
 * from the stage times the loader measured.
 */
final class Diagnosis {
    private Diagnosis() {
    }

    static String of(LoaderStats s, int workers, double seconds, double stepMs, int cores) {
        if (s.samples() == 0 || seconds <= 0) {
            return "nothing was delivered";
        }
        double rate = s.samples() / seconds;
        double wait = Math.min(1, s.waitNanos() / 1e9 / seconds);
        double fetch = s.fetchNanos() / 1e9;
        double transform = s.transformNanos() / 1e9;
        double collate = s.collateNanos() / 1e9;
        double work = fetch + transform + collate;
        String stage = fetch >= transform && fetch >= collate ? "reading (fetch)"
                : transform >= collate ? "decoding and transforming" : "collating into batches";
        double share = work > 0 ? Math.max(fetch, Math.max(transform, collate)) / work : 0;
        if (stepMs > 0 && wait < 0.05) {
            return String.format(Locale.ROOT, "the loader keeps up: the consumer waited %.1f%% of the time; the %.3g ms step "
                    + "bounds throughput", 100 * wait, stepMs);
        }
        double perSample = work / s.samples(); // worker-seconds per sample
        double demand = stepMs > 0 ? 1000.0 * s.samples() / s.batches() / stepMs : Double.MAX_VALUE;
        if (workers == 0) {
            double projected = Math.min(Math.min(cores, 2) / perSample, demand);
            return String.format(Locale.ROOT, "loading runs on the consumer's thread, so every step waits for it (%s takes "
                    + "%.0f%% of it); with %d workers loading ahead, about %s samples/s (%.1fx)", stage, 100 * share,
                    Math.min(cores, 2), BenchRunner.grouped(projected), projected / rate);
        }
        double capacity = workers / perSample;
        if (stepMs <= 0 && capacity > 3 * rate) {
            return String.format(Locale.ROOT, "the hand-off bounds this run, not the work: the workers could make about %s "
                    + "samples/s; larger batches amortise it", BenchRunner.grouped(capacity));
        }
        if (workers < cores) {
            double projected = Math.min(cores / perSample, demand);
            return String.format(Locale.ROOT, "the workers bound throughput (%s: %.0f%% of their time); %d cores allow %d "
                    + "workers: about %s samples/s (%.1fx)", stage, 100 * share, cores, cores, BenchRunner.grouped(projected),
                    projected / rate);
        }
        return String.format(Locale.ROOT, "CPU-bound on %d cores: %s takes %.0f%% of the workers' time (%s a sample); "
                + "a cheaper format or decoder for it, or more cores, would help; more workers would not", cores, stage,
                100 * share, perSample >= 1e-4 ? String.format(Locale.ROOT, "%.2f ms", 1e3 * perSample)
                        : String.format(Locale.ROOT, "%.2f us", 1e6 * perSample));
    }
}
