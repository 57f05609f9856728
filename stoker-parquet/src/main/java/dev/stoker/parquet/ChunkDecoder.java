package dev.stoker.parquet;

import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import dev.hardwood.metadata.CompressionCodec;
import dev.hardwood.metadata.PhysicalType;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;
import net.jpountz.lz4.LZ4Factory;
import org.xerial.snappy.Snappy;

/**
 * Decodes the column chunk of one flat column in one row group, page by page, straight from the
 * page bytes into {@link Values}: a plain page of fixed-width values is one decompression and
 * one copy (zstd, all present: one decompression and no copy, see {@link #inPlace}), a
 * dictionary page's indices are unpacked in bulk and gathered. Handles data pages v1
 * and v2, the codecs uncompressed, Snappy, gzip, zstd and LZ4 (raw), and the encodings plain,
 * dictionary, RLE (booleans) and byte stream split; {@link Unsupported} for anything else, which
 * the caller decodes another way (the rarer delta encodings, old codecs). Not thread-safe: one
 * decoder per thread at a time, its buffers reused from chunk to chunk.
 */
final class ChunkDecoder {
    /** A page this decoder does not handle: an encoding or a codec it does not know. */
    static final class Unsupported extends Exception {
        Unsupported(String what) {
            super(what, null, false, false);
        }
    }

    /** How a column's values are stored in the file and kept in {@link Values}. */
    record Spec(PhysicalType type, int typeLength, int maxDefinitionLevel, CompressionCodec codec) {
        /** Bytes per kept value; 0 for variable-length values. */
        int width() {
            return ChunkDecoder.width(type);
        }

        /** Bytes per value in the file: {@link #width()}, or those of a fixed-length byte array; 0 for variable. */
        int fileWidth() {
            return switch (type) {
                case FIXED_LEN_BYTE_ARRAY -> typeLength;
                case INT96 -> 12;
                default -> width();
            };
        }
    }

    /** Bytes per kept value of a physical type; 0 for variable-length values (kept on the heap). */
    static int width(PhysicalType type) {
        return switch (type) {
            case BOOLEAN -> 1;
            case INT32, FLOAT -> 4;
            case INT64, DOUBLE -> 8;
            case BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY, INT96 -> 0;
        };
    }

    // page types and encodings as parquet.thrift numbers them
    private static final int DATA_PAGE = 0;
    private static final int DICTIONARY_PAGE = 2;
    private static final int DATA_PAGE_V2 = 3;
    static final int PLAIN = 0;
    private static final int PLAIN_DICTIONARY = 2;
    private static final int RLE = 3;
    private static final int RLE_DICTIONARY = 8;
    private static final int BYTE_STREAM_SPLIT = 9;
    /** Bytes kept before each fixed-width column's values, where a page decompressed in place puts its levels. */
    static final int SLACK = 64;

    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private byte[] chunk = new byte[0];
    private byte[] page = new byte[0];
    private byte[] dense = new byte[0];
    private int[] levels = new int[0];
    private int[] indices = new int[0];
    private byte[] validScratch = new byte[0];
    private ZstdDecompressCtx zstd;
    private final java.util.zip.CRC32 crc = new java.util.zip.CRC32();

    // the chunk being decoded
    private Spec spec;
    private int rows;
    private int row;
    private MemorySegment fixed;
    /** {@link #SLACK} bytes, then {@link #fixed}; and as a buffer for zstd, made when first needed. */
    private MemorySegment region;
    private java.nio.ByteBuffer regionBuffer;
    /** The bytes a v1 page's definition levels took the last time (the next page's most likely). */
    private int levelsGuess = 8;
    private final byte[] saved = new byte[SLACK];
    private byte[] levelBytes = new byte[0];
    private byte[] out;
    private int[] offsets;
    private int size;
    private byte[] valid;
    private boolean nulls;
    private Values dictionary;

