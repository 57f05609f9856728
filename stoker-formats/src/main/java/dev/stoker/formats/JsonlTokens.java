package dev.stoker.formats;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * JSON lines tokenized on the fly and packed into windows of {@code seqLen} tokens: each
 * document's tokens followed by the end-of-text id, consecutive and non-overlapping, the remainder
 * at the end of a shard dropped (as a packed stream reader does at the end of a file).
 *
 * <p>Shards: an uncompressed file is cut into ranges of about {@code shardBytes}, each starting
 * just after a newline, so that several workers read one file in parallel; a compressed file
 * ({@code .gz}, {@code .zst}) is one shard. A sample is a {@code long[seqLen]}, so that collating it
 * into an int64 batch is one bulk copy.
 */
public final class JsonlTokens implements dev.stoker.StreamingDataset<long[]> {
    private final Tokenizer tokenizer;
    private final String field;
    private final int seqLen;
    private final boolean skipBad;
    private final List<Range> shards = new ArrayList<>();
    // windows travel from a reader through the loader to the collator, which copies them into the
    // batch and returns them here: the steady state allocates none (a full pool lets them go)
    private final java.util.concurrent.ArrayBlockingQueue<long[]> windows = new java.util.concurrent.ArrayBlockingQueue<>(1024);

    private record Range(Path path, long start, long end) {
    }

    public JsonlTokens(List<Path> files, Tokenizer tokenizer, String field, int seqLen, long shardBytes, boolean skipBad)
            throws IOException {
        if (seqLen < 1 || shardBytes < 1) {
            throw new IllegalArgumentException("seqLen and shardBytes must be >= 1, got " + seqLen + " and " + shardBytes);
        }
        this.tokenizer = tokenizer;
        this.field = field;
        this.seqLen = seqLen;
        this.skipBad = skipBad;
        for (Path f : files) {
            String name = f.getFileName().toString();
            long size = Files.size(f);
            if (name.endsWith(".gz") || name.endsWith(".zst") || compressed(f) || size <= shardBytes) {
                shards.add(new Range(f, 0, -1));
                continue;
            }
            long start = 0;
            while (start < size) {
                long end = start + shardBytes >= size ? size : nextLineStart(f, start + shardBytes, size);
                shards.add(new Range(f, start, end));
                start = end;
            }
        }
    }

    /** True when the file starts with a gzip or zstd magic, whatever its name says. */
    private static boolean compressed(Path f) throws IOException {
        try (java.io.InputStream in = Files.newInputStream(f)) {
            byte[] m = in.readNBytes(4);
            return m.length >= 2 && (m[0] & 0xFF) == 0x1F && (m[1] & 0xFF) == 0x8B
                    || m.length == 4 && (m[0] & 0xFF) == 0x28 && (m[1] & 0xFF) == 0xB5 && (m[2] & 0xFF) == 0x2F
                    && (m[3] & 0xFF) == 0xFD;
        }
    }

    /** The offset just after the first newline at or after {@code at} (or the file's size). */
    private static long nextLineStart(Path f, long at, long size) throws IOException {
        try (var ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.READ)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1 << 16);
            long pos = at;
            while (pos < size) {
                b.clear();
                int n = ch.read(b, pos);
                if (n <= 0) {
                    break;
                }
                for (int i = 0; i < n; i++) {
                    if (b.get(i) == '\n') {
                        return pos + i + 1;
                    }
                }
                pos += n;
            }
            return size;
        }
    }

    @Override
    public int shards() {
        return shards.size();
    }

    @Override
    public String shardName(int shard) {
        Range r = shards.get(shard);
        return r.end < 0 ? r.path.toString() : r.path + "[" + r.start + ".." + r.end + ")";
    }

    @Override
    public String name() {
        return shards.isEmpty() ? "jsonl" : shards.get(0).path.toString();
    }

    @Override
    public ShardReader<long[]> open(int shard) throws IOException {
        Range r = shards.get(shard);
        TextDocuments docs = new TextDocuments(r.path, field, skipBad, new AtomicLong(), r.start, r.end);
        int eot = tokenizer.endOfText();
        boolean bytes = tokenizer.name().equals("bytes");
        return new ShardReader<>() {
            private int[] pending = new int[0];
            private int pendingAt;
            private byte[] pendingBytes = new byte[0];
            private int pendingLength;
            private boolean eotDue;

            @Override
            public long[] next() throws IOException {
                long[] pooled = windows.poll();
                long[] window = pooled != null ? pooled : new long[seqLen];
                int filled = 0;
                while (filled < seqLen) {
                    if (bytes) {
                        // the bytes tokenizer: widen the UTF-8 bytes straight into the window
                        if (pendingAt == pendingLength) {
                            if (eotDue) {
                                window[filled++] = eot;
                                eotDue = false;
                                continue;
                            }
                            if (!docs.nextLine()) {
                                windows.offer(window);
                                return null; // the partial window at the end of the shard is dropped
                            }
                            pendingBytes = docs.bytes();
                            pendingAt = docs.offset();
                            pendingLength = pendingAt + docs.length();
                            eotDue = true;
                            continue;
                        }
                        int take = Math.min(seqLen - filled, pendingLength - pendingAt);
                        widen(pendingBytes, pendingAt, window, filled, take);
                        pendingAt += take;
                        filled += take;
                        continue;
                    }
                    if (pendingAt == pending.length) {
                        String doc = docs.next();
                        if (doc == null) {
                            windows.offer(window);
                            return null; // the partial window at the end of the shard is dropped
                        }
                        pending = encode(doc, eot);
                        pendingAt = 0;
                    }
                    int take = Math.min(seqLen - filled, pending.length - pendingAt);
                    for (int i = 0; i < take; i++) {
                        window[filled + i] = pending[pendingAt + i];
                    }
                    pendingAt += take;
                    filled += take;
                }
                return window;
            }

            @Override
            public void close() throws IOException {
                docs.close();
            }
        };
    }

    /**
     * Bytes as unsigned tokens. A method of its own: the JIT vectorizes this loop reliably here,
     * not inside the reader's (measured: the loop took twice the JSON parsing's time inlined there).
     */
    static void widen(byte[] src, int from, long[] dst, int at, int n) {
        for (int i = 0; i < n; i++) {
            dst[at + i] = src[from + i] & 0xFF;
        }
    }

    private int[] encode(String doc, int eot) {
        int[] t = tokenizer.encode(doc);
        int[] out = java.util.Arrays.copyOf(t, t.length + 1);
        out[t.length] = eot;
        return out;
    }

    /**
     * Writes a window as field {@code tokens} (int64: one bulk copy; or int32) of a row, then
     * hands the window back to this dataset's readers for reuse.
     */
    public dev.stoker.Collator<long[]> collator(dev.stoker.DType out) {
        dev.stoker.Schema schema = dev.stoker.Schema.of(dev.stoker.Field.tensor("tokens", out, seqLen));
        return new dev.stoker.Collator<>() {
            @Override
            public dev.stoker.Schema schema() {
                return schema;
            }

            @Override
            public void write(long[] w, dev.stoker.Row row) {
                java.lang.foreign.MemorySegment col = row.column(0);
                long at = row.offset(0);
                if (out == dev.stoker.DType.INT64) {
                    java.lang.foreign.MemorySegment.copy(w, 0, col, TokenCopy.I64, at, w.length);
                } else {
                    for (int i = 0; i < w.length; i++) {
                        col.set(TokenCopy.I32, at + 4L * i, (int) w[i]);
                    }
                }
                windows.offer(w);
            }
        };
    }
}
