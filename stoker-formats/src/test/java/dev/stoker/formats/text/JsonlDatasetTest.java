package dev.stoker.formats.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.Collator;
import dev.stoker.ErrorPolicy;
import dev.stoker.Loader;
import dev.stoker.LoaderException;
import dev.stoker.Sampler;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonlDatasetTest {
    @TempDir
    Path tmp;

    Path file(int n, int badLine) throws IOException {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= n; i++) {
            b.append(i == badLine ? "{\"text\": nope}" : "{\"id\": " + i + ", \"text\": \"line " + i + " é\"}").append(i % 7 == 0 ? "\r\n\n" : "\n");
        }
        Path p = tmp.resolve("d.jsonl");
        Files.writeString(p, b);
        return p;
    }

    static Set<String> texts(Loader l) {
        Set<String> out = new HashSet<>();
        for (Batch b : l) {
            for (int r = 0; r < b.size(); r++) {
                out.add(new String(b.bytes(0, r).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    @Test
    void linesAreRandomAccessSamplesThroughAStoredIndex() throws IOException {
        Path p = file(500, -1);
        try (JsonlDataset d = new JsonlDataset(p)) {
            assertEquals(500, d.size(), "blank lines are not samples");
            assertEquals(9, d.line(7), "line numbers count the blank lines (one after line 7)");
            try (Loader l = Loader.builder(d, d.text("text"), Collator.bytes("text", 16)).batchSize(32).workers(2)
                    .shuffle().build()) {
                Set<String> got = texts(l);
                assertEquals(500, got.size());
                assertTrue(got.contains("line 250 é"));
            }
        }
        assertTrue(Files.exists(Path.of(p + ".lines")), "the line index is kept beside the file");
        try (JsonlDataset again = new JsonlDataset(p)) {
            assertEquals(500, again.size());
        }
    }

    @Test
    void aLineIndexOfAFileRewrittenWithTheSameSizeAndMtimeIsNotTrusted() throws IOException {
        Path p = tmp.resolve("same.jsonl");
        Files.writeString(p, "{\"text\": \"aaaaaaaa\"}\n{\"text\": \"b\"}\n");
        var mtime = Files.getLastModifiedTime(p);
        try (JsonlDataset d = new JsonlDataset(p)) {
            assertEquals(2, d.size());
        }
        Files.writeString(p, "{\"text\": \"a\"}\n{\"text\": \"bbbbbbbb\"}\n"); // the same size, the lines' bounds moved
        Files.setLastModifiedTime(p, mtime);
        try (JsonlDataset d = new JsonlDataset(p);
             Loader l = Loader.builder(d, d.text("text"), Collator.bytes("text", 16)).batchSize(2).sampler(Sampler.sequential()).build()) {
            assertEquals(Set.of("a", "bbbbbbbb"), texts(l));
        }
    }

    @Test
    void theFingerprintIsTheContentsNotThePlaces() throws IOException {
        Path a = Files.writeString(tmp.resolve("a.jsonl"), "{\"text\": \"one\"}\n{\"text\": \"two\"}\n");
        Path copy = Files.copy(a, Files.createDirectories(tmp.resolve("elsewhere")).resolve("a.jsonl"));
        Path other = Files.writeString(tmp.resolve("b.jsonl"), "{\"text\": \"one\"}\n{\"text\": \"tWo\"}\n");
        try (JsonlDataset x = new JsonlDataset(a); JsonlDataset y = new JsonlDataset(copy); JsonlDataset z = new JsonlDataset(other)) {
            assertTrue(x.fingerprint() != 0);
            assertEquals(x.fingerprint(), y.fingerprint());
            assertTrue(x.fingerprint() != z.fingerprint());
        }
    }

    @Test
    void aMalformedLineIsNamedOrSkippedAndCounted() throws IOException {
        Path p = file(50, 30);
        try (JsonlDataset d = new JsonlDataset(p);
             Loader l = Loader.builder(d, d.text("text"), Collator.bytes("text", 16)).batchSize(8).build()) {
            LoaderException e = assertThrows(LoaderException.class, () -> texts(l));
            assertTrue(e.getMessage().contains("d.jsonl: sample") && e.getMessage().contains("): line 34: malformed JSON"),
                    e.getMessage()); // the file named once, then where and what
        }
        try (JsonlDataset d = new JsonlDataset(p);
             Loader l = Loader.builder(d, d.text("text"), Collator.bytes("text", 16)).batchSize(8)
                     .errorPolicy(ErrorPolicy.SKIP_SAMPLE).build()) {
            assertEquals(49, texts(l).size());
            assertEquals(1, l.stats().skipped());
        }
        assertThrows(IllegalArgumentException.class, () -> new JsonlDataset(Path.of("x.jsonl.gz")));
    }
}
