package dev.stoker.root;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file in ROOT's large format, laid out as ROOT 6 writes one past {@code TFile::kStartBigFile}:
 * the header with 64-bit fEND and fSeekFree, the top directory's key and the subdirectory's (written
 * early, at small seeks: TKey version 4) whose records were rewritten at close as TDirectory 1005
 * (64-bit seeks), and past 2^31 an object's key, the subdirectory's keys list and the top one's (TKey
 * 1004, 64-bit fSeekKey and fSeekPdir). The hole before them is sparse. (Whole trees in such files,
 * and in subdirectories, are read against uproot by python/tests/test_root_files.py.)
 */
class LargeFileTest {
    static final long FAR = (1L << 31) + 4321;
    static final int DATIME = 0x7C420000;

    @TempDir
    Path tmp;

    @Test
    void keysAndDirectoriesOfBothWidthsAreReadInOneFile() throws IOException {
        Path p = tmp.resolve("big.root");
        byte[] payload = "sixty-four bits".getBytes(StandardCharsets.US_ASCII);
        assumeTrue(Files.getFileStore(tmp).getUsableSpace() > 256 << 20, "too little disk for even a sparse file");
        long subSeek;
        try {
            subSeek = write(p, payload);
        } catch (IOException e) {
            assumeTrue(false, "this filesystem cannot hold a sparse file past 2 GB: " + e);
            return;
        }
        try (RootFile f = RootFile.open(p.toString())) {
            assertEquals(62206, f.version());
            assertTrue(f.size() > FAR);
            List<Key> top = f.keys();
            assertEquals(1, top.size());
            assertEquals(new Key("sub", 1, "TDirectory", "sub", subSeek, top.get(0).keylen() + 60, 60, top.get(0).keylen()), top.get(0));
            Directory sub = f.directory("sub");
            assertEquals(1, sub.keys().size());
            Key blob = sub.key("blob");
            assertEquals(FAR, blob.seekKey());
            assertEquals("TObjString", blob.className());
            ByteBuffer b = f.object(blob);
            byte[] got = new byte[b.remaining()];
            b.get(got);
            assertArrayEquals(payload, got);
            assertEquals(blob, f.directory("/sub/").key("blob"));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.table("blob"));
            assertTrue(e.getMessage().contains("no tree 'blob'; the top directory holds sub (TDirectory)"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> f.table("sub/blob"));
            assertTrue(e.getMessage().contains("'sub/blob' is a TObjString, not a TTree"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> f.directory("sub/blob"));
            assertTrue(e.getMessage().contains("no directory 'sub/blob' (it is a TObjString); sub holds blob (TObjString)"),
                    e.getMessage());
        } finally {
            Files.deleteIfExists(p);
        }
    }

    /** Writes the file; returns the subdirectory key's seek. */
    static long write(Path p, byte[] payload) throws IOException {
        String name = "big.root";
        byte[] named = concat(tstring(name), tstring(""));
        int topKeylen = keylen(100, "TFile", name, "");
        long subSeek = 100 + topKeylen + named.length + 60;
        int subKeylen = keylen(subSeek, "TDirectory", "sub", "sub");
        byte[] subKey = key(subSeek, 100, 60, "TDirectory", "sub", "sub", subKeylen + 60);
        byte[] blobKey = key(FAR, subSeek, payload.length, "TObjString", "blob", "", keylen(FAR, "TObjString", "blob", "") + payload.length);
        long subKeysSeek = FAR + blobKey.length + payload.length;
        byte[] subKeysBody = concat(ByteBuffer.allocate(4).putInt(1).array(), blobKey);
        int subKeysNbytes = keylen(subKeysSeek, "TDirectory", "sub", "sub") + subKeysBody.length;
        byte[] subKeys = concat(key(subKeysSeek, subSeek, subKeysBody.length, "TDirectory", "sub", "sub", subKeysNbytes), subKeysBody);
        long topKeysSeek = subKeysSeek + subKeys.length;
        byte[] topKeysBody = concat(ByteBuffer.allocate(4).putInt(1).array(), subKey);
        int topKeysNbytes = keylen(topKeysSeek, "TFile", name, "") + topKeysBody.length;
        byte[] topKeys = concat(key(topKeysSeek, 100, topKeysBody.length, "TFile", name, "", topKeysNbytes), topKeysBody);
        long end = topKeysSeek + topKeys.length;
        int nbytesName = topKeylen + named.length;
        ByteBuffer header = ByteBuffer.allocate(100)
                .put("root".getBytes(StandardCharsets.US_ASCII)).putInt(62206 + 1_000_000).putInt(100)
                .putLong(end).putLong(0).putInt(0).putInt(0).putInt(nbytesName).put((byte) 8).putInt(0)
                .putLong(0).putInt(0).putShort((short) 1);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            put(ch, 0, header.array());
            put(ch, 100, concat(key(100, 0, named.length + 60, "TFile", name, "", topKeylen + named.length + 60), named,
                    directory(topKeysNbytes, nbytesName, 100, 0, topKeysSeek)));
            put(ch, subSeek, concat(subKey, directory(subKeysNbytes, subKeylen, subSeek, 100, subKeysSeek)));
            put(ch, FAR, concat(blobKey, payload));
            put(ch, subKeysSeek, subKeys);
            put(ch, topKeysSeek, topKeys);
        }
        return subSeek;
    }

    static void put(FileChannel ch, long at, byte[] b) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(b);
        while (buf.hasRemaining()) {
            ch.write(buf, at + buf.position());
        }
    }

    /** A TKey header: version 4 with 32-bit seeks, 1004 with 64-bit ones past 2e9 (as TKey::Build decides). */
    static byte[] key(long seek, long pdir, int objlen, String cls, String name, String title, int nbytes) {
        boolean large = seek > 2_000_000_000L;
        ByteBuffer b = ByteBuffer.allocate(keylen(seek, cls, name, title));
        b.putInt(nbytes).putShort((short) (large ? 1004 : 4)).putInt(objlen).putInt(DATIME)
                .putShort((short) b.capacity()).putShort((short) 1);
        if (large) {
            b.putLong(seek).putLong(pdir);
        } else {
            b.putInt((int) seek).putInt((int) pdir);
        }
        return b.put(tstring(cls)).put(tstring(name)).put(tstring(title)).array();
    }

    static int keylen(long seek, String cls, String name, String title) {
        return 26 + (seek > 2_000_000_000L ? 8 : 0) + tstring(cls).length + tstring(name).length + tstring(title).length;
    }

    /** TDirectoryFile's record, version 1005: 64-bit fSeekDir, fSeekParent, fSeekKeys, then the UUID; 60 bytes. */
    static byte[] directory(int nbytesKeys, int nbytesName, long seekDir, long seekParent, long seekKeys) {
        return ByteBuffer.allocate(60).putShort((short) 1005).putInt(DATIME).putInt(DATIME).putInt(nbytesKeys)
                .putInt(nbytesName).putLong(seekDir).putLong(seekParent).putLong(seekKeys).putShort((short) 1).array();
    }

    static byte[] tstring(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return concat(new byte[] {(byte) b.length}, b);
    }

    static byte[] concat(byte[]... parts) {
        try (var out = new java.io.ByteArrayOutputStream()) {
            for (byte[] part : parts) {
                out.write(part);
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
