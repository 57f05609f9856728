package dev.stoker.formats.tokens;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.DType;
import dev.stoker.ErrorPolicy;
import dev.stoker.Loader;
import dev.stoker.LoaderException;
import dev.stoker.formats.io.ReadAhead;
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

class JsonlTokensTest {
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
        long x = new JsonlTokens(List.of(a), bytes, "text", 8, 1 << 20).fingerprint();
        assertTrue(x != 0);
        assertEquals(x, new JsonlTokens(List.of(copy), bytes, "text", 8, 1 << 20).fingerprint());
        assertEquals(x, new JsonlTokens(List.of(a), bytes, "text", 8, 4).fingerprint(), "how it is split is not the data");
        for (JsonlTokens differs : List.of(new JsonlTokens(List.of(other), bytes, "text", 8, 1 << 20),
                new JsonlTokens(List.of(a), bytes, "text", 9, 1 << 20),
                new JsonlTokens(List.of(a), bytes, "body", 8, 1 << 20),
                new JsonlTokens(List.of(a, copy), bytes, "text", 8, 1 << 20))) {
            assertTrue(differs.fingerprint() != x, differs.shardName(0));
        }
    }

    @Test
    void packsTheBytesOfEachDocumentAndASeparatorIntoWindows() throws IOException {
        for (String name : new String[] {"a.jsonl", "a.jsonl.gz"}) {
            Path p = write(name, 500);
            int seq = 64;
            JsonlTokens t = new JsonlTokens(List.of(p), Tokenizer.named("bytes"), "text", seq, 1 << 20);
            assertEquals(1, t.shards());
            try (Loader l = Loader.builder(t, t.collator(DType.INT64)).batchSize(8).workers(2).build()) {
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
        JsonlTokens bytes = new JsonlTokens(List.of(p), Tokenizer.named("bytes"), "text", seq, 1 << 20);
        List<Long> wide;
        try (Loader l = Loader.builder(bytes, bytes.collator(DType.INT64)).batchSize(5).workers(2).build()) {
            wide = delivered(l, seq);
        }
        List<Long> narrow = new ArrayList<>();
        try (Loader l = Loader.builder(bytes, bytes.collator(DType.INT32)).batchSize(5).workers(2).build()) {
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
        JsonlTokens ids = new JsonlTokens(List.of(p), gpt2, "text", seq, 1 << 20);
        try (Loader l = Loader.builder(ids, ids.collator(DType.INT64)).batchSize(5).workers(2).build()) {
            List<Long> got = delivered(l, seq);
            assertEquals(want.size() / seq * seq, got.size());
            assertEquals(want.subList(0, got.size()), got);
        }
    }

    @Test
    void rangesOfAPlainFileAreReadInParallelAndCoverEveryLine() throws IOException {
        Path p = write("big.jsonl", 5000);
        JsonlTokens t = new JsonlTokens(List.of(p), Tokenizer.named("bytes"), "text", 16, 4096);
        assertTrue(t.shards() > 10, "shards: " + t.shards());
        List<Long> ref;
        try (Loader l = Loader.builder(t, t.collator(DType.INT64)).batchSize(4).build()) {
            ref = delivered(l, 16);
        }
        try (Loader l = Loader.builder(t, t.collator(DType.INT64)).batchSize(4).workers(2).shardsAhead(5).build()) {
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
        JsonlTokens t = new JsonlTokens(List.of(p), Tokenizer.named("bytes"), "text", 8, 512);
        try (Loader l = Loader.builder(t, t.collator(DType.INT64)).batchSize(4).workers(2).build()) {
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
        JsonlTokens cleanTokens = tokens(clean, 1 << 20);
        try (Loader l = Loader.builder(cleanTokens, cleanTokens.collator(DType.INT64)).batchSize(4).build()) {
            want = delivered(l, 8);
        }
        for (long shardBytes : new long[] {1 << 20, 1024}) { // one range, and many read in parallel
            for (int workers : new int[] {0, 2}) {
                JsonlTokens t = tokens(p, shardBytes);
                String where = shardBytes + " bytes a range, " + workers + " workers";
                try (Loader l = Loader.builder(t, t.collator(DType.INT64)).batchSize(4).workers(workers)
                        .errorPolicy(ErrorPolicy.SKIP_SAMPLE).build()) {
                    List<Long> got = delivered(l, 8);
                    assertEquals(bad, l.stats().skipped(), where);
                    if (shardBytes == 1 << 20) {
                        assertEquals(want, got, where);
                    }
                }
                try (Loader l = Loader.builder(t, t.collator(DType.INT64)).batchSize(4).workers(workers).build()) {
                    LoaderException e = assertThrows(LoaderException.class, () -> delivered(l, 8), where);
                    assertTrue(e.getMessage().contains("some-bad.jsonl: line 6: no string field 'text' (at byte 95)"), e.getMessage());
                }
                try (Loader l = Loader.builder(t, t.collator(DType.INT64)).batchSize(4).workers(workers)
                        .errorPolicy(ErrorPolicy.SKIP_SHARD).build()) {
                    List<Long> got = delivered(l, 8);
                    assertTrue(got.size() < want.size(), where);
                    assertTrue(l.stats().skippedShards() >= 1, where);
                }
            }
        }
    }

    private static JsonlTokens tokens(Path p, long shardBytes) throws IOException {
        return new JsonlTokens(List.of(p), Tokenizer.named("bytes"), "text", 8, shardBytes);
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
