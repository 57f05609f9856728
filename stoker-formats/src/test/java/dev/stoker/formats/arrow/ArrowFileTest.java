package dev.stoker.formats.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import dev.stoker.formats.records.Interop;
import dev.stoker.formats.records.RecordSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Arrow files written by Apache Arrow's own (JavaScript) writer, in the layouts Hugging Face datasets saves. */
class ArrowFileTest {
    private static final Path DIR = Interop.DIR.resolve("arrow");

    private static RecordSource open(Path path) throws IOException {
        List<RecordSource> parts = new ArrayList<>();
        for (Path p : ArrowFiles.of(path)) {
            parts.add(ArrowFile.open(p));
        }
        return RecordSource.concat(parts);
    }

    @Test
    void readsASaveToDiskFolderInItsStateOrder() throws IOException {
        try (RecordSource s = open(DIR.resolve("saved"))) {
            assertEquals(14, s.size());
            Interop.assertPrints(DIR.resolve("saved/expected.jsonl"), s);
        }
    }

    @Test
    void readsTheFileFormatByItsFooter() throws IOException {
        try (RecordSource s = open(DIR.resolve("file/data.arrow"))) {
            Interop.assertPrints(DIR.resolve("file/expected.jsonl"), s);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"data.arrow", "nonzero_offsets.arrow"})
    void readsSlicesWhoseOffsetsDoNotStartAtZero(String name) throws IOException {
        try (RecordSource s = open(DIR.resolve("sliced").resolve(name))) {
            Interop.assertPrints(DIR.resolve("sliced/expected.jsonl"), s);
        }
    }

    @Test
    void readsDictionariesReplacedAndExtended() throws IOException {
        try (RecordSource s = open(DIR.resolve("dict/data.arrow"))) {
            Interop.assertPrints(DIR.resolve("dict/expected.jsonl"), s);
        }
    }

    @Test
    void keepsTheHuggingFaceFeatures() throws IOException {
        try (ArrowFile f = ArrowFile.open(DIR.resolve("saved/data-00000-of-00002.arrow"))) {
            assertTrue(f.metadata().get("huggingface").contains("ClassLabel"), f.metadata().toString());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"truncated.arrow", "bad_length.arrow"})
    void corruptFilesFailWithOneLineNamingTheFileAndOffset(String name) {
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> ArrowFile.open(DIR.resolve("corrupt").resolve(name)));
        assertTrue(e.getMessage().startsWith(DIR.resolve("corrupt").resolve(name) + ": ") && e.getMessage().contains("(at byte "),
                e.getMessage());
        assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    }

    @Test
    void aDatasetDictFolderNamesItsSplits(@TempDir Path tmp) throws IOException {
        Files.writeString(tmp.resolve("dataset_dict.json"), "{\"splits\": [\"train\", \"test\"]}");
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> ArrowFiles.of(tmp));
        assertTrue(e.getMessage().contains("give one split's folder (train, test)"), e.getMessage());
    }
}
