package dev.stoker.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code stoker wheel OUT_DIR}: the self-contained Python wheel. It is built by the launcher of a
 * checkout ({@code ./stoker wheel}, bin/wheel.sh), which answers before the JVM starts; this
 * command is what an installed Stoker says when asked for it, and the line {@code stoker --help}
 * lists.
 */
@Command(name = "wheel", description = "Builds the self-contained Python wheel (Stoker, a Java runtime and its native libraries) "
        + "into OUT_DIR; from a checkout of Stoker: ./stoker wheel OUT_DIR [--arch x86_64|aarch64].")
final class WheelCommand implements Callable<Integer> {
    @Parameters(paramLabel = "ARGS", arity = "0..*", description = "OUT_DIR and the launcher's options.")
    List<String> args;

    @Override
    public Integer call() {
        throw new Main.UsageException("wheel is built from a checkout of Stoker, by its launcher: ./stoker wheel OUT_DIR");
    }
}
