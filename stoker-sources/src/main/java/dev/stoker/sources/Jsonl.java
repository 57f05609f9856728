package dev.stoker.sources;

import dev.stoker.Collator;
import dev.stoker.Loader;
import dev.stoker.StreamingDataset;
import dev.stoker.formats.text.TextStream;
import dev.stoker.formats.tokens.Pack;
import dev.stoker.formats.tokens.Tokenize;
import dev.stoker.formats.tokens.Tokenizer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * JSON lines ({@code .jsonl}, plain, {@code .gz} or {@code .zst}; local paths or http(s):// and
 * s3:// URLs read through {@code cache}), the text of {@code field} tokenized and packed into
 * windows of {@code seqLen} tokens ({@code tokens}), an end-of-text token after each document.
 * Plain files are read by several workers in ranges of {@code shardKb} KB.
 *
 * @param tokenizer   {@code bytes}, {@code r50k_base} ({@code gpt2}), {@code p50k_base}, {@code cl100k_base} or {@code o200k_base}
 * @param shardBuffer windows each range read ahead may hold
 */
public record Jsonl(List<String> paths, String tokenizer, int seqLen, String field, long shardKb, int shardBuffer,
                    String outDtype, RemoteCache cache) implements SourceSpec {
    public Jsonl {
        paths = paths == null ? List.of() : List.copyOf(paths);
        try {
            Tokenizer.named(tokenizer == null ? "" : tokenizer);
        } catch (IllegalArgumentException e) {
            throw new SpecException("tokenizer", e.getMessage());
        }
        SpecException.atLeast("seq_len", seqLen, 1);
        if (field == null || field.isEmpty()) {
            throw new SpecException("field", "must name a JSON field");
        }
        SpecException.atLeast("shard_kb", shardKb, 1);
        SpecException.atLeast("shard_buffer", shardBuffer, 1);
        Tokens.outType(outDtype);
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /** The field {@code text} as bytes, in windows of 1024 tokens, ranges of 1 MB. */
    public static Jsonl of(List<String> paths) {
        return new Jsonl(paths, "bytes", 1024, "text", 1024, 1024, "int64", RemoteCache.DEFAULT);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        if (paths.isEmpty()) {
            throw new SpecException("paths", "needs at least one JSON lines file");
        }
        Tokenizer tok = Tokenizer.named(tokenizer);
        return Recipe.open(kind(), r -> {
            List<Path> local = r.hold(new LocalCopies(paths, cache)).paths();
            for (Path p : local) {
                if (!Files.isRegularFile(p)) {
                    throw new NoSuchFileException(p.toString());
                }
            }
            // the documents, tokenized and packed as they stream
            Pack pack = new Pack(tok, seqLen);
            StreamingDataset<Pack.Window> data = new TextStream(local, field, shardKb << 10)
                    .through(new Tokenize(tok).andThen(pack));
            Collator<Pack.Window> collator = pack.collator(Tokens.outType(outDtype));
            r.tokensPerSample(seqLen).shardBuffer(shardBuffer).base(() -> Loader.builder(data, collator));
        });
    }
}
