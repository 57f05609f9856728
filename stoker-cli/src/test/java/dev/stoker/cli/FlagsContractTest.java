package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.stoker.sources.Specs;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code stoker bench SOURCE} only maps flags to specs: each source's flags are its spec's options
 * and the loader spec's, dashed, besides the bench loop's own and the few named here.
 */
class FlagsContractTest {
    /** The bench loop's own flags (and help), which are no spec's. */
    private static final Set<String> BENCH = Set.of("--json", "--digest", "--no-digest", "--digests", "--ids", "--stop-after",
            "--save-state", "--resume", "--plot", "--trace", "--steps", "--step-ms", "--epochs", "--help", "--version",
            "--debug", "--batch");

    /** Flags that are another option's value, or a measurement of the bench's. */
    private static final Set<String> OTHERS = Set.of("--skip-bad", "--ceiling", "--dataset");

    /** The caches' earlier names, each a second name of the flag named by what the cache keeps (as Python's aliases). */
    private static final Map<String, String> EARLIER = Map.of("--cache", "--image-cache", "--cache-max-side", "--image-cache-max-side",
            "--cache-bytes", "--image-cache-bytes", "--cache-dir", "--shard-cache", "--cache-size", "--shard-cache-bytes",
            "--cache-mb", "--decoded-cache-mb");

    @Test
    void eachSourcesFlagsAreItsSpecsOptions() {
        for (String kind : Specs.kinds()) {
            CommandLine cl = Main.commands(new Main(), "bench", kind).getSubcommands().get("bench").getSubcommands().get(kind);
            Set<String> flags = new TreeSet<>();
            cl.getCommandSpec().options().forEach(o -> flags.addAll(Set.of(o.names())));
            flags.removeAll(BENCH);
            flags.removeAll(OTHERS);
            for (var e : EARLIER.entrySet()) {
                if (flags.remove(e.getKey())) {
                    assertSame(cl.getCommandSpec().findOption(e.getValue()), cl.getCommandSpec().findOption(e.getKey()), e.getKey());
                }
            }
            Set<String> specs = new TreeSet<>();
            Specs.loaderOptions().forEach(o -> specs.add(Main.flag(o)));
            Specs.options(kind).keySet().stream().filter(o -> !o.equals("path") && !o.equals("paths"))
                    .forEach(o -> specs.add(Main.flag(o)));
            assertEquals(specs, flags, "stoker bench " + kind);
        }
    }
}
