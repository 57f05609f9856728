package dev.stoker.formats.npy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.Fixtures;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The .npy/.npz contract, against files numpy wrote (fixtures/make_fixtures.py). */
class NpyTest {
    @TempDir
    Path tmp;

    @Test
    void readsEveryFixtureNumpyWrote() throws IOException {
        JsonNode all = Fixtures.expected().get("npy");
        int checked = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = all.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode want = e.getValue();
            try (NpyArray a = Npy.read(Fixtures.npy(e.getKey()))) {
                String name = e.getKey();
                assertEquals(want.get("descr").asText(), a.descr(), name);
                long[] shape = new long[want.get("shape").size()];
                for (int i = 0; i < shape.length; i++) {
                    shape[i] = want.get("shape").get(i).asLong();
                }
                assertArrayEquals(shape, a.shape(), name);
                assertEquals(want.get("fortran_order").asBoolean(), a.fortranOrder(), name);
                assertEquals(want.get("version").asText(), a.version(), name);
                Object[] first = a.first(8);
                assertEquals(want.get("first").size(), first.length, name);
                for (int i = 0; i < first.length; i++) {
                    JsonNode w = want.get("first").get(i);
                    Object got = first[i];
                    if (w.isBoolean()) {
                        assertEquals(w.asBoolean(), got, name + " first[" + i + "]");
                    } else if (w.isFloatingPointNumber()) {
                        assertEquals(w.asDouble(), (Double) got, Math.abs(w.asDouble()) * 1e-6, name + " first[" + i + "]");
                    } else {
                        assertEquals(w.bigIntegerValue().toString(), got.toString(), name + " first[" + i + "]");
                    }
                }
                double sum = 0;
                for (long i = 0; i < a.elements(); i++) {
                    sum += a.getDouble(i);
                }
                assertEquals(want.get("sum").asDouble(), sum, Math.max(1e-6, Math.abs(want.get("sum").asDouble()) * 1e-9), name + " sum");
                checked++;
            }
        }
        assertTrue(checked >= 25, "fixtures checked: " + checked);
    }

    @Test
    void refusesStructuredAndObjectArraysWithoutEvaluatingThem() {
        JsonNode refused = Fixtures.expected().get("refused");
        for (Iterator<Map.Entry<String, JsonNode>> it = refused.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            CorruptShardException ex = assertThrows(CorruptShardException.class, () -> Npy.read(Fixtures.npy(e.getKey())));
            assertTrue(ex.getMessage().contains(e.getKey()) && ex.getMessage().contains(e.getValue().asText()), ex.getMessage());
        }
    }

    @Test
    void readsStoredAndDeflatedNpz() throws IOException {
        JsonNode npz = Fixtures.expected().get("npz");
        for (String file : new String[] {"stored.npz", "deflated.npz"}) {
            Map<String, NpyArray> arrays = Npy.readNpz(Fixtures.npy(file));
            try {
                JsonNode want = npz.get(file);
                assertEquals(2, arrays.size());
                for (String k : new String[] {"x", "y"}) {
                    NpyArray a = arrays.get(k);
                    assertEquals(want.get(k).get("descr").asText(), a.descr(), file + " " + k);
                    for (int i = 0; i < want.get(k).get("values").size(); i++) {
                        assertEquals(want.get(k).get("values").get(i).asDouble(), a.getDouble(i), file + " " + k + "[" + i + "]");
                    }
                }
            } finally {
                Npy.closeAll(arrays);
            }
        }
    }

    @Test
    void writesFilesNumpyReads() throws Exception {
        assumeTrue(Fixtures.numpyAvailable(), "python3 with numpy is not installed: skipping the numpy read-back");
        Path f = tmp.resolve("w.npy");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(2 * 3 * 4 * 8);
            for (int i = 0; i < 24; i++) {
                data.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), i, i * 1_000_000_007L - 5);
            }
            Npy.write(f, DType.INT64, new long[] {2, 3, 4}, data);
        }
        String out = Fixtures.python("import numpy as np,sys; a=np.load(sys.argv[1]); "
                + "print(a.dtype.str, a.shape, int(a[1,2,3]), a.flags.c_contiguous)", f.toString());
        assertEquals("<i8 (2, 3, 4) " + (23 * 1_000_000_007L - 5) + " True", out.strip());
        try (NpyArray back = Npy.read(f)) {
            assertEquals(23 * 1_000_000_007L - 5, back.getLong(23));
        }
    }

    @Test
    void writesOneDimensionalAndScalarShapesAsNumpyDoes() throws Exception {
        byte[] h = Npy.header(DType.UINT16, new long[] {3});
        assertEquals("{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }",
                new String(h, 10, h.length - 10, java.nio.charset.StandardCharsets.ISO_8859_1).strip());
        assertEquals(0, Npy.header(DType.FLOAT32, new long[] {}).length % 64);
        Path f = tmp.resolve("s.npy");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment one = arena.allocate(4);
            one.set(ValueLayout.JAVA_FLOAT_UNALIGNED, 0, 2.5f);
            Npy.write(f, DType.FLOAT32, new long[] {}, one);
        }
        try (NpyArray a = Npy.read(f)) {
            assertEquals(0, a.shape().length);
            assertEquals(2.5, a.getDouble(0));
        }
    }

    @Test
    void corruptFilesAreNamedWithTheOffsetAndWhatWasExpected() throws IOException {
        byte[] good = Files.readAllBytes(Fixtures.npy("u2_le.npy"));
        Path cut = tmp.resolve("cut.npy");
        Files.write(cut, java.util.Arrays.copyOf(good, good.length - 3));
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> Npy.read(cut));
        assertTrue(e.getMessage().startsWith(cut + ": truncated") && e.getMessage().contains("needs 30 data bytes"), e.getMessage());

        Path magic = tmp.resolve("magic.npy");
        byte[] bad = good.clone();
        bad[1] = 'X';
        Files.write(magic, bad);
        e = assertThrows(CorruptShardException.class, () -> Npy.read(magic));
        assertTrue(e.getMessage().contains("expected the magic") && e.offset() == 0, e.getMessage());

        Path version = tmp.resolve("version.npy");
        bad = good.clone();
        bad[6] = 9;
        Files.write(version, bad);
        e = assertThrows(CorruptShardException.class, () -> Npy.read(version));
        assertTrue(e.getMessage().contains("version 9.0"), e.getMessage());

        Path header = tmp.resolve("header.npy");
        bad = good.clone();
        bad[8] = (byte) 0xFF;
        bad[9] = (byte) 0x7F;
        Files.write(header, bad);
        e = assertThrows(CorruptShardException.class, () -> Npy.read(header));
        assertTrue(e.getMessage().contains("runs past the end"), e.getMessage());

        Path dict = tmp.resolve("dict.npy");
        bad = good.clone();
        int at = new String(good, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf("'shape'");
        bad[at + 10] = '#';
        Files.write(dict, bad);
        e = assertThrows(CorruptShardException.class, () -> Npy.read(dict));
        assertTrue(e.getMessage().contains("malformed header"), e.getMessage());
    }
}
