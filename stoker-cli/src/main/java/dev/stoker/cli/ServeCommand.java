package dev.stoker.cli;

import dev.stoker.Loader;
import dev.stoker.bridge.BridgeServer;
import dev.stoker.bridge.Opener;
import dev.stoker.bridge.Recipe;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code stoker serve}: the loader server behind the {@code stoker} Python package, a
 * {@link BridgeServer} whose sources are {@code stoker bench}'s: a client's OPEN names a source
 * and options as {@code stoker bench} takes them, parsed by the same code, so the same options
 * give the same batches.
 */
@Command(name = "serve", description = "Serve batches to the stoker Python package: a shared-memory ring per client, "
        + "control over a Unix domain socket. Normally started by the Python package.")
final class ServeCommand implements Callable<Integer> {
    @Option(names = "--socket", required = true, paramLabel = "PATH", description = "The Unix domain socket to listen on.")
    Path socket;

    @Option(names = "--parent", paramLabel = "PID", description = "Exit when this process ends (the Python process that started the server).")
    Long parent;

    @Option(names = "--shm-dir", paramLabel = "DIR", description = "Where the rings' files are made (default: $STOKER_SHM_DIR, else /dev/shm).")
    Path shmDir;

    @Option(names = "--owns-dir", description = "The socket's directory is the server's: removed when it exits.")
    boolean ownsDir;

    @Option(names = "--stay", description = "Keep serving when the last client has gone (a server shared by loaders "
            + "that come and go; stop it yourself, or with --parent).")
    boolean stay;

    @Override
    public Integer call() throws Exception {
        Path dir = shmDir != null ? shmDir : Path.of(System.getenv().getOrDefault("STOKER_SHM_DIR", "/dev/shm"));
        BridgeServer server = new BridgeServer(socket, dir, new Opener() {
            @Override
            public void open(List<String> args, Serve serve) throws Exception {
                ServeCommand.open(args, serve);
            }

            @Override
            public String redact(String message) {
                return dev.stoker.storage.Storage.redact(message); // NOTE [Credentials in a URL]
            }
        }).ownsDir(ownsDir).stay(stay);
        if (parent != null) {
            server.parent(parent);
        }
        try {
            server.run();
        } catch (IllegalArgumentException e) {
            throw new Main.UsageException(e.getMessage());
        }
        return 0;
    }

    /** The CLI's {@link Opener}: the arguments parsed as {@code stoker bench} parses them, the loader served instead of measured. */
    static void open(List<String> args, Opener.Serve serve) throws Exception {
        String[] argv = args.toArray(String[]::new);
        CommandLine cl = Main.commands(new BenchCommand(), argv);
        CommandLine.ParseResult parsed;
        try {
            parsed = cl.parseArgs(argv);
        } catch (CommandLine.ParameterException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        CommandLine.ParseResult sub = parsed.subcommand();
        if (sub == null || !(sub.commandSpec().userObject() instanceof Callable<?> source)) {
            throw new IllegalArgumentException("a source is needed (for example: tokens PATH)");
        }
        BenchOptions options = (BenchOptions) sub.commandSpec().mixins().get("options").userObject();
        options.bridge = (runner, base) -> {
            serve.serve(new Recipe() {
                @Override
                public Loader.Builder builder() {
                    return runner.configure(base.get());
                }

                @Override
                public int batch() {
                    return runner.batch();
                }

                @Override
                public long epoch() {
                    return runner.epoch();
                }

                @Override
                public double tokensPerSample() {
                    return runner.tokensPerSample();
                }
            });
            return 0;
        };
        try {
            source.call();
        } catch (Main.UsageException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        } catch (Main.BadDataException e) {
            throw new IOException(Main.message(e), e);
        }
    }
}
