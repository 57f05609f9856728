package dev.stoker.formats.mds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import dev.stoker.formats.records.Interop;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** MDS datasets written by MosaicML Streaming's own MDSWriter read as the values they were written from. */
class MdsDatasetTest {
    private static final Path MDS = Interop.DIR.resolve("mds");

    @ParameterizedTest
    @ValueSource(strings = {"all", "zstd", "zstd-7", "gz", "merged"})
    void readsWhatTheWriterWrote(String name) throws IOException {
        try (MdsDataset d = MdsDataset.open(MDS.resolve(name))) {
            Interop.assertPrints(MDS.resolve(name).resolve("expected.jsonl"), d);
        }
    }

    @Test
    void aCompressedDatasetReadsTheSameWhateverItsCacheKeeps() throws IOException {
        try (MdsDataset d = MdsDataset.open(MDS.resolve("zstd"), 1)) { // one shard held at a time: each is read again
            Interop.assertPrints(MDS.resolve("zstd").resolve("expected.jsonl"), d);
            Interop.assertPrints(MDS.resolve("zstd").resolve("expected.jsonl"), d);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"bz2", "br", "snappy"})
    void refusesCodecsItDoesNotReadByName(String codec) throws IOException {
        try (MdsDataset d = MdsDataset.open(MDS.resolve(codec))) {
            CorruptShardException e = assertThrows(CorruptShardException.class, () -> d.get(0));
            assertTrue(e.getMessage().contains("'" + codec + "'") && e.getMessage().contains("shard.00000.mds"), e.getMessage());
        }
    }

    @Test
    void refusesPickledColumnsByName() {
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> MdsDataset.open(MDS.resolve("pkl")));
        assertTrue(e.getMessage().contains("column 'obj' is pickled"), e.getMessage());
    }

    @Test
    void aTruncatedShardIsNamedWithItsSize() throws IOException {
        try (MdsDataset d = MdsDataset.open(MDS.resolve("corrupt/truncated"))) {
            CorruptShardException e = assertThrows(CorruptShardException.class, () -> d.get(0));
            assertTrue(e.getMessage().contains("shard.00000.mds") && e.getMessage().contains("5915 bytes"), e.getMessage());
            assertEquals(1, e.getMessage().lines().count());
        }
    }

    @Test
    void anOffsetPastTheEndIsNamedWithItsByte() throws IOException {
        try (MdsDataset d = MdsDataset.open(MDS.resolve("corrupt/bad_offset"))) {
            CorruptShardException e = assertThrows(CorruptShardException.class, () -> d.get(1));
            assertTrue(e.getMessage().contains("shard.00000.mds") && e.getMessage().contains("offset 2 is 72860")
                    && e.getMessage().contains("(at byte 12)"), e.getMessage());
        }
    }
}
