package dev.stoker.cli;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code stoker serve}: the loader server behind the {@code stoker} Python package. Each client
 * (a rank's {@code stoker.Loader}) gets a loader of its own, a shared-memory ring its batches
 * are collated into, and its connection on a Unix domain socket (NOTE [Bridge flow] in
 * BridgeSession). The server exits when its last client has gone, or when the process named by
 * {@code --parent} ends: it never outlives the training job that started it.
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

    private final Set<BridgeSession> clients = ConcurrentHashMap.newKeySet();
    private final java.util.List<Thread> threads = new java.util.ArrayList<>();
    /** Guards {@link #active} and {@link #closing}: a client accepted as the last one leaves is served or refused, never cut off. */
    private final Object lock = new Object();
    private int active;
    private boolean closing;
    private int sessions;
    private volatile ServerSocketChannel server;

    @Override
    public Integer call() throws Exception {
        Path dir = shmDir != null ? shmDir : Path.of(System.getenv().getOrDefault("STOKER_SHM_DIR", "/dev/shm"));
        sweepStaleRings(dir);
        Path sock = socket.toAbsolutePath();
        if (Files.exists(sock)) {
            if (listening(sock)) {
                throw new Main.UsageException(sock + ": a server is already listening there");
            }
            Files.delete(sock); // left by a server that was killed
        }
        ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        ch.bind(UnixDomainSocketAddress.of(sock));
        server = ch;
        Thread cleanup = new Thread(() -> removeSocket(sock), "stoker-serve-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        if (parent != null) {
            watchParent(parent);
        }
        System.out.println("stoker serve: listening on " + sock);
        System.out.flush();
        String prefix = ShmRing.PREFIX + ProcessHandle.current().pid() + "-";
        try {
            while (true) {
                SocketChannel client;
                try {
                    client = ch.accept();
                } catch (ClosedChannelException e) {
                    break; // the last client went, or the parent ended
                }
                int n;
                synchronized (lock) {
                    if (closing) {
                        closeQuietly(client);
                        break;
                    }
                    n = ++sessions;
                    active++;
                }
                String ring = prefix + n + "-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
                BridgeSession s = new BridgeSession(client, dir, ring);
                clients.add(s);
                Thread t = new Thread(() -> session(client, s, n), "stoker-session-" + n);
                threads.add(t);
                t.start();
            }
        } finally {
            closeQuietly(ch);
            removeSocket(sock);
        }
        for (Thread t : threads) {
            t.join(); // every session closes its loader and ring before the JVM exits
        }
        return 0;
    }

    private void removeSocket(Path sock) {
        deleteQuietly(sock);
        if (ownsDir) {
            deleteQuietly(sock.getParent()); // only when empty
        }
    }

    private void session(SocketChannel client, BridgeSession s, int n) {
        try {
            s.run();
        } catch (BridgeSession.ClientGone e) {
            // the client went away: its loader and ring are closed
        } catch (IOException | RuntimeException e) {
            System.err.println("stoker serve: client " + n + ": " + Main.message(e));
        } finally {
            clients.remove(s);
            closeQuietly(client);
            synchronized (lock) {
                if (--active == 0 && !stay) {
                    closing = true;
                    closeQuietly(server); // the last client has gone: the server exits
                }
            }
        }
    }

    /** Ends the server when the process that started it ends, however it ended (kill -9 included). */
    private void watchParent(long pid) {
        Thread t = new Thread(() -> {
            ProcessHandle p = ProcessHandle.of(pid).orElse(null);
            while (p != null && p.isAlive()) {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
            synchronized (lock) {
                closing = true;
            }
            closeQuietly(server);
            for (BridgeSession s : clients) {
                s.stop(); // a session waiting for its client ends; its loader and ring are closed
            }
        }, "stoker-serve-parent");
        t.setDaemon(true);
        t.start();
    }

    private static boolean listening(Path sock) {
        try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(sock))) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Removes ring files of servers that no longer run (a server killed before its client mapped the ring). */
    static void sweepStaleRings(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, ShmRing.PREFIX + "*")) {
            for (Path f : files) {
                String rest = f.getFileName().toString().substring(ShmRing.PREFIX.length());
                int dash = rest.indexOf('-');
                try {
                    long pid = Long.parseLong(dash < 0 ? rest : rest.substring(0, dash));
                    if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                        continue;
                    }
                    Files.deleteIfExists(f);
                } catch (NumberFormatException | IOException e) {
                    // not a ring of ours, or not ours to remove
                }
            }
        } catch (IOException e) {
            // an unreadable directory: the ring's own creation will say what is wrong
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            if (c != null) {
                c.close();
            }
        } catch (IOException e) {
            // closing
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            // exiting
        }
    }
}
