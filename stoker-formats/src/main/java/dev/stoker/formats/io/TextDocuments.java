package dev.stoker.formats.io;

import dev.stoker.CorruptRecordException;
import dev.stoker.CorruptShardException;
import java.io.BufferedInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Documents of a text file, read front to back: a {@code .txt} file is one document; a
 * {@code .jsonl} file holds one JSON object per line and its string field {@code field} is the
 * document. Either may be compressed ({@code .gz}, {@code .zst}; recognised by suffix and by magic
 * bytes). A malformed line (bad JSON, no such string field, invalid UTF-8) is a
 * {@link CorruptRecordException} naming the file and line, thrown once the reader is past it: the
 * caller's {@link dev.stoker.ErrorPolicy} decides whether reading goes on.
 */
public final class TextDocuments implements AutoCloseable {

    /** The file's location, as {@link dev.stoker.storage.Storage} opens it and errors name it. */
    private final String path;
    private final String field;
    private final boolean jsonl;
    private final CountingStream counted;
    private final InputStream in;
    private final java.nio.charset.CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
    private byte[] lineBuf;
    private int lineFrom;
    private byte[] gather = new byte[1 << 12];
    private final JsonLine json;
    private final byte[] readBuf = new byte[1 << 16];
    private int readPos;
    private int readEnd;
    private final long rangeStart;
    private final boolean compressed;
    private long line;
    private long lineOffset;
    private long nextOffset;
    private boolean txtDone;
    /** A {@code .txt} file's one document, and its text. */
    private byte[] txt;
    private String txtText;

    public TextDocuments(Path path, String field, AtomicLong bytesRead) throws IOException {
        this(path, field, bytesRead, 0, -1);
    }

    /**
     * The lines of bytes {@code [start, end)} of an uncompressed JSON lines file ({@code end < 0}:
     * to the end). {@code start} must be 0 or just after a newline. Errors then name the byte
     * offset of the line, and its line number counted from {@code start}.
     */
    public TextDocuments(Path path, String field, AtomicLong bytesRead, long start, long end)
            throws IOException {
        this(path.toString(), field, bytesRead, start, end);
    }

    /**
     * {@link #TextDocuments(Path, String, AtomicLong, long, long)} of a location
     * {@link dev.stoker.storage.Storage} opens: a local path, an {@code s3://} or {@code http(s)://} URL.
     */
    public TextDocuments(String path, String field, AtomicLong bytesRead, long start, long end) throws IOException {
        this.path = path;
        this.field = field;
        this.json = new JsonLine(field);
        String name = dev.stoker.storage.Locations.baseName(path);
        String base = name.endsWith(".gz") || name.endsWith(".zst") ? name.substring(0, name.lastIndexOf('.')) : name;
        if (base.endsWith(".jsonl") || base.endsWith(".json") || base.endsWith(".ndjson")) {
            this.jsonl = true;
        } else if (base.endsWith(".txt") || base.endsWith(".text")) {
            this.jsonl = false;
        } else {
            throw new IllegalArgumentException(path + ": expected .txt or .jsonl (optionally .gz or .zst)");
        }
        InputStream raw = start > 0 || end >= 0 ? range(path, start, end) : dev.stoker.storage.Storage.open(path);
        InputStream body;
        try {
            this.rangeStart = start;
            this.counted = new CountingStream(raw, bytesRead);
            body = start > 0 || end >= 0 ? counted : Compression.decompress(counted, path);
        } catch (IOException | RuntimeException e) {
            raw.close();
            throw e;
        }
        this.compressed = body != counted && !(body instanceof BufferedInputStream);
        // decompression runs on a thread of its own, ahead of the parsing
        this.in = compressed ? new ReadAhead(body, 4, 1 << 20) : body;
    }

    /** The next document, or null at the end of the file. */
    public String next() throws IOException {
        if (!nextDocument()) {
            return null;
        }
        return jsonl ? new String(bytes(), offset(), length(), StandardCharsets.UTF_8) : txtText;
    }

