package dev.stoker.formats.riegeli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import dev.stoker.formats.records.RecordSource;
import dev.stoker.formats.tfrecord.TfRecordFile;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Riegeli and ArrayRecord files written by the real C++ writers (the shared anchor data). */
class RiegeliTest {
    private static final Path ANCHOR = Path.of("../../shared/anchor-data").toAbsolutePath().normalize();
    private static final Path ARRAY = ANCHOR.resolve("array_record");
    private static final Path GOLDEN = ANCHOR.resolve("riegeli_golden");

    @BeforeAll
    static void anchorData() {
        Assumptions.assumeTrue(Files.isDirectory(ANCHOR), "the shared anchor data is not beside the checkout");
    }

    private static List<String> strings(List<byte[]> records) {
        return records.stream().map(b -> new String(b, StandardCharsets.UTF_8)).toList();
    }

    private static List<byte[]> readAll(String name) throws IOException {
        Path p = GOLDEN.resolve(name);
        try (FileChannel ch = FileChannel.open(p); Arena a = Arena.ofConfined()) {
            MemorySegment s = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), a);
            return Riegeli.readAll(p.toString(), s);
        }
    }

    @Test
    void readsTheDigitsShardsByIndex() throws IOException {
        List<RecordSource> parts = new ArrayList<>();
        for (String s : List.of("digits.array_record-00000-of-00002", "digits.array_record-00001-of-00002")) {
            parts.add(ArrayRecordFile.open(ARRAY.resolve(s), TfRecordFile.Decode.RAW));
        }
        try (RecordSource all = RecordSource.concat(parts)) {
            assertEquals(10, all.size());
            for (int i = 9; i >= 0; i--) { // by index, in any order
                assertArrayEquals(String.valueOf(i).getBytes(StandardCharsets.US_ASCII), (byte[]) all.get(i).get("record"));
            }
        }
    }

    @Test
    void aFlippedBitFailsAtItsChunk() throws IOException {
        try (ArrayRecordFile f = ArrayRecordFile.open(ARRAY.resolve("corrupt_bitflip.array_record"), TfRecordFile.Decode.RAW)) {
            CorruptShardException e = assertThrows(CorruptShardException.class, () -> {
                for (long i = 0; i < f.size(); i++) {
                    f.get(i);
                }
            });
            assertTrue(e.getMessage().startsWith(ARRAY.resolve("corrupt_bitflip.array_record") + ": the data hash of the chunk "
                    + "does not match") && e.getMessage().contains("(at byte "), e.getMessage());
        }
    }

    @Test
    void aTruncatedFileIsNotAnArrayRecordFile() {
        CorruptShardException e = assertThrows(CorruptShardException.class,
                () -> ArrayRecordFile.open(ARRAY.resolve("corrupt_truncated.array_record"), TfRecordFile.Decode.RAW));
        assertTrue(e.getMessage().contains("100000 bytes") && e.getMessage().contains("truncated"), e.getMessage());
        assertEquals(1, e.getMessage().lines().count());
    }

    @Test
    void aPlainRiegeliFileIsNotAnArrayRecordFile() {
        CorruptShardException e = assertThrows(CorruptShardException.class,
                () -> ArrayRecordFile.open(GOLDEN.resolve("block_spanning.riegeli"), TfRecordFile.Decode.RAW));
        assertTrue(e.getMessage().contains("not an ArrayRecord file"), e.getMessage());
    }

    @Test
    void readsSimpleChunks() throws IOException {
        assertEquals(List.of("Hello"), strings(readAll("single_string_uncompressed.riegeli")));
        assertEquals(List.of("a", "bc", "def"), strings(readAll("three_strings_uncompressed.riegeli")));
        assertEquals(List.of(), readAll("empty.riegeli"));
        assertEquals(List.of("", "", "", "", "", "", "", "", "", ""), strings(readAll("empty_records.riegeli")));
        assertEquals(1000, readAll("many_records.riegeli").size());
    }

    @Test
    void zstdChunksHoldWhatUncompressedOnesDo() throws IOException {
        List<String> plain = strings(readAll("multi_records_uncompressed.riegeli"));
        assertEquals(23, plain.size());
        assertEquals(plain, strings(readAll("multi_records_zstd.riegeli")));
    }

    @Test
    void chunksSpanningBlocksReadWhole() throws IOException {
        List<byte[]> r = readAll("block_spanning.riegeli");
        assertEquals(5, r.size());
        assertEquals(50000, r.get(4).length);
    }

    @ParameterizedTest
    @ValueSource(strings = {"multi_records_brotli.riegeli:brotli", "multi_records_snappy.riegeli:snappy",
                            "transposed_proto_brotli.riegeli:transposed", "transposed_nonproto_zstd.riegeli:transposed"})
    void refusesWhatItDoesNotReadByName(String fileAndWord) {
        String[] p = fileAndWord.split(":");
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> readAll(p[0]));
        assertTrue(e.getMessage().contains(p[1]) && e.getMessage().contains(p[0]), e.getMessage());
    }
}
