package dev.stoker.formats.tokens;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.DType;
import dev.stoker.ErrorPolicy;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.LoaderException;
import dev.stoker.StreamingDataset;
import dev.stoker.formats.io.ReadAhead;
import dev.stoker.formats.text.Document;
import dev.stoker.formats.text.TextStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Text tokenized and packed as it streams: {@link TextStream} through {@link Tokenize} and {@link Pack}. */
public class TokenStagesTest {
    /** JSON lines' field {@code text} tokenized and packed into windows of {@code seq}, with the collator of their pack. */
    public record Packed(StreamingDataset<Pack.Window> data, Pack pack) {
        public static Packed of(List<Path> files, Tokenizer tokenizer, String field, int seq, long shardBytes)
                throws IOException {
            Pack pack = new Pack(tokenizer, seq);
            return new Packed(new TextStream(files, field, shardBytes).through(new Tokenize(tokenizer).andThen(pack)), pack);
        }

        public static Packed bytes(Path file, int seq, long shardBytes) throws IOException {
            return of(List.of(file), Tokenizer.named("bytes"), "text", seq, shardBytes);
        }

        public LoaderBuilder builder(DType out) {
            return Loader.builder(data, pack.collator(out));
        }

        public long fingerprint() {
            return data.fingerprint();
        }

        public int shards() {
            return data.shards();
        }
    }

    @TempDir
    Path tmp;

    Path write(String name, int docs) throws IOException {
        Path p = tmp.resolve(name);
        try (OutputStream out = name.endsWith(".gz") ? new GZIPOutputStream(Files.newOutputStream(p)) : Files.newOutputStream(p)) {
            for (int i = 0; i < docs; i++) {
                out.write(("{\"text\": \"doc " + i + " " + "é".repeat(i % 7) + "\"}\n").getBytes(StandardCharsets.UTF_8));
            }
        }
        return p;
    }

