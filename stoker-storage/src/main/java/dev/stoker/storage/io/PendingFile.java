package dev.stoker.storage.io;

import dev.stoker.storage.Storage;
import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The one way Stoker writes a file (states, plots, shards, token files, indexes, caches, copies):
 * under a temporary name beside its target, then {@link #commit()} flushes it to disk and renames
 * it into place in one step, and {@link #abandon()} deletes it. Readers never see a partial file.
 *
 * <p>Only a regular file is replaced: a target that is a device, a FIFO, a folder, or a symbolic
 * link to one of those is refused ({@link #check}), naming it; a link to a regular file is
 * followed, and the file it leads to is replaced. A writer stopped by a signal removes its
 * temporary on the way out, and one killed outright leaves a hidden {@code .NAME.PID.*.partial}
 * file that the next writer there sweeps (Temporaries). A failed write (a full disk, an
 * I/O error) names the target: the system's own message ("No space left on device") names nothing.
 */
public final class PendingFile {
    private final Path target;
    private final Path tmp;
    private final FileChannel channel;
    private OutputStream out;
    private final OutputStream view;
    private boolean done;
    private boolean finished;
    private boolean committed;

    /**
     * @throws NoSuchFileException when {@code target}'s folder does not exist, naming it
     * @throws FileSystemException when {@code target} is not a regular file ({@link #check})
     */
    public PendingFile(Path target) throws IOException {
        this.target = check(target);
        try {
            this.tmp = Temporaries.create(this.target); // removed even if the process is stopped by a signal
        } catch (IOException e) {
            throw named(e);
        }
        try {
            try {
                // a temporary file is created private (0600); the finished file is an ordinary one
                Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system: its defaults apply
            }
            this.channel = FileChannel.open(tmp, StandardOpenOption.WRITE);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            Temporaries.done(tmp);
            throw e;
        }
        this.out = new BufferedOutputStream(new Named(Channels.newOutputStream(channel)), 1 << 16);
        this.view = new View();
    }

    /** What writes a whole file in one go ({@link #write}). */
    @FunctionalInterface
    public interface Body {
        void write(OutputStream out) throws IOException;
    }

    /** Writes {@code target} whole or not at all: {@code body} into a new pending file, then committed. */
    public static void write(Path target, Body body) throws IOException {
        PendingFile f = new PendingFile(target);
        try {
            body.write(f.out());
            f.commit();
        } finally {
            f.abandon();
        }
    }

    /**
     * Puts in place a file that another writer made whole (a library that writes only to a path
     * it is given, into a hidden staging folder beside the target), as {@link #commit()} does:
     * flushed to disk, then renamed over {@code target}, a regular file or nothing ({@link #check}).
     */
    public static void publish(Path written, Path target) throws IOException {
        Path to = check(target);
        try (FileChannel ch = FileChannel.open(written, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(written, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * The file a write to {@code target} replaces, absolute: {@code target} when nothing is there
     * or a regular file is, the file a symbolic link leads to when that is a regular file.
     *
     * @throws NoSuchFileException when {@code target}'s folder does not exist, naming it
     * @throws FileSystemException {@code "TARGET: not a regular file; refusing to replace it"}
     *                             when a device, a FIFO, a folder (or a link to one) is there, or
     *                             when a link another user owns is there
     */
    public static Path check(Path target) throws IOException {
        Path abs = target.toAbsolutePath();
        Path dir = abs.getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new NoSuchFileException(target + ": cannot write: no such directory " + dir);
        }
        if (Files.isSymbolicLink(abs) && !Folders.ours(abs)) { // planted in a shared folder: another user's file behind it
            throw new FileSystemException(target.toString(), null, "a link another user made; refusing to write through it");
        }
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(abs, BasicFileAttributes.class); // through a link
        } catch (NoSuchFileException e) {
            return abs; // nothing there (or a link to nothing, which is replaced)
        }
        if (!a.isRegularFile()) {
            throw refused(target);
        }
        return abs.toRealPath();
    }

    private static FileSystemException refused(Path target) {
        return new FileSystemException(target.toString(), null, "not a regular file; refusing to replace it");
    }

    private IOException named(IOException e) {
        return Storage.named(target.toString(), e);
    }

    /** The file's stream, its failures naming the target. */
    private final class Named extends FilterOutputStream {
        Named(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            try {
                out.write(b);
            } catch (IOException e) {
                throw named(e);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            try {
                out.write(b, off, len);
            } catch (IOException e) {
                throw named(e);
            }
        }
    }

    /**
     * The file's buffered stream, as its users see it: closing it does nothing (ImageIO and
     * Jackson close what they write to), the file ends with {@link #commit()} or {@link #abandon()};
     * it holds no buffer of its own, so a finished file waiting to be published holds no memory.
     */
    private final class View extends OutputStream {
        private OutputStream open() throws IOException {
            if (out == null) {
                throw new IOException(target + ": written after it was finished");
            }
            return out;
        }

        @Override
        public void write(int b) throws IOException {
            open().write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            open().write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            if (out != null) { // a writer closed after commit() flushes what it no longer holds
                out.flush();
            }
        }
    }

    /** Buffered; flushed by {@link #commit()}. Closing it does nothing: the file ends with {@link #commit()} or {@link #abandon()}. */
    public OutputStream out() {
        return view;
    }

    /** Writes {@code b} at {@code position} (e.g. a header written last); flush {@link #out()} first. */
    public void writeAt(ByteBuffer b, long position) throws IOException {
        try {
            while (b.hasRemaining()) {
                position += channel.write(b, position);
            }
        } catch (IOException e) {
            throw named(e);
        }
    }

    /**
     * Flushes the file to disk and closes it, still under its temporary name: {@link #commit()}
     * renames it into place (a set of files published together: each finished, then all renamed).
     */
    public void finish() throws IOException {
        if (finished || done) {
            return;
        }
        finished = true;
        try {
            out.flush();
            channel.force(true);
            channel.close();
            out = null; // its buffer: a finished file waiting to be published holds no memory
        } catch (IOException e) {
            done = true;
            discard();
            throw named(e);
        }
    }

    /** Finishes the file and renames it into place in one step, over a regular file or nothing. */
    public void commit() throws IOException {
        finish();
        if (done) {
            if (!committed) { // failed or abandoned before: nothing is in place, and a second try must not say otherwise
                throw new IOException(target + ": not written: its file was abandoned or failed before");
            }
            return;
        }
        done = true;
        boolean moved = false;
        try {
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)
                    && !Files.readAttributes(target, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isRegularFile()) {
                throw refused(target); // put there while this one was written
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            moved = true;
            committed = true;
            Temporaries.done(tmp);
        } catch (IOException e) {
            throw named(e);
        } finally {
            if (!moved) {
                discard();
            }
        }
    }

    /**
     * Finishes the file and puts it in place only if nothing is there (a file another process
     * made first may be in use): {@code false}, and this one deleted, when something is.
     */
    public boolean commitNew() throws IOException {
        finish();
        if (done) {
            return false;
        }
        done = true;
        try {
            Files.createLink(target, tmp); // never over another's file
            committed = true;
        } catch (FileAlreadyExistsException e) {
            // another made it first: theirs stays
        } catch (UnsupportedOperationException | FileSystemException e) {
            if (!Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                Files.move(tmp, target); // no hard links here
                committed = true;
            }
        } finally {
            discard();
        }
        return committed;
    }

    public void abandon() throws IOException {
        if (!done) {
            done = true;
            discard();
        }
    }

    /** Deletes the file this one became by {@link #commit()}: a set published half-way is taken back. */
    public void unpublish() throws IOException {
        if (committed) {
            Files.deleteIfExists(target);
        }
    }

    /** Closes without flushing what is buffered (it is thrown away anyway) and deletes the file. */
    private void discard() throws IOException {
        try {
            channel.close();
        } finally {
            Files.deleteIfExists(tmp);
            Temporaries.done(tmp);
        }
    }
}
