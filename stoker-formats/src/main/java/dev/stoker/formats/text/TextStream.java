package dev.stoker.formats.text;

import dev.stoker.StreamingDataset;
import dev.stoker.formats.io.Fingerprints;
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
