package dev.stoker.formats.records;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.Loader;
import dev.stoker.LoaderException;
import dev.stoker.Sampler;
import dev.stoker.formats.arrow.ArrowFile;
import dev.stoker.formats.io.ArrowFiles;
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
        for (Path p : ArrowFiles.of(Interop.DIR.resolve("arrow/saved"))) {
            parts.add(ArrowFile.open(p));
        }
        RecordSource s = RecordSource.concat(parts);
        try (RecordDataset d = new RecordDataset(s, List.of("ints"))) {
            assertTrue(d.schema().field(0).isVariable());
            try (Loader l = Loader.builder(d).batchSize(5).workers(0).build()) {
                for (Batch b : l) {
                    try (b) {
                        for (int r = 0; r < b.size(); r++) {
                            Numbers want = (Numbers) s.get(b.index(r)).get("ints");
                            assertEquals(dev.stoker.DType.INT32, want.dtype());
                            assertEquals(java.util.HexFormat.of().formatHex(want.data()),
                                    java.util.HexFormat.of().formatHex(b.bytes(0, r).toArray(ValueLayout.JAVA_BYTE)));
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
                try (Loader l = Loader.builder(d).batchSize(2).workers(0).sampler(Sampler.sequential()).build()) {
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

    /** The same records with no columnar access: every batch read record by record. */
    private static RecordSource recordByRecord(RecordSource s) {
        return new RecordSource() {
            @Override
            public long size() {
                return s.size();
            }

            @Override
            public Map<String, Object> get(long index) throws IOException {
                return s.get(index);
            }

            @Override
            public String name() {
                return s.name();
            }
        };
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void columnByColumnGivesTheBatchesRecordByRecordGives(boolean shuffle) throws IOException {
        List<RecordSource> parts = new ArrayList<>();
        for (Path p : ArrowFiles.of(Interop.DIR.resolve("arrow/saved"))) {
            parts.add(ArrowFile.open(p));
        }
        RecordSource s = RecordSource.concat(parts);
        List<String> fixed = List.of("id", "i32", "u8", "u64", "f16", "f32", "f64", "vec3");
        for (String f : fixed) {
            assertTrue(s.fixedWidth(f) > 0, f);
        }
        try (RecordDataset columns = new RecordDataset(s, fixed);
             RecordDataset records = new RecordDataset(recordByRecord(s), fixed)) {
            assertTrue(columns.columnar() && !records.columnar());
            assertEquals(digests(records, shuffle), digests(columns, shuffle));
        }
    }

    private static List<String> digests(RecordDataset d, boolean shuffle) throws IOException {
        List<String> out = new ArrayList<>();
        try (Loader l = Loader.builder(d).batchSize(4).workers(2).sampler(shuffle ? Sampler.shuffle() : Sampler.sequential()).seed(3).build()) {
            for (Batch b : l) {
                try (b) {
                    java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
                    b.digest(md);
                    out.add(java.util.HexFormat.of().formatHex(md.digest()));
                } catch (java.security.NoSuchAlgorithmException e) {
                    throw new AssertionError(e);
                }
            }
        }
        return out;
    }

    @Test
    void mdsColumnsAtAFixedPlaceAreCopiedAsTheyAreDecoded(@org.junit.jupiter.api.io.TempDir Path tmp) throws IOException {
        // a dataset of fixed-size columns only, as MDSWriter lays it out: id:int, label:int32, vec:ndarray:float32:3
        int n = 10;
        String config = "{\"column_encodings\": [\"int\", \"int32\", \"ndarray:float32:3\"], \"column_names\": [\"id\", "
                + "\"label\", \"vec\"], \"column_sizes\": [8, 4, 12], \"compression\": null, \"format\": \"mds\", "
                + "\"hashes\": [], \"size_limit\": 67108864, \"version\": 2}";
        byte[] head = config.getBytes(StandardCharsets.UTF_8);
        int first = 4 + 4 * (n + 1) + head.length;
        ByteBuffer b = ByteBuffer.allocate(first + 24 * n).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(n);
        for (int i = 0; i <= n; i++) {
            b.putInt(first + 24 * i);
        }
        b.put(head);
        for (int i = 0; i < n; i++) {
            b.putLong(1000L + i).putInt(-i).putFloat(i).putFloat(i + 0.5f).putFloat(-i);
        }
        java.nio.file.Files.write(tmp.resolve("shard.00000.mds"), b.array());
        java.nio.file.Files.writeString(tmp.resolve("index.json"), "{\"shards\": [" + config.substring(0, config.length() - 1)
                + ", \"raw_data\": {\"basename\": \"shard.00000.mds\", \"bytes\": " + b.capacity() + ", \"hashes\": {}}, "
                + "\"samples\": " + n + ", \"zip_data\": null}], \"version\": 2}");
        try (MdsDataset mds = MdsDataset.open(tmp)) {
            assertEquals(8, mds.fixedWidth("id"));
            assertEquals(12, mds.fixedWidth("vec"));
            try (RecordDataset columns = new RecordDataset(mds, List.of());
                 RecordDataset records = new RecordDataset(recordByRecord(mds), List.of())) {
                assertTrue(columns.columnar() && !records.columnar());
                assertEquals(digests(records, true), digests(columns, true));
                assertEquals(digests(records, false), digests(columns, false));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"pytree", "zstd", "tokens"})
    void litDataLeavesAreCopiedAsTheyAreDecoded(String name) throws IOException {
        Path dir = Interop.DIR.resolve("litdata").resolve(name);
        boolean tokens = name.equals("tokens");
        List<String> fields = tokens ? List.of() : List.of("label");
        if (name.equals("pytree")) {
            fields = List.of("label", "score", "flag");
        }
        try (var d = dev.stoker.formats.litdata.LitDataset.open(dir, tokens ? 8 : 0, null);
             RecordDataset columns = new RecordDataset(d, fields);
             RecordDataset records = new RecordDataset(recordByRecord(d), fields)) {
            assertTrue(columns.columnar() && !records.columnar());
            assertEquals(digests(records, true), digests(columns, true));
            assertEquals(digests(records, false), digests(columns, false));
        }
    }

    @Test
    void aRunResumedFromItsStateGivesTheBatchesOfTheUninterruptedRun() throws IOException {
        try (RecordDataset d = new RecordDataset(MdsDataset.open(Interop.DIR.resolve("mds/merged")), List.of("bytes", "int", "str"))) {
            List<String> whole = digests(d, true);
            List<String> resumed = new ArrayList<>();
            dev.stoker.LoaderState state;
            try (Loader l = Loader.builder(d).batchSize(4).workers(2).shuffle().seed(3).build()) {
                var it = l.iterator();
                try (Batch b = it.next()) {
                    resumed.add(digest(b));
                }
                state = l.state();
            }
            try (Loader l = Loader.builder(d).batchSize(4).workers(1).shuffle().resume(state).build()) {
                for (Batch b : l) {
                    try (b) {
                        resumed.add(digest(b));
                    }
                }
            }
            assertEquals(whole, resumed);
        }
    }

    private static String digest(Batch b) {
        try {
            java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
            b.digest(md);
            return java.util.HexFormat.of().formatHex(md.digest());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
