package dev.stoker.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import dev.hardwood.metadata.CompressionCodec;
import dev.hardwood.metadata.PhysicalType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Column chunks of several zstd pages, built here page by page (the writers the fixtures come
 * from put a small row group's column in one page), so that a page decompressed in place lands
 * after others: its levels overwrite the previous page's last values for a moment, and those
 * must be back afterwards. Pages with nulls, pages whose levels take more or fewer bytes than
 * the page before, and columns without levels all decode to the values written.
 */
class ChunkDecoderTest {
    private static final int DATA_PAGE = 0;
    private static final int PLAIN = 0;
    private static final int RLE = 3;

    /** One page: its rows' values (null = no value) and how its levels are written. */
    private record Page(Long[] values, boolean longLevels) {
    }

    @Test
    void pagesDecompressedInPlaceLeaveEveryValueWhereItBelongs() throws Exception {
        List<Page> pages = new ArrayList<>();
        long v = 1000;
        // all present (the guess of the levels' size is learned), then a page with nulls, then
        // pages whose levels are longer (a run split in two) and shorter again, then the last
        int[] sizes = {300, 257, 300, 128, 300, 300, 77};
        for (int k = 0; k < sizes.length; k++) {
            Long[] values = new Long[sizes[k]];
            for (int i = 0; i < values.length; i++) {
                values[i] = k == 3 && i % 5 == 2 ? null : v * 7 - 3;
                v++;
            }
            pages.add(new Page(values, k == 4));
        }
        for (PhysicalType type : new PhysicalType[] {PhysicalType.INT64, PhysicalType.INT32, PhysicalType.DOUBLE}) {
            for (boolean optional : new boolean[] {true, false}) {
                List<Page> these = optional ? pages : pages.stream().filter(p -> !hasNull(p)).toList();
                long[] expected = these.stream().flatMap(p -> java.util.Arrays.stream(p.values))
                        .mapToLong(x -> x == null ? Long.MIN_VALUE : x).toArray();
                byte[] chunk = chunk(these, type, optional);
                ChunkDecoder.Spec spec = new ChunkDecoder.Spec(type, 0, optional ? 1 : 0, CompressionCodec.ZSTD);
                // twice with one decoder: the second time it starts with the first time's guess
                ChunkDecoder decoder = new ChunkDecoder();
                for (int pass = 0; pass < 2; pass++) {
                    try (Arena arena = Arena.ofConfined()) {
                        MemorySegment memory = arena.allocate(ChunkDecoder.SLACK + 8L * expected.length + 64);
                        memory.fill((byte) 0x5a);
                        Values got = decoder.decode(chunk, 0, chunk.length, spec, expected.length,
                                SegmentAllocator.slicingAllocator(memory));
                        for (int r = 0; r < expected.length; r++) {
                            String at = type + (optional ? " optional" : " required") + ", row " + r;
                            if (expected[r] == Long.MIN_VALUE) {
                                assertTrue(!got.present(r), at + " is null");
                                continue;
                            }
                            assertTrue(got.present(r), at + " is present");
                            long value = switch (type) {
                                case INT64 -> got.segment.get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r);
                                case INT32 -> got.segment.get(ValueLayout.JAVA_INT_UNALIGNED, 4L * r);
                                default -> (long) got.segment.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, 8L * r);
                            };
                            assertEquals(expected[r], value, at);
                        }
                    }
                }
            }
        }
    }

    @Test
    void aDamagedPageIsAnErrorAndTheValuesBeforeItStay() throws Exception {
        Long[] a = new Long[100];
        Long[] b = new Long[100];
        for (int i = 0; i < 100; i++) {
            a[i] = (long) i;
            b[i] = (long) (100 + i);
        }
        byte[] chunk = chunk(List.of(new Page(a, false), new Page(b, false)), PhysicalType.INT64, true);
        int second = chunk(List.of(new Page(a, false)), PhysicalType.INT64, true).length;
        int magic = second;
        while (!(chunk[magic] == 0x28 && chunk[magic + 1] == (byte) 0xb5 && chunk[magic + 2] == 0x2f)) {
            magic++;
        }
        chunk[magic] ^= 0x7f; // the second page's zstd frame no longer starts with its magic number
        ChunkDecoder.Spec spec = new ChunkDecoder.Spec(PhysicalType.INT64, 0, 1, CompressionCodec.ZSTD);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment memory = arena.allocate(ChunkDecoder.SLACK + 8L * 200 + 64);
            IOException e = assertThrows(IOException.class, () -> new ChunkDecoder().decode(chunk, 0, chunk.length, spec, 200,
                    SegmentAllocator.slicingAllocator(memory)));
            assertTrue(e.getMessage().contains("zstd") || e.getMessage().contains("page"), e.getMessage());
            for (int r = 0; r < 100; r++) { // the first page's values, its last ones included
                assertEquals(r, memory.get(ValueLayout.JAVA_LONG_UNALIGNED, ChunkDecoder.SLACK + 8L * r), "row " + r);
            }
        }
    }

    /** A page whose header carries a CRC-32 (parquet-java writes them) is checked against it: a wrong one is refused. */
    @Test
    void aPageIsCheckedAgainstTheCrcItsHeaderCarries() throws Exception {
        Long[] a = new Long[50];
        for (int i = 0; i < 50; i++) {
            a[i] = (long) (7 * i);
        }
        ChunkDecoder.Spec spec = new ChunkDecoder.Spec(PhysicalType.INT64, 0, 1, CompressionCodec.ZSTD);
        for (int flip : new int[] {0, 1}) {
            byte[] chunk = chunk(List.of(new Page(a, false)), PhysicalType.INT64, true, flip);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment memory = arena.allocate(ChunkDecoder.SLACK + 8L * 50 + 64);
                if (flip == 0) {
                    new ChunkDecoder().decode(chunk, 0, chunk.length, spec, 50, SegmentAllocator.slicingAllocator(memory));
                    assertEquals(7 * 49, memory.get(ValueLayout.JAVA_LONG_UNALIGNED, ChunkDecoder.SLACK + 8L * 49));
                } else {
                    IOException e = assertThrows(IOException.class, () -> new ChunkDecoder().decode(chunk, 0, chunk.length, spec, 50,
                            SegmentAllocator.slicingAllocator(memory)));
                    assertTrue(e.getMessage().contains("CRC-32"), e.getMessage());
                }
            }
        }
    }

    private static boolean hasNull(Page p) {
        for (Long x : p.values) {
            if (x == null) {
                return true;
            }
        }
        return false;
    }

    /** The pages as a column chunk: each a Thrift page header, then its zstd-compressed levels and plain values. */
    private static byte[] chunk(List<Page> pages, PhysicalType type, boolean optional) throws IOException {
        return chunk(pages, type, optional, -1);
    }

    /** With {@code crcFlip >= 0}, each header carries the page's CRC-32 xor {@code crcFlip} (0: the right one). */
    private static byte[] chunk(List<Page> pages, PhysicalType type, boolean optional, int crcFlip) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Page page : pages) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            if (optional) {
                byte[] levels = levels(page);
                body.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(levels.length).array());
                body.write(levels);
            }
            for (Long x : page.values) {
                if (x == null) {
                    continue;
                }
                ByteBuffer bb = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
                switch (type) {
                    case INT64 -> bb.putLong(x);
                    case INT32 -> bb.putInt((int) (long) x);
                    default -> bb.putDouble(x);
                }
                body.write(bb.array(), 0, type == PhysicalType.INT32 ? 4 : 8);
            }
            byte[] plain = body.toByteArray();
            byte[] compressed = Zstd.compress(plain);
            Integer crc = null;
            if (crcFlip >= 0) {
                java.util.zip.CRC32 c = new java.util.zip.CRC32();
                c.update(compressed);
                crc = (int) c.getValue() ^ crcFlip;
            }
            header(out, plain.length, compressed.length, page.values.length, crc);
            out.write(compressed);
        }
        return out.toByteArray();
    }

    /** RLE runs of definition levels (bit width 1): one per run of equal levels, the first split in two if asked. */
    private static byte[] levels(Page page) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Long[] v = page.values;
        int i = 0;
        while (i < v.length) {
            int j = i;
            while (j < v.length && (v[j] == null) == (v[i] == null)) {
                j++;
            }
            int level = v[i] == null ? 0 : 1;
            if (page.longLevels && i == 0 && j - i > 1) {
                run(out, 1, level);
                i++;
            }
            run(out, j - i, level);
            i = j;
        }
        return out.toByteArray();
    }

    private static void run(ByteArrayOutputStream out, int count, int level) {
        varint(out, (long) count << 1);
        out.write(level);
    }

    /** A v1 data page's header in Thrift's compact protocol, with a CRC-32 when {@code crc} is not null. */
    private static void header(ByteArrayOutputStream out, int plain, int compressed, int values, Integer crc) {
        i32(out, 1, 0, DATA_PAGE);
        i32(out, 2, 1, plain);
        i32(out, 3, 2, compressed);
        if (crc != null) {
            i32(out, 4, 3, crc);
        }
        out.write((5 - (crc != null ? 4 : 3)) << 4 | 12); // field 5, a struct
        i32(out, 1, 0, values);
        i32(out, 2, 1, PLAIN);
        i32(out, 3, 2, RLE);
        i32(out, 4, 3, RLE);
        out.write(0); // the data page header's end
        out.write(0); // the page header's end
    }

    private static void i32(ByteArrayOutputStream out, int id, int previous, int value) {
        out.write((id - previous) << 4 | 5);
        varint(out, (value << 1) ^ (value >> 31));
    }

    private static void varint(ByteArrayOutputStream out, long v) {
        while ((v & ~0x7fL) != 0) {
            out.write((int) (v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out.write((int) v);
    }
}
