package dev.stoker.formats.tensors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.Fixtures;
import dev.stoker.formats.npy.NpyArray;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** torch.save archives read as data: the files torch wrote (../shared/physics-data/torch-save), and refusals. */
class TorchSaveTest {
    private static final Path SHARED = Path.of("../../shared/physics-data/torch-save").toAbsolutePath().normalize();

    @TempDir
    Path tmp;

    private static JsonNode expected() throws IOException {
        assumeTrue(Files.isRegularFile(SHARED.resolve("expected.json")), "no ../shared/physics-data/torch-save");
        return new ObjectMapper().readTree(SHARED.resolve("expected.json").toFile());
    }

    @Test
    void readsBabyLlamasTokensAsOneInt64TensorMappedInPlace() throws IOException {
        JsonNode want = expected().get("babylm_like_tokens_int64.pt");
        try (TensorFile f = TorchSave.open(SHARED.resolve("babylm_like_tokens_int64.pt"))) {
            assertTrue(f.single());
            NpyArray a = f.arrays().get("");
            assertEquals(DType.INT64, a.dtype());
            assertArrayEquals(new long[] {want.get("shape").get(0).asLong()}, a.shape());
            assertTrue(a.segment().isMapped(), "a contiguous tensor is a view of the mapped archive");
            long sum = 0;
            for (long i = 0; i < a.elements(); i++) {
                sum += a.getLong(i);
            }
            assertEquals(want.get("sum").asLong(), sum);
            for (int i = 0; i < want.get("first").size(); i++) {
                assertEquals(want.get("first").get(i).asLong(), a.getLong(i));
            }
        }
    }

    @Test
    void readsAStridedViewAsItsValues() throws IOException {
        JsonNode want = expected().get("strided_view_int32.pt");
        try (TensorFile f = TorchSave.open(SHARED.resolve("strided_view_int32.pt"))) {
            NpyArray a = f.arrays().get("");
            assertEquals(DType.INT32, a.dtype());
            assertArrayEquals(new long[] {10}, a.shape());
            for (int i = 0; i < 10; i++) {
                assertEquals(want.get("values").get(i).asLong(), a.getLong(i));
            }
        }
    }

    @Test
    void readsADictOfTensorsByKey() throws IOException {
        JsonNode want = expected().get("dict_of_tensors.pt");
        try (TensorFile f = TensorFile.open(SHARED.resolve("dict_of_tensors.pt"))) {
            assertEquals("torch", f.format());
            assertFalse(f.single());
            assertEquals(List.of("x", "y"), List.copyOf(f.arrays().keySet()));
            NpyArray x = f.arrays().get("x");
            assertEquals(DType.FLOAT32, x.dtype());
            assertArrayEquals(new long[] {3, 4}, x.shape());
            for (int r = 0; r < 3; r++) {
                for (int c = 0; c < 4; c++) {
                    assertEquals(want.get("x").get(r).get(c).asDouble(), x.getDouble(r * 4 + c));
                }
            }
            NpyArray y = f.arrays().get("y");
            assertEquals(DType.UINT8, y.dtype());
            for (int i = 0; i < 3; i++) {
                assertEquals(want.get("y").get(i).asLong(), y.getLong(i));
            }
        }
    }

