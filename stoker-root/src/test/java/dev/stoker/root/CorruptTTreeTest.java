package dev.stoker.root;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Corrupt copies of the real files (made in a temporary folder) fail reading with one line naming
 * the file, the tree, branch and basket (or key) and the byte: never wrong values, a hang or an
 * allocation the file does not justify.
 */
class CorruptTTreeTest {
    @TempDir
    Path tmp;

    /** Where a column's first basket lies in a file: {seek, bytes, key length, objlen}. */
    private static long[] firstBasket(Path file, String tree, String column) throws IOException {
        try (RootFile f = RootFile.open(file.toString()); RootTable t = f.table(tree)) {
            RootColumn c = t.columns().stream().filter(x -> x.name().equals(column)).findFirst().orElseThrow();
            long[] at = ((TTreeTable) t).basket(c, 0);
            ByteBuffer k = f.read(at[0], 18, "test");
            return new long[] {at[0], at[1], k.getShort(14), k.getInt(6)};
        }
    }

    private Path copy(String name, Consumer<ByteBuffer> change) throws IOException {
        byte[] b = Files.readAllBytes(PhysicsData.root(name));
        change.accept(ByteBuffer.wrap(b));
        Path p = tmp.resolve("bad-" + name);
        Files.write(p, b);
        return p;
    }

