package dev.stoker.parquet;

import dev.stoker.storage.Storage;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.LongAdder;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;

/**
 * A Parquet file at any location, read by ranged requests through {@link Storage}: the footer
 * (one request for the file's last 64 KB, which hold most footers, then served from them) and,
 * for each row group, exactly the column chunks a read asks for (Parquet Java reads a run of
 * adjacent chunks with one {@code readFully}: one request). Every byte fetched and every request
 * is counted.
 */
final class StorageInputFile implements InputFile {
    /** The file's last bytes fetched by a read among them (the footer's). */
    static final int TAIL = 64 << 10;

    /** What was fetched: bytes and requests, all streams of a file together. */
    static final class Traffic {
        final LongAdder bytes = new LongAdder();
        final LongAdder requests = new LongAdder();
    }

    private final String location;
    private final long length;
    private final Traffic traffic;

    StorageInputFile(String location, long length, Traffic traffic) {
        this.location = location;
        this.length = length;
        this.traffic = traffic;
    }

    @Override
    public long getLength() {
        return length;
    }

    @Override
    public SeekableInputStream newStream() {
        return new Stream();
    }

    @Override
    public String toString() {
        return location;
    }

    private final class Stream extends SeekableInputStream {
        private long pos;
        private byte[] window = new byte[0];
        private long windowStart;
        private int windowLength;

        @Override
        public long getPos() {
            return pos;
        }

        @Override
        public void seek(long newPos) throws IOException {
            if (newPos < 0 || newPos > length) {
                throw new EOFException(location + ": seek to byte " + newPos + " of " + length);
            }
            pos = newPos;
        }

        @Override
        public int read() throws IOException {
            if (pos >= length) {
                return -1;
            }
            byte[] one = new byte[1];
            readFully(one, 0, 1);
            return one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (pos >= length) {
                return -1;
            }
            int n = (int) Math.min(len, length - pos);
            readFully(b, off, n);
            return n;
        }

        @Override
        public int read(ByteBuffer buf) throws IOException {
            if (!buf.hasRemaining()) {
                return 0;
            }
            if (pos >= length) {
                return -1;
            }
            int n = (int) Math.min(buf.remaining(), length - pos);
            ByteBuffer part = buf.slice(buf.position(), n);
            readFully(part);
            buf.position(buf.position() + n);
            return n;
        }

        @Override
        public void readFully(byte[] bytes) throws IOException {
            readFully(bytes, 0, bytes.length);
        }

        @Override
        public void readFully(byte[] bytes, int start, int len) throws IOException {
            readFully(ByteBuffer.wrap(bytes, start, len));
        }

        @Override
        public void readFully(ByteBuffer buf) throws IOException {
            int want = buf.remaining();
            if (pos + want > length) {
                throw new EOFException(location + ": " + want + " bytes at byte " + pos + " run past its end at " + length);
            }
            // what the window holds first
            if (pos >= windowStart && pos < windowStart + windowLength) {
                int n = (int) Math.min(want, windowStart + windowLength - pos);
                buf.put(window, (int) (pos - windowStart), n);
                pos += n;
            }
            if (!buf.hasRemaining()) {
                return;
            }
            long tail = Math.max(0, length - TAIL);
            if (pos < tail || windowLength > 0) {
                int n = buf.remaining();
                fetch(pos, buf);
                pos += n;
                return;
            }
            // the first read among the file's last bytes: fetch them all, for the footer's reads
            int n = (int) (length - tail);
            window = new byte[n];
            fetch(tail, ByteBuffer.wrap(window));
            windowStart = tail;
            windowLength = n;
            int k = buf.remaining();
            buf.put(window, (int) (pos - tail), k);
            pos += k;
        }

        private void fetch(long at, ByteBuffer dst) throws IOException {
            int n = dst.remaining();
            Storage.readFully(location, at, dst);
            traffic.bytes.add(n);
            traffic.requests.increment();
        }

        @Override
        public void close() {
        }
    }
}
