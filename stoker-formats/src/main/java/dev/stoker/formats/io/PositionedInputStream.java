package dev.stoker.formats.io;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * A file read as a stream by positioned reads into a small buffer: a skip moves a position
 * without a system call, and no mapping is made. For reading the headers of many small files
 * from several threads at once: mapping each file takes the process's memory-map lock to map and
 * again to unmap, and the threads then wait on each other. The caller owns the channel.
 */
public final class PositionedInputStream extends InputStream {
    private final FileChannel channel;
    private final long size;
    private final ByteBuffer buffer;
    /** The file position of the buffer's first byte. */
    private long buffered;
    private long position;

    /** Reads {@code channel}'s first {@code size} bytes through {@code buffer} (all of it; its contents are overwritten). */
    public PositionedInputStream(FileChannel channel, long size, ByteBuffer buffer) {
        this.channel = channel;
        this.size = size;
        this.buffer = buffer.clear().limit(0);
        this.buffered = -1;
    }

    @Override
    public int read() throws IOException {
        if (position >= size || !fill()) {
            return -1;
        }
        return buffer.get((int) (position++ - buffered)) & 0xFF;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        java.util.Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        if (position >= size) {
            return -1;
        }
        if (len >= buffer.capacity() && !inBuffer()) {
            int n = channel.read(ByteBuffer.wrap(b, off, (int) Math.min(len, size - position)), position);
            if (n > 0) {
                position += n;
            }
            return n == 0 ? -1 : n;
        }
        if (!fill()) {
            return -1;
        }
        int n = (int) Math.min(len, buffered + buffer.limit() - position);
        buffer.get((int) (position - buffered), b, off, n);
        position += n;
        return n;
    }

    private boolean inBuffer() {
        return buffered >= 0 && position >= buffered && position < buffered + buffer.limit();
    }

    /** Whether the byte at {@link #position} is in the buffer, read into it if it was not; false at the file's end. */
    private boolean fill() throws IOException {
        if (inBuffer()) {
            return true;
        }
        buffer.clear();
        while (buffer.hasRemaining() && channel.read(buffer, position + buffer.position()) > 0) {
            // until full, or the file ends
        }
        buffer.flip();
        buffered = position;
        return buffer.hasRemaining();
    }

    @Override
    public long skip(long n) {
        long k = Math.max(0, Math.min(n, size - position));
        position += k;
        return k;
    }

    @Override
    public int available() {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, size - position));
    }
}
