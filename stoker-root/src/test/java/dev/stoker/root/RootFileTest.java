package dev.stoker.root;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RootFileTest {
    @TempDir
    Path tmp;

    static List<Path> all() throws IOException {
        try (Stream<Path> s = Files.list(PhysicsData.folder("root"))) {
            return s.filter(p -> p.toString().endsWith(".root")).sorted().toList();
        }
    }

    @Test
    void everyKeyOfEveryFileDecompressesToItsDeclaredLength() throws IOException {
        for (Path p : all()) {
            try (RootFile f = RootFile.open(p.toString())) {
                assertTrue(f.keys().size() > 0, p.toString());
                for (Key k : f.keys()) {
                    ByteBuffer b = f.object(k);
                    assertEquals(k.objlen(), b.remaining(), p + " " + k);
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"uproot-HZZ.root", "uproot-HZZ-lz4.root", "uproot-HZZ-zstd.root", "uproot-HZZ-lzma.root"})
    void eachCodecGivesTheSameTreeRecord(String name) throws IOException {
        try (RootFile f = RootFile.open(PhysicsData.root(name).toString())) {
            Key k = f.directory("").key("events");
            assertNotNull(k);
            assertEquals("TTree", k.className());
            ByteBuffer b = f.object(k);
            assertEquals(k.objlen(), b.remaining());
            assertTrue(k.nbytes() - k.keylen() < k.objlen(), "compressed");
        }
    }

    @Test
    void aTruncatedFileFailsNamingItsEnd() throws IOException {
        Path src = PhysicsData.root("uproot-HZZ.root");
        byte[] b = Files.readAllBytes(src);
        Path cut = tmp.resolve("cut.root");
        Files.write(cut, java.util.Arrays.copyOf(b, b.length / 2));
        IOException e = assertThrows(IOException.class, () -> RootFile.open(cut.toString()).close());
        assertTrue(e.getMessage().startsWith(cut + ": truncated"), e.getMessage());
    }

    @Test
    void notARootFileIsRefused() throws IOException {
        Path p = Files.write(tmp.resolve("x.root"), new byte[100]);
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> RootFile.open(p.toString()).close());
        assertTrue(e.getMessage().contains("not a ROOT file"), e.getMessage());
    }

    @Test
    void aFlippedLz4ByteFailsItsChecksum() throws IOException {
        Path p = PhysicsData.root("uproot-HZZ-lz4.root");
        Key k;
        try (RootFile f = RootFile.open(p.toString())) {
            k = f.directory("").key("events");
        }
        byte[] b = Files.readAllBytes(p);
        b[(int) k.seekKey() + k.keylen() + 9 + 8 + 20] ^= 0x10;
        Path bad = Files.write(tmp.resolve("flip.root"), b);
        try (RootFile f = RootFile.open(bad.toString())) {
            CorruptShardException e = assertThrows(CorruptShardException.class, () -> f.object(k));
            assertTrue(e.getMessage().contains("XXH64") && e.getMessage().contains("key 'events;"), e.getMessage());
        }
    }

    @Test
    void lyingBlockSizesFailBeforeAnyAllocation() throws IOException {
        try (RootFile f = RootFile.open(PhysicsData.root("uproot-HZZ.root").toString())) {
            Key k = f.directory("").key("events");
            ByteBuffer raw = f.read(k.seekKey() + k.keylen(), k.nbytes() - k.keylen(), "test");
            byte[] b = new byte[raw.remaining()];
            raw.get(b);
            // compressed size past the end
            byte[] c = b.clone();
            c[3] = (byte) 0xFF;
            c[4] = (byte) 0xFF;
            c[5] = (byte) 0x7F;
            CorruptShardException e = assertThrows(CorruptShardException.class,
                    () -> f.decompress(ByteBuffer.wrap(c), k.objlen(), "record"));
            assertTrue(e.getMessage().contains("compressed bytes") && e.getMessage().contains("remain"), e.getMessage());
            // the expected total is not what the blocks declare
            e = assertThrows(CorruptShardException.class, () -> f.decompress(ByteBuffer.wrap(b), 1 << 30, "record"));
            assertTrue(e.getMessage().contains("expected"), e.getMessage());
            // uncompressed size declared larger than the data gives
            byte[] u = b.clone();
            int declared = (u[6] & 0xFF) | (u[7] & 0xFF) << 8 | (u[8] & 0xFF) << 16;
            u[6] = (byte) (declared + 1);
            u[7] = (byte) ((declared + 1) >> 8);
            u[8] = (byte) ((declared + 1) >> 16);
            e = assertThrows(CorruptShardException.class, () -> f.decompress(ByteBuffer.wrap(u), declared + 1, "record"));
            assertTrue(e.getMessage().contains("decompresses to"), e.getMessage());
        }
    }

    @Test
    void readsPastTheEndNameWhat() throws IOException {
        try (RootFile f = RootFile.open(PhysicsData.root("uproot-foriter.root").toString())) {
            IOException e = assertThrows(IOException.class, () -> f.read(f.size() - 2, 10, "basket 3"));
            assertTrue(e.getMessage().contains("basket 3") && e.getMessage().contains("run past"), e.getMessage());
        }
    }

    @Test
    void anUnknownTreeNamesWhatTheDirectoryHolds() throws IOException {
        try (RootFile f = RootFile.open(PhysicsData.root("uproot-foriter.root").toString())) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.table("nope"));
            assertTrue(e.getMessage().contains("foriter (TTree)"), e.getMessage());
        }
    }

    @Test
    void closeIsIdempotent() throws IOException {
        RootFile f = RootFile.open(PhysicsData.root("uproot-foriter.root").toString());
        f.close();
        f.close();
        assertThrows(IOException.class, () -> f.read(0, 4, "header"));
    }
}
