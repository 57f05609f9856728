package dev.stoker.formats.tensors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.npy.NpyArray;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** safetensors files written here by the format's specification, read and refused. */
class SafeTensorsTest {
    @TempDir
    Path tmp;

    /** A safetensors file: the header (padded with spaces to a multiple of 8, as the writer does) and the data. */
    private Path write(String name, String header, byte[] data) throws IOException {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        int padded = (h.length + 7) / 8 * 8;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(padded).array());
        out.writeBytes(h);
        for (int i = h.length; i < padded; i++) {
            out.write(' ');
        }
        out.writeBytes(data);
        Path p = tmp.resolve(name);
        Files.write(p, out.toByteArray());
        return p;
    }

    private static byte[] floats(float... v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : v) {
            b.putFloat(f);
        }
        return b.array();
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    @Test
    void readsEachTensorInPlaceWithItsDtypeAndShape() throws IOException {
        byte[] x = floats(0, 1, 2, 3, 4, 5);
        byte[] ids = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(7).putLong(-1).array();
        byte[] bf = {(byte) 0x80, 0x3F, 0x40, 0x40}; // bfloat16 1.0, 3.0
        Path p = write("model.safetensors", "{\"__metadata__\":{\"format\":\"pt\"},"
                + "\"ids\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[24,40]},"
                + "\"x\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                + "\"h\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[40,44]}}", concat(x, ids, bf));
        try (TensorFile f = TensorFile.open(p)) {
            assertEquals("safetensors", f.format());
            assertEquals(List.of("ids", "x", "h"), List.copyOf(f.arrays().keySet()));
            NpyArray a = f.arrays().get("x");
            assertEquals(DType.FLOAT32, a.dtype());
            assertArrayEquals(new long[] {2, 3}, a.shape());
            assertEquals(5.0, a.getDouble(5));
            assertTrue(a.segment().isMapped());
            assertEquals(-1, f.arrays().get("ids").getLong(1));
            assertEquals(3.0, f.arrays().get("h").getDouble(1));
        }
    }

    @Test
    void aSafetensorsFileIsKnownByItsShapeWhateverItsName() throws IOException {
        Path p = write("weights.bin", "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", floats(2));
        assertTrue(SafeTensors.looksLike(p));
        try (TensorFile f = TensorFile.open(p)) {
            assertEquals(2.0, f.arrays().get("x").getDouble(0));
        }
    }

    private void refused(String header, byte[] data, String says) throws IOException {
        Path p = write("bad.safetensors", header, data);
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> SafeTensors.open(p));
        assertTrue(e.getMessage().startsWith(p + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(says), e.getMessage());
    }

    @Test
    void refusesOverlapsGapsWrongSizesAndBoundsByName() throws IOException {
        refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                new byte[12], "tensor 'b' begins at data byte 4 where 8 was expected (it overlaps the tensor before it)");
        refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", new byte[8], "a gap of 4 bytes");
        refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", new byte[8],
                "tensor 'a': shape [3] of F32 is 12 bytes, its data_offsets give 8");
        refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", new byte[8], "lie outside the 8 data bytes");
        refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", new byte[8], "bytes no tensor holds");
        refused("{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]}}", new byte[1], "dtype 'F8_E4M3' is not read");
        refused("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
                new byte[2], "not JSON");
        refused("{\"a\": [1, 2]}", new byte[0], "expected {\"dtype\"");
        refused("{\"a\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,1]}}", new byte[1], "must hold sizes >= 0");
    }

    @Test
    void refusesAHeaderLongerThanTheFile() throws IOException {
        Path p = tmp.resolve("short.safetensors");
        Files.write(p, concat(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(1000).array(), "{}".getBytes()));
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> SafeTensors.open(p));
        assertTrue(e.getMessage().contains("a header of 1000 bytes in a file of 10"), e.getMessage());
    }
}
