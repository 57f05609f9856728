package dev.stoker.parquet;

import dev.stoker.storage.Locations;
import dev.stoker.storage.Storage;
import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.atomic.LongAdder;

/**
 * A Parquet file's bytes at any location, read by range: a local file by a read of a file opened
 * for it (not a channel: an interrupt, as a loader closing a pass sends, would end the read and
 * close the channel), a remote one by a ranged request through {@link Storage}. A remote file's footer
 * costs one request: the first read among its last {@link #TAIL} bytes fetches them all, and the
 * footer's later reads are served from them. Every byte fetched and every request is counted.
 * Safe for concurrent reads; nothing is held open between them. Also the input Hardwood parses
 * the footer from.
 */
final class ParquetInput implements dev.hardwood.InputFile {
    /** The file's last bytes, fetched at once by the first read among them (the footer's). */
    static final int TAIL = 64 << 10;

    private final String location;
    private final boolean remote;
    private final long length;
    final LongAdder bytesFetched = new LongAdder();
    final LongAdder requests = new LongAdder();
    private volatile byte[] tail;

    ParquetInput(String location) throws IOException {
        this.location = location;
        this.remote = Locations.isRemote(location);
        if (!remote && !Files.isRegularFile(Locations.localPath(location))) {
            throw new NoSuchFileException(location);
        }
        this.length = Storage.size(location);
    }

    /** Reads {@code len} bytes at {@code offset} into {@code dst} from {@code at}. */
    void read(long offset, byte[] dst, int at, int len) throws IOException {
        if (offset < 0 || offset + len > length) {
            throw new EOFException(location + ": " + len + " bytes at byte " + offset + " run past its end at " + length);
        }
        long tailStart = Math.max(0, length - TAIL);
        if (remote && offset >= tailStart) {
            System.arraycopy(tail(tailStart), (int) (offset - tailStart), dst, at, len);
            return;
        }
        if (!remote) {
            // a RandomAccessFile: unlike a FileChannel, a read of it is not ended by an interrupt
            try (RandomAccessFile f = new RandomAccessFile(Locations.localPath(location).toFile(), "r")) {
                f.seek(offset);
                f.readFully(dst, at, len);
            }
            return;
        }
        Storage.readFully(location, offset, ByteBuffer.wrap(dst, at, len));
        bytesFetched.add(len);
        requests.increment();
    }

    private byte[] tail(long tailStart) throws IOException {
        byte[] t = tail;
        if (t == null) {
            synchronized (this) {
                t = tail;
                if (t == null) {
                    t = new byte[(int) (length - tailStart)];
                    Storage.readFully(location, tailStart, ByteBuffer.wrap(t));
                    bytesFetched.add(t.length);
                    requests.increment();
                    tail = t;
                }
            }
        }
        return t;
    }

    @Override
    public ByteBuffer readRange(long offset, int len) throws IOException {
        byte[] b = new byte[len];
        read(offset, b, 0, len);
        return ByteBuffer.wrap(b);
    }

    @Override
    public void open() {
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public String name() {
        return location;
    }

    /** Nothing is held open between reads; Hardwood closes its input whenever it is done with a reader. */
    @Override
    public void close() {
    }
}