    @Test
    void refusesAGlobalItDoesNotReadNamingIt() throws IOException {
        expected();
        Path p = SHARED.resolve("counter_global.pt");
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> TorchSave.open(p));
        assertTrue(e.getMessage().startsWith(p + ": refuses global 'collections.Counter'"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void findsEachEntryWhereTorchWroteIt() throws IOException {
        JsonNode all = expected();
        for (String name : List.of("babylm_like_tokens_int64.pt", "strided_view_int32.pt", "dict_of_tensors.pt", "counter_global.pt")) {
            try (var f = dev.stoker.formats.io.MappedFile.open(SHARED.resolve(name))) {
                Map<String, ZipDirectory.Entry> entries = ZipDirectory.read(f.segment(), name);
                JsonNode want = all.get(name).get("entries");
                assertEquals(want.size(), entries.size(), name);
                for (JsonNode w : want) {
                    ZipDirectory.Entry e = entries.get(w.get("name").asText());
                    assertEquals(w.get("size").asLong(), e.size(), e.name());
                    assertEquals(w.get("method").asInt(), e.method(), e.name());
                    assertEquals(w.get("data_offset").asLong(), e.dataOffset(), e.name());
                    assertEquals(0, e.dataOffset() % 64, "torch aligns each entry's data to 64 bytes");
                }
            }
        }
    }

    @Test
    void refusesTheLegacyFormatSayingHowToSaveItAgain() throws IOException {
        expected();
        Path p = SHARED.resolve("legacy_nonzip.pt");
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> TensorFile.open(p));
        assertTrue(e.getMessage().startsWith(p + ": a torch.save file of the legacy format"), e.getMessage());
        assertTrue(e.getMessage().contains("torch.save(obj, f)"), e.getMessage());
    }

    @Test
    void anyDamagedByteIsReadOrRefusedByNameNeverAnotherFailure() throws IOException {
        expected();
        byte[] good = Files.readAllBytes(SHARED.resolve("dict_of_tensors.pt"));
        Path p = tmp.resolve("damaged.pt");
        for (int at = 0; at < good.length; at++) {
            for (int v : new int[] {0, 0xFF, good[at] ^ 1}) {
                byte[] bad = good.clone();
                bad[at] = (byte) v;
                Files.write(p, bad);
                try (TensorFile f = TorchSave.open(p)) {
                    f.arrays().values().stream().filter(a -> a.elements() > 0).forEach(a -> a.getDouble(a.elements() - 1)); // what was read can be read
                } catch (CorruptShardException e) {
                    assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
                }
            }
        }
        for (int n = 0; n < good.length; n += 7) {
            Files.write(p, java.util.Arrays.copyOf(good, n));
            assertThrows(CorruptShardException.class, () -> TorchSave.open(p).close(), "truncated to " + n);
        }
    }

    /** A storage entry as torch writes it; a pickle made by hand. */
    private Path archive(byte[] pickle, Map<String, byte[]> more) throws IOException {
        Path p = tmp.resolve("hand.pt");
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(p))) {
            put(z, "archive/data.pkl", pickle);
            for (var e : more.entrySet()) {
                put(z, "archive/" + e.getKey(), e.getValue());
            }
        }
        return p;
    }

    private static void put(ZipOutputStream z, String name, byte[] b) throws IOException {
        ZipEntry e = new ZipEntry(name);
        e.setMethod(ZipEntry.STORED);
        e.setSize(b.length);
        CRC32 crc = new CRC32();
        crc.update(b);
        e.setCrc(crc.getValue());
        z.putNextEntry(e);
        z.write(b);
        z.closeEntry();
    }

    /** The pickle torch writes for an int32 tensor of {@code n} elements over storage '0'. */
    private static byte[] tensorPickle(int n) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(new byte[] {(byte) 0x80, 2});
        b.writeBytes("ctorch._utils\n_rebuild_tensor_v2\n((X".getBytes());
        str(b, "storage");
        b.writeBytes("ctorch\nIntStorage\n".getBytes());
        b.write('X');
        str(b, "0");
        b.write('X');
        str(b, "cpu");
        b.writeBytes(new byte[] {'K', (byte) n, 't', 'Q', 'K', 0, 'K', (byte) n, (byte) 0x85, 'K', 1, (byte) 0x85, (byte) 0x89});
        b.writeBytes("ccollections\nOrderedDict\n)Rt".getBytes());
        b.writeBytes(new byte[] {'R', '.'});
        return b.toByteArray();
    }

    private static void str(ByteArrayOutputStream b, String s) {
        byte[] t = s.getBytes();
        b.writeBytes(new byte[] {(byte) t.length, 0, 0, 0});
        b.writeBytes(t);
    }

    @Test
    void honoursABigEndianByteOrderRecord() throws IOException {
        byte[] data = {0, 0, 0, 1, 0, 0, 1, 0};
        Path p = archive(tensorPickle(2), Map.of("data/0", data, "byteorder", "big".getBytes(), "version", "3\n".getBytes()));
        try (TensorFile f = TorchSave.open(p)) {
            NpyArray a = f.arrays().get("");
            assertEquals(ByteOrder.BIG_ENDIAN, a.byteOrder());
            assertEquals(1, a.getLong(0));
            assertEquals(256, a.getLong(1));
        }
    }

    @Test
    void refusesAStorageWhoseEntryHasAnotherSize() throws IOException {
        Path p = archive(tensorPickle(3), Map.of("data/0", new byte[8]));
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> TorchSave.open(p));
        assertTrue(e.getMessage().contains("storage '0' (torch.IntStorage, 3 elements) is 12 bytes, its entry has 8"), e.getMessage());
    }

    @Test
    void refusesOpcodesThatBuildObjects() throws IOException {
        byte[] pickle = {(byte) 0x80, 2, 'c', 'c', 'o', 'l', 'l', 'e', 'c', 't', 'i', 'o', 'n', 's', '\n', 'O', 'r', 'd', 'e', 'r', 'e', 'd',
            'D', 'i', 'c', 't', '\n', ')', (byte) 0x81, '.'};
        Path p = archive(pickle, Map.of());
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> TorchSave.open(p));
        assertTrue(e.getMessage().contains("refuses pickle opcode NEWOBJ"), e.getMessage());
        Path os = archive("cos\nsystem\n(S'true'\ntR.".getBytes(), Map.of());
        e = assertThrows(CorruptShardException.class, () -> TorchSave.open(os));
        assertTrue(e.getMessage().contains("refuses global 'os.system'"), e.getMessage());
    }

    @Test
    void refusesToSetTheStateOfATensor() throws IOException {
        byte[] t = tensorPickle(1);
        byte[] withState = java.util.Arrays.copyOf(t, t.length + 2);
        withState[t.length - 1] = '}';
        withState[t.length] = 'b';
        withState[t.length + 1] = '.';
        Path p = archive(withState, Map.of("data/0", new byte[4]));
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> TorchSave.open(p));
        assertTrue(e.getMessage().contains("refuses to set the state of Tensor (BUILD)"), e.getMessage());
    }

    @Test
    void refusesAZipThatIsNoTorchArchive() throws IOException {
        Path p = tmp.resolve("other.zip");
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(p))) {
            put(z, "notes.txt", "hello".getBytes());
        }
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> TorchSave.open(p));
        assertTrue(e.getMessage().contains("without one PREFIX/data.pkl"), e.getMessage());
        assertFalse(TorchSave.isTorchSave(p));
    }

    private static boolean torchAvailable() {
        try {
            Process p = new ProcessBuilder("/usr/bin/python3", "-c", "import torch").redirectErrorStream(true).start();
            return p.waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    @Test
    void readsWhatTorchSavesStateDictsOfEveryReadDtypeAndProtocol4() throws Exception {
        assumeTrue(torchAvailable(), "no python3 torch");
        Path dir = tmp;
        Fixtures.python("""
                import sys, torch, collections
                d = sys.argv[1]
                m = torch.nn.Linear(3, 2)
                with torch.no_grad():
                    m.weight.copy_(torch.arange(6, dtype=torch.float32).reshape(2, 3)); m.bias.fill_(0.5)
                torch.save(m.state_dict(), d + '/state.pt')
                t = {'f16': torch.tensor([1.5, -2.0], dtype=torch.float16), 'bf16': torch.tensor([1.0, 3.0], dtype=torch.bfloat16),
                     'f64': torch.tensor([[1.0, 2.0]], dtype=torch.float64), 'b': torch.tensor([True, False]),
                     'i8': torch.tensor([-3], dtype=torch.int8), 'i16': torch.tensor([300], dtype=torch.int16),
                     'T': torch.arange(6, dtype=torch.int64).reshape(2, 3).t(), 'nested': {'a': torch.tensor([7])}}
                torch.save(t, d + '/dtypes.pt', pickle_protocol=4)
                torch.save([torch.tensor([1, 2]), torch.tensor([3])], d + '/list.pt')
                """, dir.toString());
        try (TensorFile f = TorchSave.open(dir.resolve("state.pt"))) {
            assertEquals(List.of("weight", "bias"), List.copyOf(f.arrays().keySet()));
            NpyArray w = f.arrays().get("weight");
            assertArrayEquals(new long[] {2, 3}, w.shape());
            assertEquals(5.0, w.getDouble(5));
            assertEquals(0.5, f.arrays().get("bias").getDouble(1));
        }
        try (TensorFile f = TorchSave.open(dir.resolve("dtypes.pt"))) {
            Map<String, NpyArray> a = f.arrays();
            assertEquals(DType.FLOAT16, a.get("f16").dtype());
            assertEquals(-2.0, a.get("f16").getDouble(1));
            assertEquals(DType.BFLOAT16, a.get("bf16").dtype());
            assertEquals(3.0, a.get("bf16").getDouble(1));
            assertEquals(2.0, a.get("f64").getDouble(1));
            assertEquals(DType.BOOL, a.get("b").dtype());
            assertEquals(1, a.get("b").getLong(0));
            assertEquals(-3, a.get("i8").getLong(0));
            assertEquals(300, a.get("i16").getLong(0));
            NpyArray t = a.get("T"); // a transposed view, gathered into C order
            assertArrayEquals(new long[] {3, 2}, t.shape());
            long[] want = {0, 3, 1, 4, 2, 5};
            for (int i = 0; i < 6; i++) {
                assertEquals(want[i], t.getLong(i));
            }
            assertEquals(7, a.get("nested.a").getLong(0));
        }
        try (TensorFile f = TorchSave.open(dir.resolve("list.pt"))) {
            assertEquals(List.of("0", "1"), List.copyOf(f.arrays().keySet()));
            assertEquals(3, f.arrays().get("1").getLong(0));
        }
    }
}