    /** Reading every column of the tree fails in one line that contains each of {@code words}. */
    private static void failsReading(Path file, String tree, String... words) {
        IOException e = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(IOException.class, () -> {
            try (RootFile f = RootFile.open(file.toString()); RootTable t = f.table(tree)) {
                for (RootColumn c : t.columns()) {
                    t.read(c, 0, t.entries());
                }
            }
        }));
        String m = e.getMessage();
        assertTrue(m.startsWith(file.toString() + ": "), m);
        assertTrue(!m.contains("\n"), m);
        for (String w : words) {
            assertTrue(m.contains(w), "'" + w + "' in: " + m);
        }
    }

    @Test
    void aBitFlippedZlibBasketFailsNamingIt() throws IOException {
        long[] b = firstBasket(PhysicsData.root("uproot-HZZ.root"), "events", "Jet_Px");
        Path p = copy("uproot-HZZ.root", buf -> buf.put((int) (b[0] + b[2] + 9 + 40), (byte) (buf.get((int) (b[0] + b[2] + 9 + 40)) ^ 0x55)));
        failsReading(p, "events", "branch 'Jet_Px', basket 0 at byte " + b[0], "block 0");
    }

    @Test
    void aBitFlippedLz4BasketFailsItsChecksum() throws IOException {
        long[] b = firstBasket(PhysicsData.root("uproot-HZZ-lz4.root"), "events", "Jet_Px");
        Path p = copy("uproot-HZZ-lz4.root", buf -> buf.put((int) (b[0] + b[2] + 30), (byte) (buf.get((int) (b[0] + b[2] + 30)) ^ 1)));
        failsReading(p, "events", "branch 'Jet_Px', basket 0 at byte " + b[0], "XXH64");
    }

    @Test
    void aBitFlippedZstdOrLzmaBasketFails() throws IOException {
        for (String name : new String[] {"uproot-HZZ-zstd.root", "uproot-HZZ-lzma.root"}) {
            long[] b = firstBasket(PhysicsData.root(name), "events", "Muon_Px");
            Path p = copy(name, buf -> buf.put((int) (b[0] + b[2] + 9 + 20), (byte) (buf.get((int) (b[0] + b[2] + 9 + 20)) ^ 0x5A)));
            failsReading(p, "events", "branch 'Muon_Px', basket 0 at byte " + b[0]);
        }
    }

    @Test
    void aDecompressedSizeThatDoesNotMatchFails() throws IOException {
        long[] b = firstBasket(PhysicsData.root("uproot-HZZ.root"), "events", "Jet_Px");
        Path p = copy("uproot-HZZ.root", buf -> buf.putInt((int) b[0] + 6, (int) b[3] + 1000));
        failsReading(p, "events", "branch 'Jet_Px', basket 0 at byte " + b[0], "expected");
        Path huge = copy("uproot-HZZ.root", buf -> buf.putInt((int) b[0] + 6, Integer.MAX_VALUE - 16));
        failsReading(huge, "events", "branch 'Jet_Px', basket 0 at byte " + b[0]);
    }

    @Test
    void aBasketKeyLyingAboutItsSizeFails() throws IOException {
        long[] b = firstBasket(PhysicsData.root("uproot-HZZ.root"), "events", "Jet_Px");
        Path p = copy("uproot-HZZ.root", buf -> buf.putInt((int) b[0], 1 << 30));
        failsReading(p, "events", "basket 0 at byte " + b[0], "declares");
    }

    @Test
    void aBasketLyingAboutItsEntriesFails() throws IOException {
        Path src = PhysicsData.root("uproot-sample-6.20.04-uncompressed.root");
        long[] b = firstBasket(src, "sample", "Ai4");
        Path p = copy("uproot-sample-6.20.04-uncompressed.root", buf -> buf.putInt((int) (b[0] + b[2] - 9), 1_000_000));
        failsReading(p, "sample", "branch 'Ai4', basket 0 at byte " + b[0], "entries");
    }

    @Test
    void aBasketWhoseDataEndsPastItsPayloadFails() throws IOException {
        Path src = PhysicsData.root("uproot-sample-6.20.04-uncompressed.root");
        long[] b = firstBasket(src, "sample", "Ai4");
        Path p = copy("uproot-sample-6.20.04-uncompressed.root", buf -> buf.putInt((int) (b[0] + b[2] - 5), Integer.MAX_VALUE));
        failsReading(p, "sample", "branch 'Ai4', basket 0 at byte " + b[0], "data ends");
    }

    @Test
    void anEntryOffsetPastTheDataFails() throws IOException {
        Path src = PhysicsData.root("uproot-sample-6.20.04-uncompressed.root");
        long[] b = firstBasket(src, "sample", "Ai4");
        // the entry offsets follow the data: the first one's value lies 4 bytes after the table's count
        Path p = copy("uproot-sample-6.20.04-uncompressed.root", buf -> {
            int last = buf.getInt((int) (b[0] + b[2] - 5));
            int table = (int) b[0] + last;
            buf.putInt(table + 8, 0x7FFFFF00);
        });
        failsReading(p, "sample", "branch 'Ai4', basket 0 at byte " + b[0], "offset");
    }

    @Test
    void aBasketPastTheFilesEndFails() throws IOException {
        Path src = PhysicsData.root("uproot-foriter.root");
        long[] b = firstBasket(src, "foriter", "data");
        byte[] all = Files.readAllBytes(src);
        // the file cut just after its header's stated end would fail at open: keep the header's end honest
        Path p = tmp.resolve("short.root");
        byte[] cut = java.util.Arrays.copyOf(all, all.length);
        ByteBuffer.wrap(cut).putInt((int) b[0], (int) b[1] + all.length);
        Files.write(p, cut);
        failsReading(p, "foriter", "basket 0 at byte " + b[0]);
    }

    @Test
    void aKeysListLyingAboutItsCountFails() throws IOException {
        Path src = PhysicsData.root("uproot-foriter.root");
        long seekKeys;
        int keylen;
        try (RootFile f = RootFile.open(src.toString())) {
            ByteBuffer h = f.read(0, 64, "test");
            int begin = h.getInt(8);
            int nbytesName = h.getInt(28);
            ByteBuffer d = f.read(begin + nbytesName, 64, "test");
            seekKeys = d.getShort(0) > 1000 ? d.getLong(2 + 8 + 8 + 16) : d.getInt(2 + 8 + 8 + 8);
            keylen = f.read(seekKeys, 18, "test").getShort(14);
        }
        Path p = copy("uproot-foriter.root", buf -> buf.putInt((int) seekKeys + keylen, 50_000_000));
        IOException e = assertThrows(IOException.class, () -> RootFile.open(p.toString()).close());
        assertTrue(e.getMessage().startsWith(p + ": keys list of the top directory: declares 50000000 keys"), e.getMessage());
        assertTrue(e.getMessage().contains("(at byte " + (seekKeys + keylen + 4) + ")"), e.getMessage());
    }

    @Test
    void aTruncatedFileFailsAtOpen() throws IOException {
        for (String name : new String[] {"uproot-HZZ-lz4.root", "uproot-small-evnt-tree-fullsplit.root"}) {
            byte[] all = Files.readAllBytes(PhysicsData.root(name));
            Path p = tmp.resolve("cut-" + name);
            Files.write(p, java.util.Arrays.copyOf(all, all.length - 100));
            IOException e = assertThrows(IOException.class, () -> RootFile.open(p.toString()).close());
            assertTrue(e.getMessage().startsWith(p + ": truncated: its header says it ends at byte "), e.getMessage());
        }
    }
}
