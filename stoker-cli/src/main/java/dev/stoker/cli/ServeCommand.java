package dev.stoker.cli;

import dev.stoker.bridge.BridgeServer;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code stoker serve}: the loader server behind the {@code stoker} Python package, a
 * {@link BridgeServer}. A client's OPEN sends a source spec and a loader spec as JSON, the specs
 * {@code stoker bench} maps its flags to, so the same options give the same batches.
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
        BridgeServer server = new BridgeServer(socket, dir).ownsDir(ownsDir).stay(stay);
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
}