    /** A buffer of at least {@code n} bytes for the chunks to decode, reused from call to call. */
    byte[] buffer(int n) {
        if (chunk.length < n) {
            chunk = new byte[Math.max(n, chunk.length + (chunk.length >> 1))];
        }
        return chunk;
    }

    /**
     * Decodes the chunk in {@code buf[from, from + length)} into {@code rows} rows; fixed-width
     * values go into memory from {@code memory}.
     */
    Values decode(byte[] buf, int from, int length, Spec spec, int rows, SegmentAllocator memory) throws IOException, Unsupported {
        this.spec = spec;
        this.rows = rows;
        this.row = 0;
        int w = spec.width();
        this.region = w > 0 ? memory.allocate(SLACK + (long) rows * w, 8) : null;
        this.regionBuffer = null;
        this.fixed = w > 0 ? region.asSlice(SLACK, (long) rows * w) : null;
        this.out = w > 0 ? null : new byte[Math.max(16, length)];
        this.offsets = w > 0 ? null : new int[rows + 1];
        this.size = 0;
        if (spec.maxDefinitionLevel() > 0 && validScratch.length < rows) {
            validScratch = new byte[rows];
        }
        this.valid = spec.maxDefinitionLevel() > 0 ? validScratch : null;
        this.nulls = false;
        this.dictionary = null;
        PageHeader h = new PageHeader();
        int p = from;
        int end = from + length;
        while (row < rows) {
            if (p >= end) {
                throw new IOException("the chunk ends after " + row + " of " + rows + " rows");
            }
            p = h.read(buf, p, end);
            int body = p;
            p += h.compressedSize;
            if (h.compressedSize < 0 || p > end) {
                throw new IOException("a page of " + h.compressedSize + " bytes runs past the chunk's end");
            }
            if (h.hasCrc) { // the page's bytes as stored, levels and values, against the CRC-32 its writer computed
                crc.reset();
                crc.update(buf, body, h.compressedSize);
                Rle.check((int) crc.getValue() == h.crc, String.format("a page's bytes do not match its CRC-32 (stored %08x, "
                        + "computed %08x): the file is damaged", h.crc, (int) crc.getValue()));
            }
            switch (h.type) {
                case DICTIONARY_PAGE -> dictionary(buf, body, h);
                case DATA_PAGE -> dataPage(buf, body, h);
                case DATA_PAGE_V2 -> dataPageV2(buf, body, h);
                default -> {
                    // an index page: nothing of the values
                }
            }
        }
        byte[] validity = nulls ? Arrays.copyOf(valid, rows) : null;
        Values v = w > 0 ? new Values(w, rows, fixed, validity) : new Values(rows, Arrays.copyOf(out, size), offsets, validity);
        this.out = null;
        this.fixed = null;
        this.region = null;
        this.regionBuffer = null;
        this.dictionary = null;
        return v;
    }

    /**
     * Only decompresses the pages of the chunk in {@code buf[from, from + length)}, decoding
     * nothing: the work no decoder of the chunk can avoid. Returns the bytes decompressed.
     */
    long decompressOnly(byte[] buf, int from, int length, Spec spec) throws IOException, Unsupported {
        this.spec = spec;
        PageHeader h = new PageHeader();
        long total = 0;
        for (int p = from; p < from + length; ) {
            p = h.read(buf, p, from + length);
            int levels = h.type == DATA_PAGE_V2 ? h.repetitionLength + h.definitionLength : 0;
            if (h.type != DATA_PAGE_V2 || h.compressed) {
                uncompressed(buf, p + levels, h.compressedSize - levels, h.uncompressedSize - levels);
            }
            total += h.uncompressedSize;
            p += h.compressedSize;
        }
        return total;
    }

    // ---- pages -----------------------------------------------------------------------------

