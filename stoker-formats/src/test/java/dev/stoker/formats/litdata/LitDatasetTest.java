package dev.stoker.formats.litdata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import dev.stoker.formats.records.Interop;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** LitData datasets written by LitData's own BinaryWriter (0.2.71, and 0.2.56 for the old tensor header). */
class LitDatasetTest {
    private static final Path DIR = Interop.DIR.resolve("litdata");
    private static final char[] PASSWORD = "stoker-litdata-test-password".toCharArray();

    @ParameterizedTest
    @ValueSource(strings = {"pytree", "pytree-0.2.56", "zstd"})
    void readsPyTreeItemsAsTheyWereWritten(String name) throws IOException {
        try (LitDataset d = LitDataset.open(DIR.resolve(name), 0, null)) {
            Interop.assertPrints(DIR.resolve(name).resolve("expected.jsonl"), d);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"encrypted", "encrypted-chunk"})
    void decryptsWithThePassword(String name) throws IOException {
        try (LitDataset d = LitDataset.open(DIR.resolve(name), 0, PASSWORD)) {
            Interop.assertPrints(DIR.resolve(name).resolve("expected.jsonl"), d);
        }
    }

    @Test
    void anEncryptedDatasetWithoutItsPasswordIsRefused() {
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> LitDataset.open(DIR.resolve("encrypted"), 0, null));
        assertTrue(e.getMessage().contains("encrypted (fernet, sample level): give its password"), e.getMessage());
    }

    @Test
    void aWrongPasswordIsNamedNotPrinted() throws IOException {
        try (LitDataset d = LitDataset.open(DIR.resolve("encrypted"), 0, "not-it".toCharArray())) {
            IOException e = assertThrows(IOException.class, () -> d.get(0));
            assertTrue(e.getMessage().contains("a wrong password") && !e.getMessage().contains("not-it"), e.getMessage());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tokens", "tokens-uint16"})
    void cutsTokenChunksIntoBlocks(String name) throws IOException {
        try (LitDataset d = LitDataset.open(DIR.resolve(name), 8, null)) {
            assertEquals(11, d.size());
            Interop.assertPrints(DIR.resolve(name).resolve("expected_blocks.jsonl"), d);
        }
    }

    @Test
    void aTokensDatasetNeedsItsBlockSize() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LitDataset.open(DIR.resolve("tokens"), 0, null));
        assertTrue(e.getMessage().contains("give its block size"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"truncated", "bad_offset"})
    void aDamagedChunkFailsNamingItsFileAndByte(String name) throws IOException {
        try (LitDataset d = LitDataset.open(DIR.resolve("corrupt").resolve(name), 0, null)) {
            d.get(4); // chunks 0 and 2 are intact
            d.get(9);
            CorruptShardException e = assertThrows(CorruptShardException.class, () -> d.get(5)); // the damaged chunk, refused whole
            assertTrue(e.getMessage().contains("chunk-0-1.bin") && e.getMessage().contains("(at byte "), e.getMessage());
            assertEquals(1, e.getMessage().lines().count());
        }
    }
}
