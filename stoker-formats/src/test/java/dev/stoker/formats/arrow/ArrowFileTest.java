package dev.stoker.formats.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import dev.stoker.formats.io.ArrowFiles;
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

    @Test
    void aListOfIntegersIsARaggedFieldThatTheLoaderPads() throws IOException {
        List<List<Integer>> want = new ArrayList<>();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        for (String line : Files.readAllLines(DIR.resolve("saved/expected.jsonl"))) {
            List<Integer> ints = new ArrayList<>();
            json.readTree(line).get("ints").forEach(v -> ints.add(v.asInt()));
            want.add(ints);
        }
        try (RecordSource s = open(DIR.resolve("saved"));
             dev.stoker.formats.records.RecordDataset d = new dev.stoker.formats.records.RecordDataset(s, List.of("id", "ints"));
             dev.stoker.Loader l = dev.stoker.Loader.builder(d).padding(dev.stoker.Padding.of().pad("ints", 2).value(-1)
                     .lengths(true)).batchSize(4).build()) {
            var ragged = d.schema().field(d.schema().indexOf("ints"));
            assertTrue(ragged.isRagged() && ragged.dtype() == dev.stoker.DType.INT32, ragged.toString());
            int rows = 0;
            for (dev.stoker.Batch b : l) {
                for (int r = 0; r < b.size(); r++, rows++) {
                    List<Integer> w = want.get((int) b.index(r));
                    int[] got = b.data("ints").asSlice(8L * r, 8).toArray(java.lang.foreign.ValueLayout.JAVA_INT);
                    for (int j = 0; j < 2; j++) {
                        assertEquals(j < w.size() ? w.get(j) : -1, got[j], "record " + b.index(r) + " " + w);
                    }
                    assertEquals(Math.min(2, w.size()), b.data("ints_len").getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, r));
                }
            }
            assertEquals(want.size(), rows);
        }
    }
}
