package dev.stoker.formats.riegeli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class HighwayHashTest {
    private static final ValueLayout.OfLong LONG_LE =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** The reference implementation's test key: bytes 0 to 31. */
    private static final long[] TEST_KEY = {
        0x0706050403020100L, 0x0F0E0D0C0B0A0908L, 0x1716151413121110L, 0x1F1E1D1C1B1A1918L,
    };

    /** Published 64-bit outputs (google/highwayhash c/highwayhash_test.c): index n hashes bytes 0..n-1. */
    private static final long[] EXPECTED_64 = {
        0x907A56DE22C26E53L, 0x7EAB43AAC7CDDD78L, 0xB8D0569AB0B53D62L, 0x5C6BEFAB8A463D80L,
        0xF205A46893007EDAL, 0x2B8A1668E4A94541L, 0xBD4CCC325BEFCA6FL, 0x4D02AE1738F59482L,
        0xE1205108E55F3171L, 0x32D2644EC77A1584L, 0xF6E10ACDB103A90BL, 0xC3BBF4615B415C15L,
        0x243CC2040063FA9CL, 0xA89A58CE65E641FFL, 0x24B031A348455A23L, 0x40793F86A449F33BL,
        0xCFAB3489F97EB832L, 0x19FE67D2C8C5C0E2L, 0x04DD90A69C565CC2L, 0x75D9518E2371C504L,
        0x38AD9B1141D3DD16L, 0x0264432CCD8A70E0L, 0xA9DB5A6288683390L, 0xD7B05492003F028CL,
        0x205F615AEA59E51EL, 0xEEE0C89621052884L, 0x1BFC1A93A7284F4FL, 0x512175B5B70DA91DL,
        0xF71F8976A0A2C639L, 0xAE093FEF1F84E3E7L, 0x22CA92B01161860FL, 0x9FC7007CCF035A68L,
        0xA0C964D9ECD580FCL, 0x2C90F73CA03181FCL, 0x185CF84E5691EB9EL, 0x4FC1F5EF2752AA9BL,
        0xF5B7391A5E0A33EBL, 0xB9B84B83B4E96C9CL, 0x5E42FE712A5CD9B4L, 0xA150F2F90C3F97DCL,
        0x7FA522D75E2D637DL, 0x181AD0CC0DFFD32BL, 0x3889ED981E854028L, 0xFB4297E8C586EE2DL,
        0x6D064A45BB28059CL, 0x90563609B3EC860CL, 0x7AA4FCE94097C666L, 0x1326BAC06B911E08L,
        0xB926168D2B154F34L, 0x9919848945B1948DL, 0xA2A98FC534825EBEL, 0xE9809095213EF0B6L,
        0x582E5483707BC0E9L, 0x086E9414A88A6AF5L, 0xEE86B98D20F6743DL, 0xF89B7FF609B1C0A7L,
        0x4C7D9CC19E22C3E8L, 0x9A97005024562A6FL, 0x5DD41CF423E6EBEFL, 0xDF13609C0468E227L,
        0x6E0DA4F64188155AL, 0xB755BA4B50D7D4A1L, 0x887A3484647479BDL, 0xAB8EEBE9BF2139A0L,
        0x75542C5D4CD2A6FFL,
    };

    private static final long BLOCK = 1 << 16;
    private static final long BLOCK_HEADER = 24;
    private static final long USABLE = BLOCK - BLOCK_HEADER;
    private static final int CHUNK_HEADER = 40;

    @Test
    void matchesThePublishedVectors() {
        byte[] data = new byte[EXPECTED_64.length];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) i;
        }
        for (int n = 0; n < EXPECTED_64.length; n++) {
            assertEquals(EXPECTED_64[n], HighwayHash.hash64(TEST_KEY, data, 0, n), "length " + n);
        }
    }

    @Test
    void matchesThePublishedVectorAtOffsetsAndInNativeMemory() {
        try (Arena arena = Arena.ofConfined()) {
            for (int shift : new int[] {1, 3, 7, 13}) {
                MemorySegment s = arena.allocate(EXPECTED_64.length + shift);
                for (int i = 0; i < EXPECTED_64.length; i++) {
                    s.set(ValueLayout.JAVA_BYTE, shift + i, (byte) i);
                }
                for (int n = 0; n < EXPECTED_64.length; n++) {
                    assertEquals(EXPECTED_64[n], HighwayHash.hash64(TEST_KEY, s, shift, n),
                            "length " + n + " at offset " + shift);
                }
            }
        }
    }

    @Test
    void matchesThePublishedVectorForAnotherKey() {
        byte[] data = new byte[33];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (128 + i);
        }
        assertEquals(0x53c516cce478cad7L, HighwayHash.hash64(new long[] {1, 2, 3, 4}, data, 0, 33));
    }

    @Test
    void heapAndNativeAgreeAndOnlyTheRangeCounts() {
        Random random = new Random(7);
        byte[] data = new byte[5000];
        random.nextBytes(data);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment off = arena.allocate(data.length);
            MemorySegment.copy(data, 0, off, ValueLayout.JAVA_BYTE, 0, data.length);
            for (int trial = 0; trial < 200; trial++) {
                int from = random.nextInt(data.length);
                int length = random.nextInt(data.length - from + 1);
                long h = HighwayHash.hash64(TEST_KEY, data, from, length);
                assertEquals(h, HighwayHash.hash64(TEST_KEY, off, from, length));
                byte[] copy = Arrays.copyOfRange(data, from, from + length);
                assertEquals(h, HighwayHash.hash64(TEST_KEY, copy, 0, length));
            }
        }
        byte[] a = data.clone();
        a[4999] ^= 1;
        assertNotEquals(HighwayHash.hash64(TEST_KEY, data, 0, 5000), HighwayHash.hash64(TEST_KEY, a, 0, 5000));
        assertEquals(HighwayHash.hash64(TEST_KEY, data, 0, 4999), HighwayHash.hash64(TEST_KEY, a, 0, 4999));
    }

    @Test
    void rejectsBadArguments() {
        byte[] data = new byte[10];
        assertThrows(IllegalArgumentException.class, () -> HighwayHash.hash64(new long[3], data, 0, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> HighwayHash.hash64(TEST_KEY, data, 5, 6));
        assertThrows(IndexOutOfBoundsException.class, () -> HighwayHash.hash64(TEST_KEY, data, -1, 2));
        assertThrows(IndexOutOfBoundsException.class,
                () -> HighwayHash.hash64(TEST_KEY, MemorySegment.ofArray(data), 0, -1));
    }

    @Test
    void riegeliKeyIsItsSignatureText() {
        MemorySegment text = MemorySegment.ofArray(
                "Riegeli/records\nRiegeli/records\n".getBytes(StandardCharsets.US_ASCII));
        long[] key = new long[4];
        for (int i = 0; i < 4; i++) {
            key[i] = text.get(LONG_LE, 8L * i);
        }
        assertArrayEquals(key, HighwayHash.RIEGELI_KEY);
    }

    /** Every file begins with a block header and the signature chunk's header, both hashed. */
    @Test
    void goldenFilesHeadersVerify() throws IOException {
        List<Path> files = goldenFiles();
        for (Path p : files) {
            MemorySegment f = MemorySegment.ofArray(Files.readAllBytes(p));
            assertTrue(f.byteSize() >= 64, p + " is shorter than its fixed 64-byte prefix");
            assertEquals(f.get(LONG_LE, 0), riegeli(f, 8, 16), p + ": block header at 0");
            assertEquals(f.get(LONG_LE, 24), riegeli(f, 32, 32), p + ": signature chunk header at 24");
            for (long b = BLOCK; b + BLOCK_HEADER <= f.byteSize(); b += BLOCK) {
                assertEquals(f.get(LONG_LE, b), riegeli(f, b + 8, 16), p + ": block header at " + b);
            }
        }
    }

    /**
     * Walks every chunk of the intact golden files (chunk headers and data reassembled around
     * block headers) and checks both hashes; the bit-flipped fixture fails exactly one data hash.
     */
    @Test
    void goldenFilesChunkHashesVerify() throws IOException {
        int inFirstBlock = 0;
        for (Path p : goldenFiles()) {
            String name = p.getFileName().toString();
            if (name.startsWith("corrupt_truncated")) {
                continue;
            }
            MemorySegment f = MemorySegment.ofArray(Files.readAllBytes(p));
            int badData = 0;
            long begin = 0;
            while (begin < f.byteSize()) {
                MemorySegment header = MemorySegment.ofArray(gather(f, begin, CHUNK_HEADER));
                assertEquals(header.get(LONG_LE, 0), HighwayHash.hash64(HighwayHash.RIEGELI_KEY, header, 8, 32),
                        name + ": chunk header at " + begin);
                long dataSize = header.get(LONG_LE, 8);
                long numRecords = header.get(LONG_LE, 24) >>> 8;
                long dataBegin = addWithOverhead(begin, CHUNK_HEADER);
                byte[] data = gather(f, dataBegin, dataSize);
                if (HighwayHash.hash64(HighwayHash.RIEGELI_KEY, data, 0, data.length) != header.get(LONG_LE, 16)) {
                    badData++;
                }
                if (begin >= BLOCK_HEADER && dataBegin + dataSize <= BLOCK) {
                    inFirstBlock++;
                }
                begin = Math.max(addWithOverhead(begin, CHUNK_HEADER + dataSize),
                        roundUpToPossibleChunkBoundary(begin + numRecords));
            }
            assertEquals(f.byteSize(), begin, name + ": chunks end at the end of the file");
            assertEquals(name.startsWith("corrupt_bitflip") ? 1 : 0, badData, name + ": data hashes");
        }
        assertTrue(inFirstBlock > 0);
    }

    private static long riegeli(MemorySegment f, long offset, long length) {
        return HighwayHash.hash64(HighwayHash.RIEGELI_KEY, f, offset, length);
    }

    /** Where {@code length} bytes of a chunk starting at {@code begin} end, block headers included. */
    private static long addWithOverhead(long begin, long length) {
        long blockHeaders = (length + (begin + USABLE - 1) % BLOCK) / USABLE;
        return begin + length + blockHeaders * BLOCK_HEADER;
    }

    /** The first position at or after {@code pos} not inside nor right after a block header. */
    private static long roundUpToPossibleChunkBoundary(long pos) {
        long remaining = Math.floorMod(-pos, BLOCK);
        return pos + Math.max(0, remaining - (USABLE - 1));
    }

    /** {@code length} chunk bytes from {@code pos}, skipping the block headers in between. */
    private static byte[] gather(MemorySegment f, long pos, long length) {
        byte[] out = new byte[Math.toIntExact(length)];
        int done = 0;
        while (done < out.length) {
            if (pos % BLOCK < BLOCK_HEADER) {
                pos += BLOCK_HEADER - pos % BLOCK;
            }
            int n = (int) Math.min(out.length - done, BLOCK - pos % BLOCK);
            MemorySegment.copy(f, ValueLayout.JAVA_BYTE, pos, out, done, n);
            done += n;
            pos += n;
        }
        return out;
    }

    private static List<Path> goldenFiles() throws IOException {
        Path root = Paths.get(System.getProperty("user.dir")).resolve("../../shared/anchor-data").normalize();
        List<Path> files = new ArrayList<>();
        for (String dir : new String[] {"riegeli_golden", "array_record"}) {
            Path d = root.resolve(dir);
            if (Files.isDirectory(d)) {
                try (Stream<Path> s = Files.list(d)) {
                    s.filter(Files::isRegularFile).sorted().forEach(files::add);
                }
            }
        }
        Assumptions.assumeFalse(files.isEmpty(), "no golden files under " + root);
        return files;
    }
}
