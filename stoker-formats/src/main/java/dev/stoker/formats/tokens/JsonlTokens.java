package dev.stoker.formats.tokens;

import dev.stoker.formats.io.Compression;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.text.TextDocuments;
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
 * ({@code .gz}, {@code .zst}) is one shard. A sample is a {@link Window}.
 */
public final class JsonlTokens implements dev.stoker.StreamingDataset<JsonlTokens.Window> {
    private final Tokenizer tokenizer;
    private final String field;
    private final int seqLen;
    private final List<Range> shards = new ArrayList<>();
    // windows travel from a reader through the loader to the collator, which copies them into the
    // batch and returns them here: the steady state allocates none (a full pool lets them go)
    private final java.util.concurrent.ArrayBlockingQueue<Window> windows = new java.util.concurrent.ArrayBlockingQueue<>(1024);
    /** The bytes tokenizer: windows of bytes (NOTE [Byte windows]). */
    private final boolean asBytes;
    /** Computed when first asked (two reads of each file), then kept. */
    private volatile long fingerprint;

    private record Range(Path path, long start, long end) {
    }

    public JsonlTokens(List<Path> files, Tokenizer tokenizer, String field, int seqLen, long shardBytes)
            throws IOException {
        if (seqLen < 1 || shardBytes < 1) {
            throw new IllegalArgumentException("seqLen and shardBytes must be >= 1, got " + seqLen + " and " + shardBytes);
        }
        this.tokenizer = tokenizer;
        this.field = field;
        this.seqLen = seqLen;
        this.asBytes = tokenizer.name().equals("bytes");
        for (Path f : files) {
            String name = f.getFileName().toString();
            long size = Files.size(f);
            if (name.endsWith(".gz") || name.endsWith(".zst") || Compression.of(f) != null || size <= shardBytes) {
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

    /**
     * The files' contents ({@link Fingerprints#ends}: two reads each, local files only) in order,
     * with what shapes the windows: the tokenizer, the field and the window's length.
     */
    @Override
    public long fingerprint() {
        if (fingerprint != 0) {
            return fingerprint;
        }
        long h = Fingerprints.and(tokenizer.name().hashCode(), field.hashCode());
        h = Fingerprints.and(h, seqLen);
        Path last = null;
        for (Range r : shards) {
            if (!r.path.equals(last)) {
                last = r.path;
                try {
                    h = Fingerprints.and(h, Fingerprints.ends(r.path));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e); // read when the loader is made: reported as the file's error
                }
            }
        }
        fingerprint = h == 0 ? 1 : h;
        return fingerprint;
    }

    /**
     * A window of {@code seqLen} tokens. The bytes tokenizer's are kept as its bytes with the
     * positions of its end-of-text tokens, an eighth of the memory of int64 tokens: the window
     * crosses from a reader's core to the consumer's and back to a reader (pooled), and moving
     * 8 KB of cache lines each way cost more than widening into the batch (NOTE [Byte windows]).
     * Other tokenizers' are int64 tokens.
     */
    public static final class Window {
        private final long[] tokens;
        private final byte[] bytes;
        private int[] eots = new int[4];
        private int eotCount;

        Window(int seqLen, boolean asBytes) {
            this.tokens = asBytes ? null : new long[seqLen];
            this.bytes = asBytes ? new byte[seqLen] : null;
        }

        public int length() {
            return tokens != null ? tokens.length : bytes.length;
        }

        /** Token {@code i} (a byte window's end-of-text token is {@code eot}). */
        public long token(int i, long eot) {
            if (tokens != null) {
                return tokens[i];
            }
            for (int k = 0; k < eotCount; k++) {
                if (eots[k] == i) {
                    return eot;
                }
            }
            return bytes[i] & 0xFF;
        }

        private void addEot(int at) {
            if (eotCount == eots.length) {
                eots = java.util.Arrays.copyOf(eots, 2 * eotCount);
            }
            eots[eotCount++] = at;
        }
    }

    @Override
    public ShardReader<Window> open(int shard) throws IOException {
        Range r = shards.get(shard);
        TextDocuments docs = new TextDocuments(r.path, field, new AtomicLong(), r.start, r.end);
        int eot = tokenizer.endOfText();
        return new ShardReader<>() {
            private int[] pending = new int[0];
            private int pendingAt;
            private byte[] pendingBytes = new byte[0];
            private int pendingLength;
            private boolean eotDue;
            /**
             * The window being filled and how far: kept across a malformed line
             * ({@link dev.stoker.CorruptRecordException}, thrown past it), so that leaving the
             * line out loses none of the tokens around it.
             */
            private Window current;
            private int filled;

            @Override
            public Window next() throws IOException {
                if (current == null) {
                    Window pooled = windows.poll();
                    current = pooled != null ? pooled : new Window(seqLen, asBytes);
                    current.eotCount = 0;
                    filled = 0;
                }
                Window w = current;
                int filled = this.filled; // a local in the loop; kept in the field across a bad line
                try {
                    while (filled < seqLen) {
                        if (asBytes) {
                            // the bytes tokenizer: the UTF-8 bytes are the tokens
                            if (pendingAt == pendingLength) {
                                if (eotDue) {
                                    w.addEot(filled);
                                    w.bytes[filled++] = 0;
                                    eotDue = false;
                                    continue;
                                }
                                if (!docs.nextLine()) {
                                    windows.offer(w);
                                    current = null;
                                    return null; // the partial window at the end of the shard is dropped
                                }
                                pendingBytes = docs.bytes();
                                pendingAt = docs.offset();
                                pendingLength = pendingAt + docs.length();
                                eotDue = true;
                                continue;
                            }
                            int take = Math.min(seqLen - filled, pendingLength - pendingAt);
                            System.arraycopy(pendingBytes, pendingAt, w.bytes, filled, take);
                            pendingAt += take;
                            filled += take;
                            continue;
                        }
                        if (pendingAt == pending.length) {
                            String doc = docs.next();
                            if (doc == null) {
                                windows.offer(w);
                                current = null;
                                return null; // the partial window at the end of the shard is dropped
                            }
                            pending = encode(doc, eot);
                            pendingAt = 0;
                        }
                        int take = Math.min(seqLen - filled, pending.length - pendingAt);
                        for (int i = 0; i < take; i++) {
                            w.tokens[filled + i] = pending[pendingAt + i];
                        }
                        pendingAt += take;
                        filled += take;
                    }
                } catch (dev.stoker.CorruptRecordException e) {
                    this.filled = filled;
                    throw e;
                }
                current = null;
                return w;
            }

            @Override
            public void close() throws IOException {
                docs.close();
            }
        };
    }

    private int[] encode(String doc, int eot) {
        int[] t = tokenizer.encode(doc);
        int[] out = java.util.Arrays.copyOf(t, t.length + 1);
        out[t.length] = eot;
        return out;
    }

    // NOTE [Byte windows]: with the bytes tokenizer a window is 1 KB of bytes (plus a few
    // end-of-text positions) rather than 8 KB of int64 tokens. A reader fills it, the consumer
    // widens it into the batch row through a small array of its own (in its L1 cache: the widening
    // loop vectorizes, the copy into the row is one bulk copy) and hands it back to the pool. With
    // int64 windows, the reader's writes into a window the consumer had just read and the
    // consumer's reads of a window another core had just written moved 128 cache lines across
    // cores each way per window; the reader's widening loop was then its largest cost in a profile.

    /**
     * Writes a window as field {@code tokens} (int64 or int32) of a row, then hands the window
     * back to this dataset's readers for reuse.
     */
    public dev.stoker.Collator<Window> collator(dev.stoker.DType out) {
        dev.stoker.Schema schema = dev.stoker.Schema.of(dev.stoker.Field.tensor("tokens", out, seqLen));
        long eot = tokenizer.endOfText();
        ThreadLocal<long[]> wide = ThreadLocal.withInitial(() -> new long[seqLen]);
        return new dev.stoker.Collator<>() {
            @Override
            public dev.stoker.Schema schema() {
                return schema;
            }

            @Override
            public void write(Window w, dev.stoker.Row row) {
                java.lang.foreign.MemorySegment col = row.column(0);
                long at = row.offset(0);
                long[] t = w.tokens;
                if (t == null) {
                    t = wide.get();
                    widen(w.bytes, t, seqLen);
                    for (int k = 0; k < w.eotCount; k++) {
                        t[w.eots[k]] = eot;
                    }
                }
                if (out == dev.stoker.DType.INT64) {
                    java.lang.foreign.MemorySegment.copy(t, 0, col, TokenCopy.I64, at, seqLen);
                } else {
                    for (int i = 0; i < seqLen; i++) {
                        col.set(TokenCopy.I32, at + 4L * i, (int) t[i]);
                    }
                }
                windows.offer(w);
            }
        };
    }

    /** Bytes as unsigned tokens (a loop the JIT vectorizes). */
    static void widen(byte[] src, long[] dst, int n) {
        for (int i = 0; i < n; i++) {
            dst[i] = src[i] & 0xFF;
        }
    }
}
