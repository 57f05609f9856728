package dev.stoker.bridge;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The loader server behind the {@code stoker} Python package ({@code stoker serve} runs one).
 * Each client (a rank's {@code stoker.Loader}) gets a {@link Session}: a loader of its own, made
 * from the source and loader specs its OPEN sends ({@code dev.stoker.sources}), a shared-memory ring its batches are collated into, and its
 * connection on a Unix domain socket (NOTE [Bridge flow] in Session). The server exits when its
 * last client has gone, or when the parent process ends: it never outlives the training job that
 * started it.
 */
public final class BridgeServer {
    private final Path socket;
    private final Path shmDir;
    private Long parent;
    private boolean ownsDir;
    private boolean stay;

    /** A server on {@code socket}, its rings in {@code shmDir} (a tmpfs). */
    public BridgeServer(Path socket, Path shmDir) {
        this.socket = Objects.requireNonNull(socket, "socket");
        this.shmDir = Objects.requireNonNull(shmDir, "shmDir");
    }

    /** Exits when process {@code pid} ends (the Python process that started the server). */
    public BridgeServer parent(long pid) {
        this.parent = pid;
        return this;
    }

    /** The socket's directory is the server's: removed when it exits. */
    public BridgeServer ownsDir(boolean owns) {
        this.ownsDir = owns;
        return this;
    }

    /** Keeps serving when the last client has gone (a server shared by loaders that come and go). */
    public BridgeServer stay(boolean stay) {
        this.stay = stay;
        return this;
    }

    private final Set<Session> clients = ConcurrentHashMap.newKeySet();
    private final java.util.List<Thread> threads = new java.util.ArrayList<>();
    /** Guards {@link #active} and {@link #closing}: a client accepted as the last one leaves is served or refused, never cut off. */
    private final Object lock = new Object();
    private int active;
    private boolean closing;
    private int sessions;
    private volatile ServerSocketChannel server;

    /**
     * Listens on the socket and serves each client that connects, until the last has gone (unless
     * {@link #stay}) or the parent process ends; prints {@code stoker serve: listening on PATH}
     * once it listens. Every session has closed its loader and ring when this returns.
     */
    public void run() throws IOException, InterruptedException {
        sweepStaleRings(shmDir);
        Path sock = socket.toAbsolutePath();
        if (Files.exists(sock)) {
            if (listening(sock)) {
                throw new IllegalArgumentException(sock + ": a server is already listening there");
            }
            Files.delete(sock); // left by a server that was killed
        }
        ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        ch.bind(UnixDomainSocketAddress.of(sock));
        // NOTE [Who may connect]: the socket is its user's alone (whatever the umask), and each
        // client's credentials are checked against the socket's owner, the server's own user: a
        // client asks the server to open files and make folders, with the server's rights
        Files.setPosixFilePermissions(sock, PosixFilePermissions.fromString("rw-------"));
        UserPrincipal self = Files.getOwner(sock);
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
                Session s = new Session(client, shmDir, ring, self);
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
    }

    private void removeSocket(Path sock) {
        deleteQuietly(sock);
        if (ownsDir) {
            deleteQuietly(sock.getParent()); // only when empty
        }
    }

    private void session(SocketChannel client, Session s, int n) {
        try {
            s.run();
        } catch (Session.ClientGone e) {
            // the client went away: its loader and ring are closed
        } catch (IOException | RuntimeException e) {
            System.err.println("stoker serve: client " + n + ": " + dev.stoker.storage.Locations.redact(Session.message(e)));
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
            for (Session s : clients) {
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
    public static void sweepStaleRings(Path dir) {
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
