package dev.stoker.formats.records;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.Loader;
import dev.stoker.LoaderException;
import dev.stoker.formats.arrow.ArrowFile;
import dev.stoker.formats.mds.MdsDataset;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The loader over records: each record exactly once per epoch, its fields as the record holds them, for any worker count. */
class RecordDatasetTest {

    /** Each batch row's fields as comparable strings, by the record's index. */
    private static Map<Long, String> epoch(RecordDataset d, int workers, long epoch) throws IOException {
        Map<Long, String> out = new java.util.TreeMap<>();
        try (Loader l = Loader.builder(d).batchSize(3).workers(workers).seed(7).epoch(epoch).build()) {
            for (Batch b : l) {
                try (b) {
                    for (int r = 0; r < b.size(); r++) {
                        List<String> fields = new ArrayList<>();
                        for (int f = 0; f < b.schema().size(); f++) {
                            fields.add(Arrays.toString(b.bytes(f, r).toArray(ValueLayout.JAVA_BYTE)));
                        }
                        String was = out.put(b.index(r), String.join("|", fields));
                        assertEquals(null, was, "record " + b.index(r) + " twice in epoch " + epoch);
                    }
                }
            }
        }
        return out;
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3})
    void eachRecordOncePerEpochTheSameForAnyWorkerCount(int workers) throws IOException {
        try (RecordDataset d = new RecordDataset(MdsDataset.open(Interop.DIR.resolve("mds/merged")), List.of("bytes", "int", "str"))) {
            Map<Long, String> inline = epoch(d, 0, 1);
            assertEquals(d.size(), inline.size());
            assertEquals(inline, epoch(d, workers, 1));
        }
    }

    @Test
    void fieldsHoldTheRecordsValues() throws IOException {
        MdsDataset mds = MdsDataset.open(Interop.DIR.resolve("mds/gz"));
        try (RecordDataset d = new RecordDataset(mds, List.of("int", "str"))) {
            assertEquals("[int, str]", d.schema().fields().stream().map(f -> f.name()).toList().toString());
            try (Loader l = Loader.builder(d).batchSize(4).workers(2).build()) {
                for (Batch b : l) {
                    try (b) {
                        for (int r = 0; r < b.size(); r++) {
                            Map<String, Object> rec = mds.get(b.index(r));
                            Tensor i = (Tensor) rec.get("int");
                            assertEquals(ByteBuffer.wrap(i.data()).order(ByteOrder.LITTLE_ENDIAN).getLong(),
                                    b.data(0).getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), r));
                            assertEquals(rec.get("str"), new String(b.bytes(1, r).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8));
                        }
                    }
                }
            }
        }
    }

    @Test
    void aRaggedListIsItsElementsBytes() throws IOException {
        List<RecordSource> parts = new ArrayList<>();
        for (Path p : ArrowFile.files(Interop.DIR.resolve("arrow/saved"))) {
            parts.add(ArrowFile.open(p));
        }
        RecordSource s = RecordSource.concat(parts);
        try (RecordDataset d = new RecordDataset(s, List.of("ints"))) {
            assertTrue(d.schema().field(0).isVariable());
            try (Loader l = Loader.builder(d).batchSize(5).workers(0).build()) {
                for (Batch b : l) {
                    try (b) {
                        for (int r = 0; r < b.size(); r++) {
                            List<?> want = (List<?>) s.get(b.index(r)).get("ints");
                            ByteBuffer got = b.bytes(0, r).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                            assertEquals(want.size() * 4, got.remaining());
                            for (Object o : want) {
                                assertEquals(ByteBuffer.wrap(((Tensor) o).data()).order(ByteOrder.LITTLE_ENDIAN).getInt(), got.getInt());
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void aRecordUnlikeTheFirstFailsNamingItsFieldAndRecord() throws IOException {
        try (RecordDataset d = new RecordDataset(MdsDataset.open(Interop.DIR.resolve("mds/zstd")), List.of("ndarray"))) {
            LoaderException e = assertThrows(LoaderException.class, () -> {
                try (Loader l = Loader.builder(d).batchSize(2).workers(0).shuffle(false).build()) {
                    for (Batch b : l) {
                        b.close();
                    }
                }
            });
            assertTrue(e.getMessage().contains("shard.00000.mds.zstd sample 1: field 'ndarray' is float64[5] where the first "
                    + "record has int32[2, 3]"), e.getMessage());
        }
    }

    @Test
    void aFieldNotInTheRecordsIsNamed() throws IOException {
        try (MdsDataset mds = MdsDataset.open(Interop.DIR.resolve("mds/gz"))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RecordDataset(mds, List.of("nope")));
            assertTrue(e.getMessage().contains("no field 'nope'"), e.getMessage());
        }
    }
}