    private void dictionary(byte[] buf, int body, PageHeader h) throws IOException, Unsupported {
        if (h.encoding != PLAIN && h.encoding != PLAIN_DICTIONARY) {
            throw new Unsupported("a dictionary page in encoding " + h.encoding);
        }
        byte[] b = uncompressed(buf, body, h.compressedSize, h.uncompressedSize);
        int at = b == buf ? body : 0;
        int n = h.numValues;
        int w = spec.width();
        if (w > 0) {
            byte[] values = new byte[Math.multiplyExact(n, w)];
            plainFixed(b, at, at + h.uncompressedSize, n, values, 0);
            dictionary = new Values(n, values, null, null); // fixed-width: no offsets
        } else {
            int[] off = new int[n + 1];
            byte[] data = new byte[h.uncompressedSize];
            int p = at;
            int end = at + h.uncompressedSize;
            int fixed = spec.fileWidth();
            for (int i = 0; i < n; i++) {
                int len = fixed > 0 ? fixed : Rle.le32(b, p, end);
                p += fixed > 0 ? 0 : 4;
                Rle.check(p + len <= end, "a dictionary value runs past its page");
                System.arraycopy(b, p, data, off[i], len);
                off[i + 1] = off[i] + len;
                p += len;
            }
            dictionary = new Values(n, data, off, null);
        }
    }

    private void dataPage(byte[] buf, int body, PageHeader h) throws IOException, Unsupported {
        if (inPlace(buf, body, h)) {
            return;
        }
        byte[] b = uncompressed(buf, body, h.compressedSize, h.uncompressedSize);
        decodePage(b, b == buf ? body : 0, h);
    }

    /**
     * A v1 page of plain fixed-width values, zstd-compressed, decompressed straight into the
     * group's memory: the page's definition levels go just before its rows' place (the bytes
     * there are kept aside and put back after; before the first row, {@link #SLACK} bytes are
     * left for it), so that its values land where they belong and no copy follows. That needs the
     * levels' size before decompressing: the last page's is taken, right for every page but the
     * first of a file whose pages have no nulls. When it is wrong, or the page has nulls, the page
     * is copied out of the group's memory and decoded the usual way. Returns false, having done
     * nothing, for a page of another kind or one that would not fit.
     */
    private boolean inPlace(byte[] buf, int body, PageHeader h) throws IOException, Unsupported {
        int w = spec.width();
        int n = h.numValues;
        int plain = h.uncompressedSize;
        boolean levels = spec.maxDefinitionLevel() > 0;
        int g = levels ? levelsGuess : 0;
        long at = SLACK + (long) row * w - g;
        if (w == 0 || spec.type() == PhysicalType.BOOLEAN || h.encoding != PLAIN || spec.codec() != CompressionCodec.ZSTD
                || (levels && h.definitionEncoding != RLE) || n < 0 || row + n > rows || g > SLACK || plain < g
                || at + plain > region.byteSize() || region.byteSize() > Integer.MAX_VALUE) {
            return false;
        }
        if (regionBuffer == null) {
            regionBuffer = region.asByteBuffer();
        }
        MemorySegment.copy(region, ValueLayout.JAVA_BYTE, at, saved, 0, g);
        if (zstd == null) {
            zstd = new ZstdDecompressCtx();
        }
        long got;
        try {
            got = zstd.decompressByteArrayToDirectByteBuffer(regionBuffer, (int) at, plain, buf, body, h.compressedSize);
        } catch (ZstdException e) {
            MemorySegment.copy(saved, 0, region, ValueLayout.JAVA_BYTE, at, g);
            throw new IOException("zstd: " + e.getMessage());
        }
        int taken = 0;
        int present = n;
        if (got == plain && levels) {
            int len = region.get(LE_INT, at);
            if (len >= 0 && len <= plain - 4) {
                taken = 4 + len;
                if (taken == g) { // else the values are not where they belong: decoded below from a copy
                    if (levelBytes.length < len) {
                        levelBytes = new byte[Math.max(len, 2 * levelBytes.length)];
                    }
                    MemorySegment.copy(region, ValueLayout.JAVA_BYTE, at + 4, levelBytes, 0, len);
                    present = levels(levelBytes, 0, len, n);
                }
                levelsGuess = taken;
            }
        }
        if (got == plain && taken == g && present == n && plain - g >= (long) n * w) {
            MemorySegment.copy(saved, 0, region, ValueLayout.JAVA_BYTE, at, g);
            if (valid != null) {
                Arrays.fill(valid, row, row + n, (byte) 1);
            }
            row += n;
            return true;
        }
        // decoded the usual way, from a copy of the page (a short one fails there, with its reason)
        int copied = (int) Math.max(0, Math.min(got, plain));
        if (page.length < plain) {
            page = new byte[Math.max(plain, page.length + (page.length >> 1))];
        }
        MemorySegment.copy(region, ValueLayout.JAVA_BYTE, at, page, 0, copied);
        MemorySegment.copy(saved, 0, region, ValueLayout.JAVA_BYTE, at, g);
        Rle.check(got == plain, "a page decompressed to " + got + " bytes, its header says " + plain);
        decodePage(page, 0, h);
        return true;
    }

