package dev.stoker.formats.io;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * Reads a stream ahead on a thread of its own, a chunk at a time, so that producing the bytes
 * (decompressing gzip or zstd) runs in parallel with consuming them (parsing). Memory is bounded:
 * {@code chunks} buffers of {@code chunkSize} bytes, recycled. An exception in the reading thread
 * reaches the reader after the bytes read before it. {@link #close()} stops the thread and closes
 * the source.
 */
public final class ReadAhead extends InputStream {
    private record Chunk(byte[] buf, int length) {
    }

    private static final Chunk END = new Chunk(new byte[0], 0);

    private final InputStream source;
    private final BlockingQueue<Chunk> full;
    private final BlockingQueue<byte[]> free;
    private final Thread thread;
    private volatile IOException failure;
    private volatile boolean closed;
    private Chunk current;
    private int pos;
    private boolean ended;

    public ReadAhead(InputStream source, int chunks, int chunkSize) {
        this.source = source;
        this.full = new ArrayBlockingQueue<>(chunks + 1);
        this.free = new ArrayBlockingQueue<>(chunks);
        for (int i = 0; i < chunks; i++) {
            free.add(new byte[chunkSize]);
        }
        this.thread = new Thread(this::fill, "stoker-read-ahead");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private void fill() {
        try {
            while (!closed) {
                byte[] buf = free.take();
                int n = source.readNBytes(buf, 0, buf.length);
                if (n > 0) {
                    full.put(new Chunk(buf, n));
                }
                if (n < buf.length) {
                    break;
                }
            }
        } catch (IOException e) {
            failure = e;
        } catch (InterruptedException e) {
            return; // closing: no reader waits any more
        } catch (RuntimeException | Error e) {
            failure = new IOException("reading ahead failed: " + e, e);
        }
        try {
            full.put(END); // always: a reader waiting for bytes learns of the end or the failure
        } catch (InterruptedException ignored) {
            // closing: no reader waits for the end any more
        }
    }

    private boolean advance() throws IOException {
        if (ended) {
            return false;
        }
        if (current != null) {
            free.offer(current.buf);
        }
        try {
            current = full.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while reading ahead");
        }
        pos = 0;
        if (current == END) {
            current = null;
            ended = true;
            if (failure != null) {
                throw failure;
            }
            return false;
        }
        return true;
    }

    @Override
    public int read() throws IOException {
        if ((current == null || pos == current.length) && !advance()) {
            return -1;
        }
        return current.buf[pos++] & 0xFF;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        if ((current == null || pos == current.length) && !advance()) {
            return -1;
        }
        int n = Math.min(len, current.length - pos);
        System.arraycopy(current.buf, pos, b, off, n);
        pos += n;
        return n;
    }

    @Override
    public void close() throws IOException {
        if (!closed) {
            closed = true;
            thread.interrupt();
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            source.close();
        }
    }
}
