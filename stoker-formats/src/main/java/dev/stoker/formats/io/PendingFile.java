package dev.stoker.formats.io;

import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * A file being written under a temporary name beside its target: {@link #commit()} flushes it to
 * disk and renames it into place in one step, {@link #abandon()} deletes it. Readers never see a
 * partial file; a writer stopped by a signal removes it on the way out ({@link dev.stoker.storage.Temporaries}), and
 * one killed outright leaves a hidden {@code .NAME.PID.*.partial} file that the next writer there sweeps.
 * A failed write (a full disk, an I/O error) names the target: the system's own message
 * ("No space left on device") names nothing.
 */
public final class PendingFile {
    private final Path target;
    private final Path tmp;
    private final FileChannel channel;
    private OutputStream out;
    private boolean done;
    private boolean finished;
    private boolean committed;

    public PendingFile(Path target) throws IOException {
        this.target = target.toAbsolutePath();
        try {
            this.tmp = dev.stoker.storage.Temporaries.create(this.target); // removed even if the process is stopped by a signal
        } catch (IOException e) {
            throw named(e);
        }
        try {
            // a temporary file is created private (0600); the finished file is an ordinary one
            Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: its defaults apply
        }
        this.channel = FileChannel.open(tmp, StandardOpenOption.WRITE);
        this.out = new BufferedOutputStream(new Named(Channels.newOutputStream(channel)), 1 << 16);
    }

    private IOException named(IOException e) {
        return dev.stoker.storage.Storage.named(target.toString(), e);
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

    /** Buffered; flushed by {@link #commit()}. */
    public OutputStream out() {
        return out;
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

    /** Finishes the file and renames it into place in one step. */
    public void commit() throws IOException {
        finish();
        if (done) {
            return;
        }
        done = true;
        boolean moved = false;
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            moved = true;
            committed = true;
            dev.stoker.storage.Temporaries.done(tmp);
        } catch (IOException e) {
            throw named(e);
        } finally {
            if (!moved) {
                discard();
            }
        }
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
            dev.stoker.storage.Temporaries.done(tmp);
        }
    }
}
