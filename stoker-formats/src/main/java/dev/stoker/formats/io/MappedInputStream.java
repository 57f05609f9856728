package dev.stoker.formats.io;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * A local file read as a stream through a mapping: a read is one copy out of the page cache (no
 * system call, no intermediate buffer), a skip moves a position. {@link #close()} unmaps the file.
 */
public final class MappedInputStream extends InputStream {
    private final MappedFile file;
    private final MemorySegment segment;
    private long position;

    public MappedInputStream(Path path) throws IOException {
        this.file = MappedFile.open(path);
        this.segment = file.segment();
    }

    public MemorySegment segment() {
        return segment;
    }

    @Override
    public int read() {
        return position < segment.byteSize() ? segment.get(ValueLayout.JAVA_BYTE, position++) & 0xFF : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        java.util.Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        long left = segment.byteSize() - position;
        if (left <= 0) {
            return -1;
        }
        int n = (int) Math.min(len, left);
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, position, b, off, n);
        position += n;
        return n;
    }

    @Override
    public long skip(long n) {
        long k = Math.max(0, Math.min(n, segment.byteSize() - position));
        position += k;
        return k;
    }

    @Override
    public int available() {
        return (int) Math.min(Integer.MAX_VALUE, segment.byteSize() - position);
    }

    @Override
    public void close() {
        file.close();
    }
}
