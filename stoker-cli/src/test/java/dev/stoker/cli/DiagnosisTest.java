package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.LoaderStats;
import org.junit.jupiter.api.Test;

class DiagnosisTest {
    /** 1,000 samples in 100 batches over one second, with the given worker seconds and wait. */
    static LoaderStats stats(double fetch, double transform, double collate, double wait) {
        return new LoaderStats(100, 1000, 1000, 0, 0, (long) (fetch * 1e9), (long) (transform * 1e9), (long) (collate * 1e9),
                (long) (wait * 1e9), 1_000_000_000L, Double.NaN, Double.NaN, 0, 0);
    }

    @Test
    void aLoaderThatKeepsUpSaysTheStepBounds() {
        String d = Diagnosis.of(stats(0.5, 0, 0, 0.01), 2, 1.0, 10, 2);
        assertTrue(d.startsWith("the loader keeps up"), d);
    }

    @Test
    void loadingOnTheConsumerThreadProjectsWorkers() {
        String d = Diagnosis.of(stats(0.2, 0.6, 0.1, 0.9), 0, 1.0, 1, 2);
        assertTrue(d.contains("consumer's thread") && d.contains("decoding and transforming takes 67%")
                && d.contains("with 2 workers loading ahead"), d);
    }

    @Test
    void tooFewWorkersAndCpuBoundAreTold() {
        String few = Diagnosis.of(stats(0.9, 0, 0, 0.5), 1, 1.0, 1, 4);
        assertTrue(few.contains("4 cores allow 4 workers"), few);
        String cpu = Diagnosis.of(stats(0.3, 1.5, 0.2, 0.5), 2, 1.0, 1, 2);
        assertTrue(cpu.startsWith("CPU-bound on 2 cores: decoding and transforming takes 75%"), cpu);
    }
}
