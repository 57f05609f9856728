package dev.stoker.formats.tokens;

import dev.stoker.Collator;
import dev.stoker.CorruptRecordException;
import dev.stoker.DType;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.ShardStage;
import dev.stoker.StreamingDataset.ShardReader;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ArrayBlockingQueue;

/**
 * The packing stage: documents' token ids into windows of {@code seqLen} tokens, each document's
 * ids followed by the tokenizer's end-of-text id, consecutive and non-overlapping, as a packed
 * stream reader (nanoGPT's, Megatron's) reads them. Many short documents make one window and one
 * long document makes many; the partial window at the end of a shard is dropped. A malformed
 * document upstream leaves the window being filled as it is, so leaving it out loses none of the
 * ids around it ({@link ShardStage}).
 *
 * <p>Windows are pooled: {@link #collator} writes one into a batch row and hands it back, so the
 * steady state allocates none. With the bytes tokenizer a window holds bytes (NOTE [Byte windows]).
 */
public final class Pack implements ShardStage<Tokenized, Pack.Window> {
    private final int seqLen;
    private final int endOfText;
    private final boolean asBytes;
    private final String tokenizer;
    // windows travel from a reader through the loader to the collator, which copies them into the
    // batch and returns them here (a full pool lets them go)
    private final ArrayBlockingQueue<Window> windows = new ArrayBlockingQueue<>(1024);

    /** Windows of {@code seqLen} ids of {@code tokenizer} (the one {@link Tokenize} used). */
    public Pack(Tokenizer tokenizer, int seqLen) {
        if (seqLen < 1) {
            throw new IllegalArgumentException("seqLen must be >= 1, got " + seqLen);
        }
        this.seqLen = seqLen;
        this.endOfText = tokenizer.endOfText();
        this.asBytes = tokenizer.name().equals("bytes");
        this.tokenizer = tokenizer.name();
    }

    public int seqLen() {
        return seqLen;
    }

