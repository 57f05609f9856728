package dev.stoker.sources;

import dev.stoker.Collator;
import dev.stoker.Loader;
import dev.stoker.StreamingDataset;
import dev.stoker.formats.text.TextStream;
import dev.stoker.formats.tokens.Pack;
import dev.stoker.formats.tokens.Tokenize;
import dev.stoker.formats.tokens.Tokenizer;
import dev.stoker.formats.tokens.WindowCache;
import dev.stoker.sources.Schema.Choices;
import dev.stoker.sources.Schema.Format;
import dev.stoker.sources.Schema.Min;
import dev.stoker.storage.io.UserCache;
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
 * @param windowCache {@code disk}: each shard's packed windows kept in a file in
 *                    {@code $XDG_CACHE_HOME/stoker/windows} (default {@code ~/.cache/stoker/windows})
 *                    once a pass has packed it whole, and read from there by every later pass,
 *                    process and run ({@link WindowCache}); a path (with a {@code /}): the files
 *                    in that folder; null: every epoch tokenizes again
 */
public record Jsonl(List<String> paths,
                    @Choices({"bytes", "r50k_base", "gpt2", "p50k_base", "cl100k_base", "o200k_base"}) String tokenizer,
                    @Min(1) int seqLen, String field, @Min(1) long shardKb, @Min(1) int shardBuffer,
                    @Choices({"int64", "int32"}) String outDtype, @Format(value = "folder", words = "disk") String windowCache,
                    RemoteCache cache) implements SourceSpec {
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
        if (windowCache != null) {
            SpecException.modeOrFolder("window_cache", windowCache, "disk");
        }
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /** The field {@code text} as bytes, in windows of 1024 tokens, ranges of 1 MB. */
    public static Jsonl of(List<String> paths) {
        return new Jsonl(paths, "bytes", 1024, "text", 1024, 1024, "int64", null, RemoteCache.DEFAULT);
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
            TextStream text = new TextStream(local, field, shardKb << 10);
            StreamingDataset<Pack.Window> data = text.through(new Tokenize(tok).andThen(pack));
            if (windowCache != null) {
                data = windowCache(r, text, data, pack, local);
            }
            Collator<Pack.Window> collator = pack.collator(Tokens.outType(outDtype));
            StreamingDataset<Pack.Window> stream = data;
            r.tokensPerSample(seqLen).shardBuffer(shardBuffer).base(() -> Loader.builder(stream, collator));
        });
    }

    /**
     * {@code packed} with its windows kept in {@link #windowCache}'s folder: refused, with the
     * numbers, when the folder's disk has no room for about as many bytes as the text (a
     * window keeps a token in 4 bytes, a byte of the bytes tokenizer in 1).
     */
    private StreamingDataset<Pack.Window> windowCache(Recipe r, TextStream text, StreamingDataset<Pack.Window> packed,
                                                      Pack pack, List<Path> local) throws IOException {
        Path folder = windowCache.equals("disk") ? UserCache.dir("windows") : Path.of(windowCache);
        long bytes = 0;
        for (Path p : local) {
            bytes += Files.size(p);
        }
        WindowCache cache = new WindowCache(packed, pack, folder, text::digest);
        long usable = Files.getFileStore(folder).getUsableSpace();
        long estimate = bytes + bytes / 4;
        if (estimate - cache.bytesKept() > usable) { // files kept already need no more room
            throw SpecException.naming("window_cache", String.format(java.util.Locale.ROOT, "would keep about %,d bytes of "
                    + "packed windows (%,d bytes of text) in %s, which has %,d bytes free: free some or give another folder",
                    estimate, bytes, folder, usable));
        }
        r.report(() -> String.format(java.util.Locale.ROOT, "window cache %s: %d shards read back, %d kept, %d failed "
                + "their check", folder, cache.hits(), cache.kept(), cache.dropped()));
        return cache;
    }
}