    /** A v1 page's levels and values, uncompressed in {@code b} from {@code p}. */
    private void decodePage(byte[] b, int p, PageHeader h) throws IOException, Unsupported {
        int end = p + h.uncompressedSize;
        int n = h.numValues;
        int present = n;
        if (spec.maxDefinitionLevel() > 0) {
            if (h.definitionEncoding != RLE) {
                throw new Unsupported("definition levels in encoding " + h.definitionEncoding);
            }
            int len = Rle.le32(b, p, end);
            p += 4;
            Rle.check(p + len <= end, "definition levels run past their page");
            present = levels(b, p, p + len, n);
            p += len;
        }
        values(b, p, end, h.encoding, n, present);
    }

    private void dataPageV2(byte[] buf, int body, PageHeader h) throws IOException, Unsupported {
        int levelsEnd = body + h.repetitionLength + h.definitionLength;
        Rle.check(h.repetitionLength == 0, "repetition levels in a flat column");
        Rle.check(h.definitionLength >= 0 && levelsEnd <= body + h.compressedSize, "levels run past their page");
        int n = h.numValues;
        int present = n;
        if (spec.maxDefinitionLevel() > 0) {
            present = levels(buf, body, levelsEnd, n);
        }
        int compressed = h.compressedSize - (levelsEnd - body);
        int plain = h.uncompressedSize - (levelsEnd - body);
        byte[] b = h.compressed ? uncompressed(buf, levelsEnd, compressed, plain) : buf;
        int p = b == buf ? levelsEnd : 0;
        values(b, p, p + plain, h.encoding, n, present);
    }

    /** Decodes the definition levels of {@code n} rows; returns how many are present. */
    private int levels(byte[] b, int p, int end, int n) throws IOException {
        if (levels.length < n) {
            levels = new int[n];
        }
        Rle.hybrid(b, p, end, Rle.bitWidth(spec.maxDefinitionLevel()), levels, n);
        int max = spec.maxDefinitionLevel();
        int present = 0;
        for (int i = 0; i < n; i++) {
            present += levels[i] == max ? 1 : 0;
        }
        return present;
    }

