package dev.stoker.cli;

import dev.stoker.SyntheticDataset;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code stoker bench SOURCE ...}: runs a loader over a source and reports what it measured. */
@Command(name = "bench", description = "Run a loader over a source and report throughput, wait and stage times.",
        subcommands = {BenchCommand.Synthetic.class})
final class BenchCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a source is needed (for example: synthetic)");
    }

    @Command(name = "synthetic", description = "N samples whose bytes are a pure function of the sample index.")
    static final class Synthetic implements java.util.concurrent.Callable<Integer> {
        @Option(names = "--samples", defaultValue = "1000000", description = "Samples (default ${DEFAULT-VALUE}).")
        long samples;

        @Option(names = "--sample-bytes", defaultValue = "64", description = "Bytes per sample (default ${DEFAULT-VALUE}).")
        int sampleBytes;

        @Option(names = "--work-us", defaultValue = "0", description = "CPU microseconds spent per sample, like a decoder (default ${DEFAULT-VALUE}).")
        double workUs;

        @Mixin
        BenchOptions options;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            if (samples < 0 || sampleBytes < 1 || workUs < 0) {
                throw new Main.UsageException("--samples must be >= 0, --sample-bytes >= 1 and --work-us >= 0");
            }
            SyntheticDataset data = new SyntheticDataset(samples, sampleBytes, Math.round(workUs * 1000));
            return new BenchRunner(options, spec.commandLine().getOut(), "synthetic", 0)
                    .run(() -> dev.stoker.Loader.builder(data));
        }
    }
}
