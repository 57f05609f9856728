package dev.stoker.formats.tfrecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptRecordException;
import dev.stoker.CorruptShardException;
import dev.stoker.formats.records.Interop;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** TFRecord files written by TensorFlow's own TFRecordWriter and Example classes. */
class TfRecordFileTest {
    private static final Path DIR = Interop.DIR.resolve("tfrecord");

    @ParameterizedTest
    @ValueSource(strings = {"examples.tfrecord", "examples.tfrecord.gz", "examples.tfrecord.zlib", "unpacked.tfrecord",
                            "wire_edge.tfrecord"})
    void readsExamplesAsTheyWereWritten(String name) throws IOException {
        try (TfRecordFile f = TfRecordFile.open(DIR.resolve(name), TfRecordFile.Compression.AUTO, TfRecordFile.Decode.EXAMPLE)) {
            Interop.assertPrints(DIR.resolve(name + ".expected.jsonl"), f);
        }
    }

    @Test
    void findsZlibByItsContentWhenTheNameDoesNotSay() throws IOException {
        Path copy = Path.of("target/zlib-unnamed.tfrecord");
        java.nio.file.Files.copy(DIR.resolve("examples.tfrecord.zlib"), copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        try (TfRecordFile f = TfRecordFile.open(copy, TfRecordFile.Compression.AUTO, TfRecordFile.Decode.EXAMPLE)) {
            Interop.assertPrints(DIR.resolve("examples.tfrecord.zlib.expected.jsonl"), f);
        }
    }

    @Test
    void readsSequenceExamples() throws IOException {
        try (TfRecordFile f = TfRecordFile.open(DIR.resolve("sequence.tfrecord"), TfRecordFile.Compression.AUTO,
                TfRecordFile.Decode.SEQUENCE_EXAMPLE)) {
            Interop.assertPrints(DIR.resolve("sequence.tfrecord.expected.jsonl"), f);
        }
    }

    @Test
    void aFlippedDataByteFailsAtItsRecord() throws IOException {
        try (TfRecordFile f = TfRecordFile.open(DIR.resolve("corrupt_data_crc.tfrecord"), TfRecordFile.Compression.AUTO,
                TfRecordFile.Decode.EXAMPLE)) {
            f.get(0);
            f.get(1);
            CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> f.get(2));
            assertEquals("src/test/resources/interop/tfrecord/corrupt_data_crc.tfrecord: record 2: its data's CRC does not "
                    + "match (a corrupt record) (at byte 9453)", e.getMessage());
        }
    }

    @Test
    void aFlippedLengthByteFailsWhenOpened() {
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> TfRecordFile.open(
                DIR.resolve("corrupt_length_crc.tfrecord"), TfRecordFile.Compression.NONE, TfRecordFile.Decode.EXAMPLE));
        assertTrue(e.getMessage().contains("record 2: its length's CRC does not match") && e.getMessage().endsWith("(at byte 9453)"),
                e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"truncated.tfrecord", "truncated_header.tfrecord"})
    void aTruncatedFileFailsWhenOpenedNamingTheRecord(String name) {
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> TfRecordFile.open(DIR.resolve(name),
                TfRecordFile.Compression.AUTO, TfRecordFile.Decode.EXAMPLE));
        assertTrue(e.getMessage().contains("record 5") && e.getMessage().contains("truncated"), e.getMessage());
    }
}