    /**
     * Moves to the next document and leaves its UTF-8 bytes (validated) in {@link #bytes()};
     * false at the end of the file. No String is made.
     */
    public boolean nextDocument() throws IOException {
        if (!jsonl) {
            if (txtDone) {
                return false;
            }
            txtDone = true;
            byte[] all = in.readAllBytes();
            try {
                txtText = utf8.decode(java.nio.ByteBuffer.wrap(all)).toString(); // validates: decoded once
            } catch (CharacterCodingException e) {
                throw new CorruptShardException(path, -1, "invalid UTF-8: " + e.getMessage(), e);
            }
            txt = all;
            return true;
        }
        while (true) {
            lineOffset = nextOffset;
            int n = readLine();
            if (n < 0) {
                return false;
            }
            line++;
            if (blank(lineBuf, lineFrom, n)) {
                continue;
            }
            try {
                if (json.parse(lineBuf, lineFrom, lineFrom + n)) {
                    return true;
                }
                throw bad("no string field '" + field + "'");
            } catch (JsonLine.Malformed e) {
                String m = e.getMessage();
                throw bad((m.contains("UTF-8") ? "" : "malformed JSON: ") + m);
            }
        }
    }

    /**
     * The array holding the current document's UTF-8 bytes (after {@link #nextDocument()}), at
     * {@link #offset()} for {@link #length()} bytes; valid until the next call.
     */
    public byte[] bytes() {
        return jsonl ? json.value() : txt;
    }

    public int offset() {
        return jsonl ? json.offset() : 0;
    }

    public int length() {
        return jsonl ? json.length() : txt.length;
    }

    private static boolean blank(byte[] b, int from, int n) {
        for (int i = from; i < from + n; i++) {
            byte c = b[i];
            if (c != ' ' && c != '\t' && c != '\r') {
                return false;
            }
        }
        return true;
    }

    /**
     * Reads the next line (without its newline); its length, or -1 at the end. The bytes are at
     * {@code lineBuf[lineFrom, lineFrom + length)}: the read buffer itself when the line lies
     * inside it (no copy), else a line buffer it was gathered into.
     */
    private int readLine() throws IOException {
        if (readPos < readEnd) {
            int nl = indexOfNewline(readBuf, readPos, readEnd);
            if (nl >= 0) {
                int n = nl - readPos;
                lineBuf = readBuf;
                lineFrom = readPos;
                readPos = nl + 1;
                nextOffset += n + 1;
                return trimCr(n);
            }
        }
        int n = 0;
        boolean any = false;
        while (true) {
            if (readPos == readEnd) {
                readEnd = in.read(readBuf, 0, readBuf.length);
                readPos = 0;
                if (readEnd <= 0) {
                    readEnd = 0;
                    lineBuf = gather;
                    lineFrom = 0;
                    return any ? n : -1;
                }
            }
            any = true;
            int nl = indexOfNewline(readBuf, readPos, readEnd);
            int stop = nl >= 0 ? nl : readEnd;
            int len = stop - readPos;
            if (n + len > gather.length) {
                gather = java.util.Arrays.copyOf(gather, Math.max(n + len, gather.length * 2));
            }
            System.arraycopy(readBuf, readPos, gather, n, len);
            n += len;
            nextOffset += len;
            readPos = stop;
            if (nl >= 0) {
                readPos++;
                nextOffset++;
                lineBuf = gather;
                lineFrom = 0;
                return trimCr(n);
            }
        }
    }

    private int trimCr(int n) {
        return n > 0 && lineBuf[lineFrom + n - 1] == '\r' ? n - 1 : n;
    }

    private static final java.lang.invoke.VarHandle WORD =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

    /** The first newline in {@code b[from, to)}, eight bytes at a time; -1 if none. */
    private static int indexOfNewline(byte[] b, int from, int to) {
        int i = from;
        while (to - i >= 8) {
            long w = (long) WORD.get(b, i) ^ 0x0A0A0A0A0A0A0A0AL;
            long z = (w - 0x0101010101010101L) & ~w & 0x8080808080808080L;
            if (z != 0) {
                return i + (Long.numberOfTrailingZeros(z) >>> 3);
            }
            i += 8;
        }
        for (; i < to; i++) {
            if (b[i] == '\n') {
                return i;
            }
        }
        return -1;
    }

    private CorruptRecordException bad(String what) {
        String where = rangeStart == 0 ? "line " + line : "line " + line + " of the range from byte " + rangeStart;
        return new CorruptRecordException(path, compressed ? -1 : rangeStart + lineOffset, where + ": " + what);
    }

    private static InputStream range(String path, long start, long end) throws IOException {
        return dev.stoker.storage.Storage.open(path, start, end < 0 ? -1 : end - start);
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    /** Counts the bytes read from the file (compressed), for progress. */
    private static final class CountingStream extends FilterInputStream {
        private final AtomicLong count;

        CountingStream(InputStream in, AtomicLong count) {
            super(in);
            this.count = count;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count.incrementAndGet();
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                count.addAndGet(n);
            }
            return n;
        }
    }
}
