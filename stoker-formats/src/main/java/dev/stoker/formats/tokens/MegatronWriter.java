package dev.stoker.formats.tokens;

import dev.stoker.DType;
import dev.stoker.storage.io.PendingFile;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * Writes a Megatron-LM indexed dataset ({@code PREFIX.bin} and {@code PREFIX.idx}, layout in
 * {@link Megatron}), one document (= one sequence) at a time. Both files are written beside
 * their targets under temporary names and renamed on {@link #close()}; an interrupted writer
 * leaves no file that looks complete. Not thread-safe.
 */
public final class MegatronWriter implements AutoCloseable {
    private final Path prefix;
    private final DType dtype;
    private final PendingFile binFile;
    private final OutputStream bin;
    private final ByteBuffer scratch = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    private int[] lengths = new int[1024];
    private long count;
    private long bytes;
    private boolean closed;

    public MegatronWriter(Path prefix, DType dtype) throws IOException {
        this.prefix = Megatron.prefixOf(prefix);
        Megatron.codeOf(dtype);
        this.dtype = dtype;
        this.binFile = new PendingFile(Path.of(this.prefix + ".bin"));
        this.bin = binFile.out();
    }

    /** Appends a document of {@code n} tokens. */
    public void add(int[] tokens, int n) throws IOException {
        for (int i = 0; i < n; i++) {
            int t = tokens[i];
            boolean fits = switch (dtype) {
                case UINT8 -> (t & ~0xFF) == 0;
                case INT16 -> t >= Short.MIN_VALUE && t <= Short.MAX_VALUE;
                case UINT16 -> (t & ~0xFFFF) == 0;
                default -> true;
            };
            if (!fits) {
                throw new IllegalArgumentException("token " + t + " (at " + i + " of document " + count + ") does not fit "
                        + dtype.label());
            }
        }
        for (int i = 0; i < n; i++) {
            if (scratch.remaining() < 8) {
                flushScratch();
            }
            int t = tokens[i];
            switch (dtype) {
                case UINT16 -> scratch.putShort((short) t);
                case INT32 -> scratch.putInt(t);
                case INT64 -> scratch.putLong(t);
                case UINT8 -> scratch.put((byte) t);
                case INT16 -> scratch.putShort((short) t);
                default -> throw new IllegalArgumentException("cannot write tokens as " + dtype.label());
            }
        }
        flushScratch();
        if (count == lengths.length) {
            lengths = java.util.Arrays.copyOf(lengths, lengths.length * 2);
        }
        lengths[(int) count++] = n;
        bytes += (long) n * dtype.byteSize();
    }

    private void flushScratch() throws IOException {
        bin.write(scratch.array(), 0, scratch.position());
        scratch.clear();
    }

    /** Moves the .bin into place, then writes the index (an .idx always describes the .bin beside it). */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            // a reader must never pair a new .idx with an old .bin: the old index goes first, the new
            // one comes last, once its .bin is in place
            java.nio.file.Files.deleteIfExists(Path.of(prefix + ".idx"));
            binFile.commit();
            PendingFile.write(Path.of(prefix + ".idx"), this::writeIndex);
        } finally {
            binFile.abandon();
        }
    }

    /** Leaves no file behind: for a writer that failed half-way. */
    public void abandon() throws IOException {
        closed = true;
        binFile.abandon();
    }

    private void writeIndex(OutputStream out) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(34).order(ByteOrder.LITTLE_ENDIAN);
        h.put(Megatron.MAGIC).putLong(1).put((byte) Megatron.codeOf(dtype)).putLong(count).putLong(count + 1);
        out.write(h.array());
        ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        for (long i = 0; i < count; i++) {
            b.clear();
            b.putInt(lengths[(int) i]);
            out.write(b.array(), 0, 4);
        }
        long ptr = 0;
        for (long i = 0; i < count; i++) {
            b.clear();
            b.putLong(ptr);
            out.write(b.array(), 0, 8);
            ptr += (long) lengths[(int) i] * dtype.byteSize();
        }
        for (long d = 0; d <= count; d++) {
            b.clear();
            b.putLong(d);
            out.write(b.array(), 0, 8);
        }
    }

    public long documents() {
        return count;
    }

    public long bytes() {
        return bytes;
    }
}