    /** The page's {@code n} rows, {@code present} of them with a value in {@code b[p, end)}. */
    private void values(byte[] b, int p, int end, int encoding, int n, int present) throws IOException, Unsupported {
        Rle.check(row + n <= rows, "pages hold more than the row group's " + rows + " rows");
        int w = spec.width();
        if (w == 0) {
            variable(b, p, end, encoding, n, present);
            return;
        }
        // the present values one after the other: in the page itself, or decoded into `dense`
        byte[] src;
        int at;
        int bytes = present * w;
        if (encoding == PLAIN && spec.type() != PhysicalType.BOOLEAN) {
            Rle.check(p + bytes <= end, present + " values run past their page");
            src = b;
            at = p;
        } else {
            if (dense.length < bytes) {
                dense = new byte[bytes];
            }
            switch (encoding) {
                case PLAIN -> plainFixed(b, p, end, present, dense, 0);
                case RLE -> {
                    Rle.check(spec.type() == PhysicalType.BOOLEAN, "RLE values in a non-boolean column");
                    int len = Rle.le32(b, p, end);
                    toBytes(b, p + 4, Math.min(end, p + 4 + len), 1, present);
                }
                case PLAIN_DICTIONARY, RLE_DICTIONARY -> gatherFixed(b, p, end, present, w);
                case BYTE_STREAM_SPLIT -> {
                    Rle.check(p + bytes <= end, present + " values run past their page");
                    for (int i = 0; i < present; i++) {
                        for (int k = 0; k < w; k++) {
                            dense[i * w + k] = b[p + k * present + i];
                        }
                    }
                }
                default -> throw new Unsupported("values in encoding " + encoding);
            }
            src = dense;
            at = 0;
        }
        if (present == n) {
            MemorySegment.copy(src, at, fixed, ValueLayout.JAVA_BYTE, (long) row * w, bytes);
            if (valid != null) {
                Arrays.fill(valid, row, row + n, (byte) 1);
            }
        } else {
            int max = spec.maxDefinitionLevel();
            for (int i = 0; i < n; i++) {
                if (levels[i] == max) {
                    MemorySegment.copy(src, at, fixed, ValueLayout.JAVA_BYTE, (long) (row + i) * w, w);
                    at += w;
                    valid[row + i] = 1;
                } else {
                    nulls = true;
                    valid[row + i] = 0;
                    long at8 = (long) (row + i) * w; // the memory is reused: a null's value is written too
                    switch (spec.type()) {
                        case FLOAT -> fixed.set(LE_INT, at8, Float.floatToRawIntBits(Float.NaN));
                        case DOUBLE -> fixed.set(LE_LONG, at8, Double.doubleToRawLongBits(Double.NaN));
                        case INT64 -> fixed.set(LE_LONG, at8, 0L);
                        case INT32 -> fixed.set(LE_INT, at8, 0);
                        default -> fixed.set(ValueLayout.JAVA_BYTE, at8, (byte) 0);
                    }
                }
            }
        }
        row += n;
    }

    private void variable(byte[] b, int p, int end, int encoding, int n, int present) throws IOException, Unsupported {
        boolean dict = encoding == PLAIN_DICTIONARY || encoding == RLE_DICTIONARY;
        if (!dict && encoding != PLAIN) {
            throw new Unsupported("values in encoding " + encoding);
        }
        if (dict) {
            indices(b, p, end, present);
        }
        int max = spec.maxDefinitionLevel();
        int fixed = spec.fileWidth();
        int v = 0;
        for (int i = 0; i < n; i++) {
            int r = row + i;
            if (valid != null && levels[i] != max) {
                nulls = true;
                valid[r] = 0; // the scratch is reused
                offsets[r + 1] = size;
                continue;
            }
            if (dict) {
                int k = indices[v++];
                int[] o = dictionary.offsets;
                append(dictionary.bytes, o[k], o[k + 1] - o[k]);
            } else {
                int len = fixed > 0 ? fixed : Rle.le32(b, p, end);
                p += fixed > 0 ? 0 : 4;
                Rle.check(len >= 0 && p + len <= end, "a value of " + len + " bytes runs past its page");
                append(b, p, len);
                p += len;
            }
            if (valid != null) {
                valid[r] = 1;
            }
            offsets[r + 1] = size;
        }
        row += n;
    }

    private void append(byte[] src, int at, int len) {
        if (size + len > out.length) {
            out = Arrays.copyOf(out, Math.max(size + len, out.length * 2));
        }
        System.arraycopy(src, at, out, size, len);
        size += len;
    }

    // ---- encodings ---------------------------------------------------------------------------

    /** {@code n} plain values of a fixed-width type from {@code b[p, end)} into {@code dst} at {@code at}. */
    private void plainFixed(byte[] b, int p, int end, int n, byte[] dst, int at) throws IOException {
        if (spec.type() == PhysicalType.BOOLEAN) {
            Rle.check(p + (n + 7) / 8 <= end, n + " booleans run past their page");
            for (int i = 0; i < n; i++) {
                dst[at + i] = (byte) ((b[p + (i >>> 3)] >>> (i & 7)) & 1);
            }
            return;
        }
        int bytes = n * spec.width();
        Rle.check(p + bytes <= end, n + " values run past their page");
        System.arraycopy(b, p, dst, at, bytes);
    }

