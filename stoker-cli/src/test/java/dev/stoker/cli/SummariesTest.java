package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import dev.stoker.formats.tar.TarDataset;
import dev.stoker.formats.io.TarWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reports behind {@code stoker ls} and {@code stoker inspect}. */
class SummariesTest {
    @TempDir
    Path tmp;

    @Test
    void aTarSummaryGroupsMembersByTheReadersRule() throws IOException {
        Path p = tmp.resolve("dup.tar");
        try (TarWriter w = new TarWriter(p)) {
            w.write("a", Map.of("txt", "1".getBytes()));
            w.write("a", Map.of("txt", "2".getBytes())); // consecutive: the same sample, twice the field
        }
        // ls and inspect group by the readers' rule: no path accepts what another refuses
        CorruptShardException read = assertThrows(CorruptShardException.class, () -> new TarDataset(List.of(p)));
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> TarSummary.of(p, null));
        assertTrue(e.getMessage().contains("duplicate field 'txt' in sample 'a'"), e.getMessage());
        assertEquals(read.getMessage(), e.getMessage());
    }

    @Test
    void aJsonlSummaryCountsKeysAndNamesErrors() throws IOException {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= 20; i++) {
            b.append(i == 5 ? "{\"text\": nope}" : "{\"id\": " + i + ", \"text\": \"line " + i + " é\"}").append(i % 7 == 0 ? "\r\n\n" : "\n");
        }
        Path p = tmp.resolve("d.jsonl");
        Files.writeString(p, b);
        JsonlSummary s = JsonlSummary.of(p);
        assertEquals(20, s.lines);
        assertEquals(Long.valueOf(19), s.keys.get("text"));
        assertEquals(List.of("line 5: malformed JSON: Unrecognized token 'nope': was expecting (JSON String, Number, Array, "
                + "Object or token 'null', 'true' or 'false')"), s.errors);
    }
}