    /** The window's length and the end-of-text id: other windows are other data. */
    @Override
    public long fingerprint() {
        return ((long) seqLen << 32) ^ endOfText;
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
        private final long endOfText;
        private int[] eots = new int[4];
        private int eotCount;

        Window(int seqLen, boolean asBytes, long endOfText) {
            this.tokens = asBytes ? null : new long[seqLen];
            this.bytes = asBytes ? new byte[seqLen] : null;
            this.endOfText = endOfText;
        }

        public int length() {
            return tokens != null ? tokens.length : bytes.length;
        }

        /** Token {@code i}. */
        public long token(int i) {
            if (tokens != null) {
                return tokens[i];
            }
            for (int k = 0; k < eotCount; k++) {
                if (eots[k] == i) {
                    return endOfText;
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
    public ShardReader<Window> open(ShardReader<? extends Tokenized> upstream) {
        return new ShardReader<>() {
            /** The document being packed (borrowed from upstream): its bytes or its ids, the next to pack, and the end. */
            private byte[] runBytes;
            private int[] runIds;
            private int runEnd;
            private int at;
            private boolean eotDue;
            /**
             * The window being filled and how far: kept across a malformed document
             * ({@link CorruptRecordException}, thrown past it), so that leaving it out loses none
             * of the ids around it.
             */
            private Window current;
            private int filled;

            @Override
            public Window next() throws IOException {
                if (current == null) {
                    Window pooled = windows.poll();
                    current = pooled != null ? pooled : new Window(seqLen, asBytes, endOfText);
                    current.eotCount = 0;
                    filled = 0;
                }
                Window w = current;
                int filled = this.filled; // a local in the loop; kept in the field across a bad document
                try {
                    while (filled < seqLen) {
                        if (at == runEnd) {
                            if (eotDue) {
                                if (asBytes) {
                                    w.addEot(filled);
                                    w.bytes[filled++] = 0;
                                } else {
                                    w.tokens[filled++] = endOfText;
                                }
                                eotDue = false;
                                continue;
                            }
                            if (!start(upstream.nextBorrowed())) {
                                windows.offer(w);
                                current = null;
                                return null; // the partial window at the end of the shard is dropped
                            }
                            continue;
                        }
                        int take = Math.min(seqLen - filled, runEnd - at);
                        if (asBytes) {
                            System.arraycopy(runBytes, at, w.bytes, filled, take);
                        } else if (runBytes != null) {
                            for (int i = 0; i < take; i++) {
                                w.tokens[filled + i] = runBytes[at + i] & 0xFF;
                            }
                        } else {
                            for (int i = 0; i < take; i++) {
                                w.tokens[filled + i] = runIds[at + i];
                            }
                        }
                        at += take;
                        filled += take;
                    }
                } catch (CorruptRecordException e) {
                    this.filled = filled;
                    throw e;
                }
                current = null;
                return w;
            }

            /** Starts packing document {@code t}; false at the end of the shard. */
            private boolean start(Tokenized t) {
                if (t == null) {
                    return false;
                }
                if (t.isBytes()) {
                    runBytes = t.bytes();
                    runIds = null;
                    at = t.offset();
                } else {
                    if (asBytes) {
                        throw new IllegalArgumentException("a Pack of the bytes tokenizer got the ids of another "
                                + "tokenizer: pack with the tokenizer that made them");
                    }
                    runBytes = null;
                    runIds = t.ids();
                    at = 0;
                }
                runEnd = at + t.length();
                eotDue = true;
                return true;
            }

            @Override
            public void close() throws IOException {
                upstream.close();
            }
        };
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
     * back to this stage's readers for reuse.
     */
    public Collator<Window> collator(DType out) {
        if (out != DType.INT64 && out != DType.INT32) {
            throw new IllegalArgumentException("packed windows are int64 or int32, not " + out);
        }
        Schema schema = Schema.of(Field.tensor("tokens", out, seqLen));
        ThreadLocal<long[]> wide = ThreadLocal.withInitial(() -> new long[seqLen]);
        return new Collator<>() {
            @Override
            public Schema schema() {
                return schema;
            }

            @Override
            public void write(Window w, Row row) {
                MemorySegment col = row.column(0);
                long at = row.offset(0);
                long[] t = w.tokens;
                if (t == null) {
                    t = wide.get();
                    widen(w.bytes, t, seqLen);
                    for (int k = 0; k < w.eotCount; k++) {
                        t[w.eots[k]] = endOfText;
                    }
                }
                if (out == DType.INT64) {
                    MemorySegment.copy(t, 0, col, TokenCopy.I64, at, seqLen);
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

    // ---- NOTE [Window cache]: a window as a record of a WindowCache file ---------------------

    /** A window from the pool (or a new one), empty. */
    Window window() {
        Window w = windows.poll();
        if (w == null) {
            w = new Window(seqLen, asBytes, endOfText);
        }
        w.eotCount = 0;
        return w;
    }

    /** The most bytes {@link #write} takes for one window. */
    int recordBytesAtMost() {
        return asBytes ? 4 + 5 * seqLen : 4 * seqLen;
    }

    /** Writes {@code w} as a record: the bytes tokenizer's as its end-of-text count, their positions and its bytes; others as int32 ids. */
    void write(Window w, java.nio.ByteBuffer out) {
        if (asBytes) {
            out.putInt(w.eotCount);
            for (int k = 0; k < w.eotCount; k++) {
                out.putInt(w.eots[k]);
            }
            out.put(w.bytes, 0, seqLen);
        } else {
            for (int i = 0; i < seqLen; i++) {
                out.putInt((int) w.tokens[i]); // a tokenizer's ids are ints
            }
        }
    }

    /**
     * Reads the record at {@code at} of {@code s} (ending before {@code end}) into {@code w};
     * the position after it.
     *
     * @param base {@code s}'s offset in {@code file}, for messages
     * @throws IOException naming {@code file} and the byte offset, for a record that does not fit
     */
    long read(Window w, MemorySegment s, long at, long end, long base, java.nio.file.Path file) throws IOException {
        if (asBytes) {
            w.eotCount = 0;
            int n = at + 4 <= end ? s.get(RECORD_INT, at) : -1;
            if (n < 0 || n > seqLen || at + 4 + 4L * n + seqLen > end) {
                throw new IOException(file + ": window record at byte " + (base + at) + " holds " + n + " end-of-text positions, "
                        + "expected 0 to " + seqLen + " within the file");
            }
            for (int k = 0; k < n; k++) {
                int p = s.get(RECORD_INT, at + 4 + 4L * k);
                if (p < 0 || p >= seqLen) {
                    throw new IOException(file + ": window record at byte " + (base + at) + ": end-of-text position " + p
                            + " outside a window of " + seqLen);
                }
                w.addEot(p);
            }
            MemorySegment.copy(s, java.lang.foreign.ValueLayout.JAVA_BYTE, at + 4 + 4L * n, w.bytes, 0, seqLen);
            return at + 4 + 4L * n + seqLen;
        }
        if (at + 4L * seqLen > end) {
            throw new IOException(file + ": window record at byte " + (base + at) + " runs past the windows' end at " + (base + end));
        }
        for (int i = 0; i < seqLen; i++) {
            w.tokens[i] = s.get(RECORD_INT, at + 4L * i);
        }
        return at + 4L * seqLen;
    }

    private static final java.lang.foreign.ValueLayout.OfInt RECORD_INT =
            java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    @Override
    public String toString() {
        return "Pack(" + tokenizer + ", " + seqLen + ")";
    }
}