    /** Dictionary indices of {@code n} values, gathered into {@code dense}. */
    private void gatherFixed(byte[] b, int p, int end, int n, int w) throws IOException {
        indices(b, p, end, n);
        byte[] d = dictionary.bytes;
        int[] ix = indices;
        switch (w) {
            case 8 -> {
                for (int i = 0; i < n; i++) {
                    System.arraycopy(d, ix[i] << 3, dense, i << 3, 8);
                }
            }
            case 4 -> {
                for (int i = 0; i < n; i++) {
                    System.arraycopy(d, ix[i] << 2, dense, i << 2, 4);
                }
            }
            default -> {
                for (int i = 0; i < n; i++) {
                    dense[i] = d[ix[i]];
                }
            }
        }
    }

    /** The dictionary indices of {@code n} values (a bit width byte, then the hybrid runs), checked against the dictionary. */
    private void indices(byte[] b, int p, int end, int n) throws IOException {
        Rle.check(dictionary != null, "a dictionary-encoded page without a dictionary page");
        Rle.check(p < end || n == 0, "dictionary indices missing");
        if (indices.length < n) {
            indices = new int[n];
        }
        if (n == 0) {
            return;
        }
        int width = b[p] & 0xFF;
        Rle.check(width <= 32, "a bit width of " + width);
        Rle.hybrid(b, p + 1, end, width, indices, n);
        int size = dictionary.rows;
        for (int i = 0; i < n; i++) {
            if (indices[i] >= size || indices[i] < 0) {
                throw new IOException("dictionary index " + indices[i] + " of a dictionary of " + size);
            }
        }
    }

    /** {@code n} booleans in the hybrid encoding into {@code dense}. */
    private void toBytes(byte[] b, int p, int end, int width, int n) throws IOException {
        if (indices.length < n) {
            indices = new int[n];
        }
        Rle.hybrid(b, p, end, width, indices, n);
        for (int i = 0; i < n; i++) {
            dense[i] = (byte) indices[i];
        }
    }

    // ---- codecs ------------------------------------------------------------------------------

    /** The page's bytes uncompressed: {@code buf} itself if not compressed, else the decoder's page buffer. */
    private byte[] uncompressed(byte[] buf, int at, int compressed, int plain) throws IOException, Unsupported {
        Rle.check(plain >= 0, "a page of " + plain + " bytes");
        if (spec.codec() == CompressionCodec.UNCOMPRESSED) {
            Rle.check(compressed == plain, "an uncompressed page of " + compressed + " bytes says it holds " + plain);
            return buf;
        }
        if (page.length < plain) {
            page = new byte[Math.max(plain, page.length + (page.length >> 1))];
        }
        long n = switch (spec.codec()) {
            case ZSTD -> {
                if (zstd == null) {
                    zstd = new ZstdDecompressCtx();
                }
                try {
                    yield zstd.decompressByteArray(page, 0, plain, buf, at, compressed);
                } catch (ZstdException e) {
                    throw new IOException("zstd: " + e.getMessage());
                }
            }
            case SNAPPY -> Snappy.uncompress(buf, at, compressed, page, 0);
            case LZ4_RAW -> LZ4Factory.fastestInstance().safeDecompressor().decompress(buf, at, compressed, page, 0, plain);
            case GZIP -> {
                try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(buf, at, compressed))) {
                    yield in.readNBytes(page, 0, plain);
                }
            }
            default -> throw new Unsupported("the codec " + spec.codec());
        };
        Rle.check(n == plain, "a page decompressed to " + n + " bytes, its header says " + plain);
        return page;
    }

    // ---- bytes -------------------------------------------------------------------------------
}
