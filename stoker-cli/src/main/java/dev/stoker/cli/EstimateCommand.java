package dev.stoker.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code stoker estimate}: how long a training run takes, whether the loader holds it back, and
 * what that costs. Amounts take suffixes K, M, B (or G), T.
 */
@Command(name = "estimate", description = "Training time from the data to consume, the step size and rate, and the loader's "
        + "throughput: whether the loader is the bottleneck, and what the gap costs.")
final class EstimateCommand implements Callable<Integer> {
    @Option(names = "--tokens", paramLabel = "N", description = "Tokens to train on (e.g. 100B).")
    String tokens;

    @Option(names = "--samples", paramLabel = "N", description = "Samples to train on (instead of --tokens).")
    String samples;

    @Option(names = {"--per-step", "--tokens-per-step", "--samples-per-step"}, paramLabel = "N",
            description = "Tokens (or samples) consumed by one step (e.g. 1M).")
    String perStep;

    @Option(names = "--steps-per-sec", paramLabel = "R", description = "The accelerator's step rate.")
    Double stepsPerSec;

    @Option(names = "--loader", paramLabel = "R", description = "The loader's throughput, tokens (or samples) per second (e.g. 500K).")
    String loader;

    @Option(names = "--bench", paramLabel = "FILE", description = "Take the loader's throughput from `stoker bench --json` output "
            + "(the best configuration: tokensPerSec, else samplesPerSec).")
    Path bench;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        if ((tokens == null) == (samples == null)) {
            throw new Main.UsageException("give one of --tokens or --samples (or `stoker estimate cache SHARD...`: the "
                    + "image cache's size and speed-up)");
        }
        if (perStep == null || stepsPerSec == null) {
            throw new Main.UsageException("give --per-step and --steps-per-sec");
        }
        String unit = tokens != null ? "tokens" : "samples";
        double total = amount(tokens != null ? tokens : samples, tokens != null ? "--tokens" : "--samples");
        double step = amount(perStep, "--per-step");
        if (!(stepsPerSec > 0)) {
            throw new Main.UsageException("--steps-per-sec must be positive");
        }
        Double loaderRate = null;
        if (loader != null && bench != null) {
            throw new Main.UsageException("give --loader or --bench, not both");
        }
        if (loader != null) {
            loaderRate = amount(loader, "--loader");
        } else if (bench != null) {
            loaderRate = fromBench(bench, unit);
        }
        double demand = step * stepsPerSec;
        double ideal = total / demand;
        PrintWriter o = spec.commandLine().getOut();
        o.printf(Locale.ROOT, "%s %s at %s %s/step and %.3g steps/s: the accelerator consumes %s %s/s%n",
                human(total), unit, human(step), unit, stepsPerSec, human(demand), unit);
        o.printf(Locale.ROOT, "training time with data always ready: %s%n", duration(ideal));
        if (loaderRate != null) {
            if (!(loaderRate > 0)) {
                throw new Main.UsageException("the loader's throughput must be positive");
            }
            double overlapped = total / Math.min(demand, loaderRate);
            double serial = total / demand + total / loaderRate;
            o.printf(Locale.ROOT, "with the loader at %s %s/s:%n", human(loaderRate), unit);
            o.printf(Locale.ROOT, "  loading on the training thread (each step waits for its data): %s (%.2fx the ideal)%n",
                    duration(serial), serial / ideal);
            o.printf(Locale.ROOT, "  loading ahead in parallel (prefetch):                          %s (%.2fx the ideal)%n",
                    duration(overlapped), overlapped / ideal);
            if (loaderRate < demand) {
                o.printf(Locale.ROOT, "the loader is the bottleneck: even ahead, the accelerator waits %.0f%% of the time, "
                        + "which costs %s; the loader needs %.2fx its throughput%n",
                        100 * (1 - loaderRate / demand), duration(overlapped - ideal), demand / loaderRate);
            } else {
                o.printf(Locale.ROOT, "the loader keeps up when it loads ahead (%.2fx to spare); on the training thread "
                        + "it costs %s%n", loaderRate / demand, duration(serial - ideal));
            }
        }
        o.flush();
        return 0;
    }

    static double amount(String s, String option) {
        String t = s.trim().toUpperCase(Locale.ROOT).replace("_", "").replace(",", "");
        double mult = 1;
        if (!t.isEmpty()) {
            switch (t.charAt(t.length() - 1)) {
                case 'K' -> mult = 1e3;
                case 'M' -> mult = 1e6;
                case 'B', 'G' -> mult = 1e9;
                case 'T' -> mult = 1e12;
                default -> { }
            }
            if (mult != 1) {
                t = t.substring(0, t.length() - 1);
            }
        }
        try {
            double v = Double.parseDouble(t) * mult;
            if (!(v > 0) || Double.isInfinite(v)) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new Main.UsageException(option + " takes a positive amount such as 100B, 1M or 0.5; got '" + s + "'");
        }
    }

    private static double fromBench(Path file, String unit) throws IOException {
        double best = -1;
        JsonFactory f = new JsonFactory();
        for (String line : Files.readAllLines(file)) {
            if (line.isBlank()) {
                continue;
            }
            double tokensPerSec = -1;
            double samplesPerSec = -1;
            try (JsonParser p = f.createParser(line)) {
                if (p.nextToken() != JsonToken.START_OBJECT) {
                    continue;
                }
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    JsonToken t = p.nextToken();
                    if (name.equals("tokensPerSec") && t.isNumeric()) {
                        tokensPerSec = p.getDoubleValue();
                    } else if (name.equals("samplesPerSec") && t.isNumeric()) {
                        samplesPerSec = p.getDoubleValue();
                    } else {
                        p.skipChildren();
                    }
                }
            } catch (IOException e) {
                throw new Main.BadDataException(file + ": not `stoker bench --json` output: " + e.getMessage(), e);
            }
            best = Math.max(best, unit.equals("tokens") ? tokensPerSec : samplesPerSec);
        }
        if (best <= 0) {
            throw new Main.BadDataException(file + ": no " + (unit.equals("tokens") ? "tokensPerSec" : "samplesPerSec")
                    + " in it (for tokens, bench a token source)", null);
        }
        return best;
    }

    static String human(double v) {
        String[] units = {"", "K", "M", "B", "T"};
        int u = 0;
        while (Math.abs(v) >= 1000 && u < units.length - 1) {
            v /= 1000;
            u++;
        }
        return String.format(Locale.ROOT, v >= 100 || v == Math.rint(v) ? "%.0f%s" : "%.3g%s", v, units[u]);
    }

    static String duration(double seconds) {
        if (seconds >= 86400) {
            return String.format(Locale.ROOT, "%.1f days", seconds / 86400);
        }
        if (seconds >= 3600) {
            return String.format(Locale.ROOT, "%.1f hours", seconds / 3600);
        }
        if (seconds >= 60) {
            return String.format(Locale.ROOT, "%.1f minutes", seconds / 60);
        }
        return String.format(Locale.ROOT, "%.1f seconds", seconds);
    }
}
