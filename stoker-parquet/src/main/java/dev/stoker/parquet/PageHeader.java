package dev.stoker.parquet;

import java.io.IOException;

/**
 * A page header, read from its Thrift compact encoding: the fields a flat column's pages
 * need, every other field skipped.
 */
final class PageHeader {
    int type;
    int uncompressedSize;
    int compressedSize;
    int numValues;
    int encoding;
    int definitionEncoding;
    int definitionLength;
    int repetitionLength;
    boolean compressed;
    int crc;
    boolean hasCrc;

    private byte[] b;
    private int p;
    private int end;

    /** Reads the header at {@code p}; returns where the page's body starts. */
    int read(byte[] b, int p, int end) throws IOException {
        this.b = b;
        this.p = p;
        this.end = end;
        type = -1;
        uncompressedSize = compressedSize = numValues = -1;
        encoding = definitionEncoding = ChunkDecoder.PLAIN;
        definitionLength = repetitionLength = 0;
        compressed = true;
        hasCrc = false;
        struct((id, t) -> {
            switch (id) {
                case 1 -> type = i32(t);
                case 2 -> uncompressedSize = i32(t);
                case 3 -> compressedSize = i32(t);
                case 4 -> {
                    crc = i32(t);
                    hasCrc = true;
                }
                case 5 -> struct(t, (i, u) -> {
                    switch (i) { // DataPageHeader
                        case 1 -> numValues = i32(u);
                        case 2 -> encoding = i32(u);
                        case 3 -> definitionEncoding = i32(u);
                        default -> skip(u);
                    }
                });
                case 7 -> struct(t, (i, u) -> {
                    switch (i) { // DictionaryPageHeader
                        case 1 -> numValues = i32(u);
                        case 2 -> encoding = i32(u);
                        default -> skip(u);
                    }
                });
                case 8 -> struct(t, (i, u) -> {
                    switch (i) { // DataPageHeaderV2
                        case 1 -> numValues = i32(u);
                        case 4 -> encoding = i32(u);
                        case 5 -> definitionLength = i32(u);
                        case 6 -> repetitionLength = i32(u);
                        case 7 -> compressed = u == 1;
                        default -> skip(u);
                    }
                });
                default -> skip(t);
            }
        });
        Rle.check(type >= 0 && compressedSize >= 0 && uncompressedSize >= 0, "a page header without its type or sizes");
        return this.p;
    }

    /** Reads one field of a struct: its id and its Thrift type. */
    private interface FieldReader {
        void read(int id, int type) throws IOException;
    }

    /** A nested struct's fields (a field of Thrift type {@code t}, which must be a struct). */
    private void struct(int t, FieldReader fields) throws IOException {
        expect(t, 12);
        struct(fields);
    }

    /** The fields of a struct up to its stop byte, each to {@code fields}. */
    private void struct(FieldReader fields) throws IOException {
        int id = 0;
        for (int f; (f = u8()) != 0; ) {
            id = fieldId(f, id);
            fields.read(id, f & 0x0F);
        }
    }

    private int fieldId(int f, int last) throws IOException {
        int delta = f >>> 4;
        return delta != 0 ? last + delta : (short) zigzag(varint());
    }

    private int i32(int t) throws IOException {
        expect(t, 5);
        return (int) zigzag(varint());
    }

    private void expect(int t, int want) throws IOException {
        Rle.check(t == want, "a page header field of Thrift type " + t + " where " + want + " was expected");
    }

    private void skip(int t) throws IOException {
        switch (t) {
            case 1, 2 -> {
                // a boolean: its value is the type
            }
            case 3 -> p++;
            case 4, 5, 6 -> varint();
            case 7 -> p += 8;
            case 8 -> p += Math.toIntExact(varint());
            case 9, 10 -> {
                int h = u8();
                long n = h >>> 4 == 15 ? varint() : h >>> 4;
                for (long i = 0; i < n; i++) {
                    skipElement(h & 0x0F);
                }
            }
            case 11 -> {
                long n = varint();
                int kv = n > 0 ? u8() : 0;
                for (long i = 0; i < n; i++) {
                    skipElement(kv >>> 4);
                    skipElement(kv & 0x0F);
                }
            }
            case 12 -> struct((id, type) -> skip(type));
            default -> throw new IOException("a page header field of unknown Thrift type " + t);
        }
        Rle.check(p <= end, "a page header runs past the chunk's end");
    }

    private void skipElement(int t) throws IOException {
        if (t == 1 || t == 2) {
            p++; // a boolean in a container is a byte
        } else {
            skip(t);
        }
    }

    private int u8() throws IOException {
        Rle.check(p < end, "a page header runs past the chunk's end");
        return b[p++] & 0xFF;
    }

    private long varint() throws IOException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            int x = u8();
            v |= (long) (x & 0x7F) << shift;
            if ((x & 0x80) == 0) {
                return v;
            }
        }
        throw new IOException("a varint of more than ten bytes in a page header");
    }

    private static long zigzag(long v) {
        return (v >>> 1) ^ -(v & 1);
    }
}
