package dev.stoker.formats.text;

import dev.stoker.StreamingDataset;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.io.TextDocuments;
import dev.stoker.formats.io.TextRange;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The documents of text files as a stream of shards: a {@code .jsonl} file's string field
 * {@code field}, one document per line, or a {@code .txt} file as one document
 * ({@link TextDocuments} reads them). A sample is a {@link Document}: a copy of the line's
 * bytes, or, to a stage reading with {@code nextBorrowed()}, a view of the reader's buffer. Read
 * it through stages ({@link StreamingDataset#through}) to tokenize and pack it.
 *
 * <p>Shards: an uncompressed JSON-lines file is cut into ranges of about {@code shardBytes}, each
 * starting just after a newline, so that several workers read one file in parallel; a compressed
 * file ({@code .gz}, {@code .zst}) or a text file is one shard. A malformed line is a
 * {@link dev.stoker.CorruptRecordException} naming the file, the line and its byte offset, and
 * the loader's {@link dev.stoker.ErrorPolicy} decides.
 */
public final class TextStream implements StreamingDataset<Document> {
    private final String field;
    private final List<TextRange> shards;
    /** Computed when first asked (two reads of each file), then kept. */
    private volatile long fingerprint;

    public TextStream(List<Path> files, String field, long shardBytes) throws IOException {
        this.field = java.util.Objects.requireNonNull(field, "field");
        this.shards = TextRange.cutFiles(files, shardBytes);
    }

    @Override
    public int shards() {
        return shards.size();
    }

    @Override
    public String shardName(int shard) {
        return shards.get(shard).toString();
    }

    @Override
    public String name() {
        return shards.isEmpty() ? "text" : shards.get(0).location();
    }

    /**
     * The files' contents ({@link Fingerprints#ends}: two reads each, local files only) in order,
     * and the field: not how the files are cut into shards, nor where they live.
     */
    @Override
    public long fingerprint() {
        if (fingerprint != 0) {
            return fingerprint;
        }
        long h = field.hashCode();
        String last = null;
        for (TextRange r : shards) {
            if (!r.location().equals(last)) {
                last = r.location();
                try {
                    h = Fingerprints.and(h, Fingerprints.ends(Path.of(r.location())));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e); // read when the loader is made: reported as the file's error
                }
            }
        }
        fingerprint = h == 0 ? 1 : h;
        return fingerprint;
    }

    /**
     * A CRC-32C of shard {@code shard}'s bytes as they lie in its file (its range, or the whole
     * compressed file), with the range: what a {@link dev.stoker.formats.tokens.WindowCache}
     * checks its kept windows against. Read again only when the file's size or time changed.
     */
    public long digest(int shard) throws IOException {
        TextRange r = shards.get(shard);
        Path file = Path.of(r.location());
        var a = java.nio.file.Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class);
        long[] known = digests.get(shard);
        long modified = a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS);
        if (known != null && known[0] == a.size() && known[1] == modified) {
            return known[2]; // the file has not changed since this stream read it
        }
        long d = digestOf(r, file);
        digests.put(shard, new long[] {a.size(), modified, d});
        return d;
    }

    private final java.util.concurrent.ConcurrentHashMap<Integer, long[]> digests = new java.util.concurrent.ConcurrentHashMap<>();

    private static long digestOf(TextRange r, Path file) throws IOException {
        try (dev.stoker.formats.io.MappedFile f = dev.stoker.formats.io.MappedFile.open(file)) {
            long from = r.isWhole() ? 0 : r.start();
            long to = r.isWhole() ? f.size() : Math.min(r.end(), f.size());
            java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            for (long at = from; at < to; at += 1L << 30) {
                crc.update(f.segment().asSlice(at, Math.min(1L << 30, to - at)).asByteBuffer());
            }
            return Fingerprints.and(Fingerprints.and(crc.getValue(), from), to - from);
        }
    }

    @Override
    public ShardReader<Document> open(int shard) throws IOException {
        TextDocuments docs = shards.get(shard).open(field, new AtomicLong());
        return new ShardReader<>() {
            /** The borrowed document, moved over the reader's buffer from line to line. */
            private final Document view = new Document(new byte[0], 0, 0);

            @Override
            public Document next() throws IOException {
                return docs.nextDocument() ? new Document(Arrays.copyOfRange(docs.bytes(), docs.offset(), docs.offset() + docs.length())) : null;
            }

            @Override
            public Document nextBorrowed() throws IOException {
                if (!docs.nextDocument()) {
                    return null;
                }
                view.set(docs.bytes(), docs.offset(), docs.length());
                return view;
            }

            @Override
            public void close() throws IOException {
                docs.close();
            }
        };
    }
}
