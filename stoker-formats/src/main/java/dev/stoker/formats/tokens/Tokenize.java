package dev.stoker.formats.tokens;

import dev.stoker.ShardStage;
import dev.stoker.StreamingDataset.ShardReader;
import dev.stoker.formats.text.Document;
import java.io.IOException;

/**
 * The tokenizing stage: each document's token ids with a {@link Tokenizer}, one out for each
 * document in, on the thread reading the shard. Usually followed by {@link Pack}:
 * {@code new TextStream(files, "text", shardBytes).through(new Tokenize(t).andThen(new Pack(t, 1024)))}.
 */
public final class Tokenize implements ShardStage<Document, Tokenized> {
    private final Tokenizer tokenizer;
    private final boolean bytes;

    public Tokenize(Tokenizer tokenizer) {
        this.tokenizer = java.util.Objects.requireNonNull(tokenizer, "tokenizer");
        this.bytes = tokenizer.name().equals("bytes");
    }

    /** The ids of one document: the bytes tokenizer's are the document's own bytes (borrowed if it is). */
    public Tokenized apply(Document d) {
        return bytes ? Tokenized.ofBytes(d.bytes(), d.offset(), d.length()) : Tokenized.ofIds(tokenizer.encode(d.text()));
    }

    @Override
    public ShardReader<Tokenized> open(ShardReader<? extends Document> upstream) {
        return new ShardReader<>() {
            /** The borrowed value, moved from document to document (the bytes tokenizer's). */
            private final Tokenized view = Tokenized.ofBytes(new byte[0], 0, 0);

            @Override
            public Tokenized next() throws IOException {
                Document d = upstream.next();
                return d == null ? null : apply(d);
            }

            @Override
            public Tokenized nextBorrowed() throws IOException {
                Document d = upstream.nextBorrowed();
                return d == null ? null : bytes ? view.borrow(d.bytes(), d.offset(), d.length()) : apply(d);
            }

            @Override
            public void close() throws IOException {
                upstream.close();
            }
        };
    }

    /** The tokenizer's name: other ids are other data. */
    @Override
    public long fingerprint() {
        return tokenizer.name().hashCode();
    }
}
