package dev.stoker.cli;

import dev.stoker.LoaderException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code stoker} command. Exit codes: 0 success, 1 bad data (one line on stderr:
 * {@code stoker: <resource>: <what went wrong>}), 2 bad usage.
 */
@Command(name = "stoker", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Keeps accelerators fed: loads, inspects and benchmarks training data.")
public final class Main implements Runnable {
    /**
     * The command tree: each command's subcommands, in the order help lists them. Not in the
     * {@code @Command} annotations, because picocli builds a command's whole model (reflection
     * over every option) when the command is added, and a fresh JVM spends about 0.1 s doing so
     * for all of them: {@link #commands} adds only those on the command line's path.
     */
    private static final java.util.List<Class<?>> SOURCES = java.util.List.of(BenchCommand.SyntheticBench.class,
            BenchCommand.TokensBench.class, BenchCommand.JsonlBench.class, BenchCommand.ShardsBench.class,
            BenchCommand.FolderBench.class, BenchCommand.Hdf5Bench.class, BenchCommand.SqliteBench.class, BenchCommand.ParquetBench.class, BenchCommand.RootBench.class,
            RecordBenches.MdsBench.class, RecordBenches.TfRecordBench.class, RecordBenches.ArrayRecordBench.class,
            RecordBenches.ArrowBench.class, RecordBenches.LitDataBench.class, BenchCommand.ArraysBench.class);
    private static final java.util.Map<Class<?>, java.util.List<Class<?>>> TREE = java.util.Map.of(
            Main.class, java.util.List.of(DemoCommand.class, BenchCommand.class, CatCommand.class, ShowCommand.class, InspectCommand.class,
                    LsCommand.class,
                    PrepareCommand.class, EstimateCommand.class, StageCommand.class, ServeCommand.class, WheelCommand.class,
                    CommandLine.HelpCommand.class),
            BenchCommand.class, SOURCES,
            CatCommand.class, SOURCES,
            ShowCommand.class, SOURCES,
            PrepareCommand.class, java.util.List.of(PrepareCommand.Tokens.class, PrepareCommand.Shards.class),
            EstimateCommand.class, java.util.List.of(EstimateCache.class));

    @Option(names = "--debug", description = "Print stack traces of errors.", scope = CommandLine.ScopeType.INHERIT)
    boolean debug;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a command is needed");
    }

    public static void main(String[] args) {
        CommandClock.beginAtLaunch();
        System.exit(execute(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line and returns the exit code (used by tests): a command starting now. */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandClock.beginNow();
        return execute(args, out, err);
    }

    private static int execute(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = commands(new Main(), args);
        helpEverywhere(cl); // every command takes --help (and --version), as the usage hints say
        cl.setOut(out);
        cl.setErr(err);
        cl.setExitCodeExceptionMapper(Main::exitCode);
        cl.setParameterExceptionHandler((ex, a) -> {
            err.println("stoker: " + dev.stoker.storage.Locations.redact(ex.getMessage()));
            CommandLine c = ex.getCommandLine();
            err.println("usage: " + c.getCommandSpec().qualifiedName() + " --help");
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, c, parsed) -> {
            boolean debug = parsed.matchedOption("--debug") != null || hasDebug(parsed);
            Throwable t = unwrap(ex);
            if (t instanceof UsageException || t instanceof dev.stoker.sources.SpecException) {
                err.println("stoker: " + dev.stoker.storage.Locations.redact(t instanceof dev.stoker.sources.SpecException s
                        ? s.message(Main::flag) : t.getMessage()));
                err.println("usage: " + c.getCommandSpec().qualifiedName() + " --help");
                return 2;
            }
            err.println("stoker: " + dev.stoker.storage.Locations.redact(message(t)));
            if (debug) {
                t.printStackTrace(err);
            }
            err.flush();
            return exitCode(t);
        });
        // NOTE [Warnings]: what the libraries log at WARNING reaches the user as the CLI's own
        // line, "stoker: warning: ...", after the command: on success (a missing libjpeg-turbo,
        // shared memory that could not be removed), and on failure only with --debug, where the
        // error is the one line (a worker that did not stop in time while a failed run closed).
        try (Warnings warnings = new Warnings()) {
            int code = cl.execute(args);
            if (code == 0 || java.util.Arrays.asList(args).contains("--debug")) {
                for (String m : warnings.messages()) {
                    err.println("stoker: warning: " + m);
                }
                err.flush();
            }
            return code;
        }
    }

    /**
     * {@code command}'s command line with the subcommands {@code args} names, level by level (the
     * first argument that is not an option, at each level), and all of them where it names none,
     * an unknown one or {@code help}: so that usage errors and help see the whole tree.
     */
    static CommandLine commands(Object command, String... args) {
        return commands(new CommandLine(command), command.getClass(), args, 0).setDefaultValueProvider(new SpecDefaults());
    }

    private static CommandLine commands(CommandLine cl, Class<?> type, String[] args, int from) {
        java.util.List<Class<?>> subs = TREE.getOrDefault(type, java.util.List.of());
        int at = from;
        while (at < args.length && args[at].startsWith("-")) {
            at++;
        }
        String name = at < args.length && !args[at].equals("help") ? args[at] : null;
        Class<?> named = subs.stream().filter(s -> nameOf(s).equals(name)).findFirst().orElse(null);
        for (Class<?> sub : subs) {
            if (named == null || sub == named) {
                CommandLine child = new CommandLine(sub);
                cl.addSubcommand(child);
                commands(child, sub, named == null ? new String[0] : args, named == null ? 0 : at + 1);
            }
        }
        return cl;
    }

    private static String nameOf(Class<?> command) {
        return command.getAnnotation(Command.class).name();
    }

    private static void helpEverywhere(CommandLine c) {
        c.getCommandSpec().mixinStandardHelpOptions(true);
        for (CommandLine sub : c.getSubcommands().values()) {
            helpEverywhere(sub);
        }
    }

    private static boolean hasDebug(CommandLine.ParseResult parsed) {
        for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
            if (p.matchedOption("--debug") != null) {
                return true;
            }
        }
        return false;
    }

    private static Throwable unwrap(Throwable t) {
        while (t instanceof UncheckedIOException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    static String message(Throwable t) {
        String m = t.getMessage();
        if (t instanceof java.nio.file.NoSuchFileException) {
            return m != null && m.contains(": ") ? m : m + ": no such file";
        }
        if (t instanceof java.nio.file.AccessDeniedException) {
            return m + ": permission denied";
        }
        return m == null ? t.getClass().getSimpleName() : m;
    }

    /** The paths brace patterns name ({@code train-{000000..000009}.tar}), as {@code ls} and {@code inspect} take them. */
    static java.util.List<String> expand(java.util.List<String> patterns) {
        try {
            return dev.stoker.storage.ShardPattern.expand(patterns);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** A spec's option as its flag: {@code seq_len} is {@code --seq-len}; the paths are the arguments. */
    static String flag(String option) {
        return option.equals("paths") || option.equals("path") ? "PATH" : "--" + option.replace('_', '-');
    }

    static int exitCode(Throwable t) {
        if (t instanceof UsageException || t instanceof CommandLine.ParameterException
                || t instanceof dev.stoker.sources.SpecException) {
            return 2;
        }
        if (t instanceof IOException || t instanceof LoaderException || t instanceof BadDataException) {
            return 1;
        }
        return 1;
    }

    /** A mistake in how the command was called: exit 2 with a usage hint. */
    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    /** Input that cannot be used: exit 1. The message starts with the resource. */
    static final class BadDataException extends RuntimeException {
        BadDataException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"stoker " + version()};
        }
    }

    static String version() {
        try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