    /** The packed stream of one shard, as the peer packs a file: bytes then 256 after each document. */
    static List<Long> stream(int from, int to) {
        List<Long> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            for (byte b : ("doc " + i + " " + "é".repeat(i % 7)).getBytes(StandardCharsets.UTF_8)) {
                out.add((long) (b & 0xFF));
            }
            out.add(256L);
        }
        return out;
    }

    static List<Long> delivered(Loader l, int seq) {
        List<Long> out = new ArrayList<>();
        for (Batch b : l) {
            for (int r = 0; r < b.size(); r++) {
                for (int j = 0; j < seq; j++) {
                    out.add(b.data(0).get(ValueLayout.JAVA_LONG_UNALIGNED, (r * (long) seq + j) * 8));
                }
            }
        }
        return out;
    }

    @Test
    void theFingerprintIsTheContentsAndTheWindowsNotThePlaces() throws IOException {
        Path a = Files.writeString(tmp.resolve("a.jsonl"), "{\"text\": \"one\"}\n{\"text\": \"two\"}\n");
        Path copy = Files.copy(a, Files.createDirectories(tmp.resolve("elsewhere")).resolve("a.jsonl"));
        Path other = Files.writeString(tmp.resolve("b.jsonl"), "{\"text\": \"one\"}\n{\"text\": \"tWo\"}\n");
        Tokenizer bytes = Tokenizer.named("bytes");
        long x = Packed.of(List.of(a), bytes, "text", 8, 1 << 20).fingerprint();
        assertTrue(x != 0);
        assertEquals(x, Packed.of(List.of(copy), bytes, "text", 8, 1 << 20).fingerprint());
        assertEquals(x, Packed.of(List.of(a), bytes, "text", 8, 4).fingerprint(), "how it is split is not the data");
        for (Packed differs : List.of(Packed.of(List.of(other), bytes, "text", 8, 1 << 20),
                Packed.of(List.of(a), bytes, "text", 9, 1 << 20),
                Packed.of(List.of(a), bytes, "body", 8, 1 << 20),
                Packed.of(List.of(a, copy), bytes, "text", 8, 1 << 20),
                Packed.of(List.of(a), Tokenizer.named("gpt2"), "text", 8, 1 << 20))) {
            assertTrue(differs.fingerprint() != x, differs.data().shardName(0));
        }
    }

    @Test
    void aTextFileIsOneDocumentPackedAsAJsonLineWithTheSameTextIs() throws IOException {
        String text = "one document\nof two lines, é and 😀\n";
        Path txt = Files.writeString(tmp.resolve("doc.txt"), text.repeat(40));
        Path line = Files.writeString(tmp.resolve("doc.jsonl"), "{\"text\": \"" + text.repeat(40).replace("\n", "\\n") + "\"}\n");
        for (Tokenizer t : List.of(Tokenizer.named("bytes"), Tokenizer.named("gpt2"))) {
            List<Long> fromTxt;
            try (Loader l = Packed.of(List.of(txt), t, "text", 16, 64).builder(DType.INT64).batchSize(2).build()) {
                fromTxt = delivered(l, 16);
            }
            try (Loader l = Packed.of(List.of(line), t, "text", 16, 64).builder(DType.INT64).batchSize(2).build()) {
                assertEquals(fromTxt, delivered(l, 16), t.name());
            }
            assertTrue(fromTxt.size() >= 16 * 10, t.name() + ": " + fromTxt.size());
        }
    }

    @Test
    void tokenizeGivesTheTokenizersIdsAndTheBytesTokenizerTheDocumentsOwnBytes() {
        Document d = new Document("héllo, wörld".getBytes(StandardCharsets.UTF_8));
        Tokenizer gpt2 = Tokenizer.named("gpt2");
        assertTrue(java.util.Arrays.equals(gpt2.encode(d.text()), new Tokenize(gpt2).apply(d).ids()));
        Tokenized b = new Tokenize(Tokenizer.named("bytes")).apply(d);
        assertTrue(b.bytes() == d.bytes() && b.offset() == d.offset() && b.length() == d.length(), "no copy");
    }

    @Test
    void aDocumentFromNextIsOwnedAndOneFromNextBorrowedIsAViewOfTheSameText() throws IOException {
        Path p = write("d.jsonl", 50);
        TextStream text = new TextStream(List.of(p), "text", 1 << 20);
        List<Document> owned = new ArrayList<>();
        List<String> borrowed = new ArrayList<>();
        try (var r = text.open(0)) {
            for (Document d; (d = r.next()) != null; ) {
                owned.add(d);
            }
        }
        try (var r = text.open(0)) {
            for (Document d; (d = r.nextBorrowed()) != null; ) {
                borrowed.add(d.text());
            }
        }
        assertEquals(50, owned.size());
        for (int i = 0; i < 50; i++) {
            String want = "doc " + i + " " + "é".repeat(i % 7);
            assertEquals(want, owned.get(i).text(), "kept documents are not overwritten by later lines");
            assertEquals(want, borrowed.get(i));
        }
    }

    @Test
    void aPackOfBytesRefusesAnotherTokenizersIds() throws IOException {
        Path p = write("c.jsonl", 20);
        Pack bytes = new Pack(Tokenizer.named("bytes"), 8);
        StreamingDataset<Pack.Window> wrong = new TextStream(List.of(p), "text", 1 << 20)
                .through(new Tokenize(Tokenizer.named("gpt2")).andThen(bytes));
        try (Loader l = Loader.builder(wrong, bytes.collator(DType.INT64)).batchSize(2).build()) {
            LoaderException e = assertThrows(LoaderException.class, () -> delivered(l, 8));
            assertTrue(e.getMessage().contains("pack with the tokenizer that made them"), e.getMessage());
        }
    }

    @Test
    void packsTheBytesOfEachDocumentAndASeparatorIntoWindows() throws IOException {
        for (String name : new String[] {"a.jsonl", "a.jsonl.gz"}) {
            Path p = write(name, 500);
            int seq = 64;
            Packed t = Packed.bytes(p, seq, 1 << 20);
            assertEquals(1, t.shards());
            try (Loader l = t.builder(DType.INT64).batchSize(8).workers(2).build()) {
                List<Long> want = stream(0, 500);
                List<Long> got = delivered(l, seq);
                assertEquals(want.size() / seq * seq, got.size(), "whole windows; the remainder is dropped");
                assertEquals(want.subList(0, got.size()), got);
            }
        }
    }

    @Test
    void int32BatchesHoldTheSameTokensAndOtherTokenizersPackTheirIds() throws IOException {
        Path p = write("b.jsonl", 300);
        int seq = 48;
        Packed bytes = Packed.bytes(p, seq, 1 << 20);
        List<Long> wide;
        try (Loader l = bytes.builder(DType.INT64).batchSize(5).workers(2).build()) {
            wide = delivered(l, seq);
        }
        List<Long> narrow = new ArrayList<>();
        try (Loader l = bytes.builder(DType.INT32).batchSize(5).workers(2).build()) {
            for (Batch b : l) {
                for (long i = 0; i < (long) b.size() * seq; i++) {
                    narrow.add((long) b.data(0).get(ValueLayout.JAVA_INT_UNALIGNED, 4 * i));
                }
            }
        }
        assertEquals(wide, narrow);
        assertTrue(wide.contains(256L) && wide.size() >= 10 * seq, "end-of-text tokens and whole windows");

        Tokenizer gpt2 = Tokenizer.named("gpt2");
        List<Long> want = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            for (int t : gpt2.encode("doc " + i + " " + "é".repeat(i % 7))) {
                want.add((long) t);
            }
            want.add((long) gpt2.endOfText());
        }
        Packed ids = Packed.of(List.of(p), gpt2, "text", seq, 1 << 20);
        try (Loader l = ids.builder(DType.INT64).batchSize(5).workers(2).build()) {
            List<Long> got = delivered(l, seq);
            assertEquals(want.size() / seq * seq, got.size());
            assertEquals(want.subList(0, got.size()), got);
        }
    }

    @Test
    void rangesOfAPlainFileAreReadInParallelAndCoverEveryLine() throws IOException {
        Path p = write("big.jsonl", 5000);
        Packed t = Packed.bytes(p, 16, 4096);
        assertTrue(t.shards() > 10, "shards: " + t.shards());
        List<Long> ref;
        try (Loader l = t.builder(DType.INT64).batchSize(4).build()) {
            ref = delivered(l, 16);
        }
        try (Loader l = t.builder(DType.INT64).batchSize(4).workers(2).shardsAhead(5).build()) {
            assertEquals(ref, delivered(l, 16), "the same windows for any worker count");
        }
        long separators = ref.stream().filter(x -> x == 256).count();
        assertTrue(separators > 4000, "each shard drops less than one window: " + separators);
    }

    @Test
    void aMalformedLineInARangeNamesItsByteOffset() throws IOException {
        Path p = tmp.resolve("bad.jsonl");
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 100; i++) {
            b.append(i == 70 ? "{\"text\": oops}\n" : "{\"text\": \"line " + i + "\"}\n");
        }
        Files.writeString(p, b);
        long offset = b.indexOf("{\"text\": oops}");
        Packed t = Packed.bytes(p, 8, 512);
        try (Loader l = t.builder(DType.INT64).batchSize(4).workers(2).build()) {
            LoaderException e = assertThrows(LoaderException.class, () -> delivered(l, 8));
            assertTrue(e.getMessage().contains("malformed JSON") && e.getMessage().contains("at byte " + offset), e.getMessage());
        }
    }

    @Test
    void malformedLinesFollowTheLoadersErrorPolicy() throws IOException {
        Path p = tmp.resolve("some-bad.jsonl");
        Path clean = tmp.resolve("clean.jsonl");
        StringBuilder b = new StringBuilder();
        StringBuilder c = new StringBuilder();
        int bad = 0;
        for (int i = 0; i < 300; i++) {
            if (i % 37 == 5) {
                b.append(i % 2 == 0 ? "{\"text\": oops}\n" : "{\"other\": \"no text field\"}\n");
                bad++;
            }
            b.append("{\"text\": \"line ").append(i).append("\"}\n");
            c.append("{\"text\": \"line ").append(i).append("\"}\n");
        }
        Files.writeString(p, b);
        Files.writeString(clean, c);
        // one range: skipping a line loses none of the tokens around it, for any worker count
        List<Long> want;
        Packed cleanTokens = Packed.bytes(clean, 8, 1 << 20);
        try (Loader l = cleanTokens.builder(DType.INT64).batchSize(4).build()) {
            want = delivered(l, 8);
        }
        for (long shardBytes : new long[] {1 << 20, 1024}) { // one range, and many read in parallel
            for (int workers : new int[] {0, 2}) {
                Packed t = Packed.bytes(p, 8, shardBytes);
                String where = shardBytes + " bytes a range, " + workers + " workers";
                try (Loader l = t.builder(DType.INT64).batchSize(4).workers(workers)
                        .errorPolicy(ErrorPolicy.SKIP_SAMPLE).build()) {
                    List<Long> got = delivered(l, 8);
                    assertEquals(bad, l.stats().skipped(), where);
                    if (shardBytes == 1 << 20) {
                        assertEquals(want, got, where);
                    }
                }
                try (Loader l = t.builder(DType.INT64).batchSize(4).workers(workers).build()) {
                    LoaderException e = assertThrows(LoaderException.class, () -> delivered(l, 8), where);
                    assertTrue(e.getMessage().contains("some-bad.jsonl") && e.getMessage().contains(": reading sample")
                            && e.getMessage().contains("line 6: no string field 'text' (at byte 95)"), e.getMessage());
                }
                try (Loader l = t.builder(DType.INT64).batchSize(4).workers(workers)
                        .errorPolicy(ErrorPolicy.SKIP_SHARD).build()) {
                    List<Long> got = delivered(l, 8);
                    assertTrue(got.size() < want.size(), where);
                    assertTrue(l.stats().skippedShards() >= 1, where);
                }
            }
        }
    }

    @Test
    void readAheadDeliversEveryByteInOrderAndRethrowsFailures() throws IOException {
        byte[] data = new byte[3_000_001];
        new java.util.Random(1).nextBytes(data);
        try (InputStream in = new ReadAhead(new java.io.ByteArrayInputStream(data), 3, 4096)) {
            assertTrue(java.util.Arrays.equals(data, in.readAllBytes()));
        }
        InputStream failing = new InputStream() {
            int n;

            @Override
            public int read() throws IOException {
                if (n++ >= 10_000) {
                    throw new IOException("connection reset at byte 10000");
                }
                return 7;
            }
        };
        try (InputStream in = new ReadAhead(failing, 2, 1024)) {
            byte[] got = new byte[20_000];
            int total = 0;
            IOException e = null;
            try {
                for (int k; (k = in.read(got, total, got.length - total)) > 0; ) {
                    total += k;
                }
            } catch (IOException ex) {
                e = ex;
            }
            assertTrue(e != null && e.getMessage().contains("byte 10000"));
            assertEquals(9216, total, "the whole chunks before the failure arrive first");
        }
    }
}
