package dev.stoker.formats.riegeli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes bench/formats.sh's ArrayRecord file: the rows of gen.py (id int64, label int32, vec
 * float32[64], 268 bytes each) as raw records, laid out as the C++ ArrayRecordWriter lays them out
 * with its defaults but compression (group_size 1, uncompressed simple chunks): the signature chunk,
 * a chunk per record, the footer chunk, a padding chunk to the block's end, and the postscript
 * chunk in the last 64 KiB block, padded to the end; block headers every 64 KiB, every hash
 * HighwayHash-64 with Riegeli's key (Stoker's own {@link HighwayHash}, package-private: so this
 * class is in its package). Not part of the Stoker build; bench/formats.sh compiles and runs it
 * against the built jar:
 *
 * <pre>
 * javac -d CLASSES -cp stoker-cli/target/stoker-cli.jar stoker-formats/src/test/interop/MakeArrayRecord.java
 * java -cp stoker-cli/target/stoker-cli.jar:CLASSES dev.stoker.formats.riegeli.MakeArrayRecord DATA_DIR
 * </pre>
 */
public final class MakeArrayRecord {
    static final long BLOCK = 1 << 16;
    static final long USABLE = BLOCK - 24;
    static final long[] KEY = {0x2f696c6567656952L, 0x0a7364726f636572L, 0x2f696c6567656952L, 0x0a7364726f636572L};

    private final OutputStream out;
    private long pos;

    MakeArrayRecord(OutputStream out) {
        this.out = out;
    }

    static long addWithOverhead(long p, long size) {
        return p + size + (size + (p + USABLE - 1) % BLOCK) / USABLE * 24;
    }

    static long roundUp(long p) {
        long remaining = BLOCK - 1 - (p + BLOCK - 1) % BLOCK;
        return p + Math.max(0, remaining - (USABLE - 1));
    }

    /** Writes a chunk at the current position; returns where it began. */
    long chunk(char type, long records, long decoded, byte[] data) throws IOException {
        long begin = pos;
        long end = Math.max(addWithOverhead(begin, 40 + data.length), roundUp(begin + records));
        ByteBuffer h = ByteBuffer.allocate(40).order(ByteOrder.LITTLE_ENDIAN);
        h.putLong(0).putLong(data.length).putLong(HighwayHash.hash64(KEY, data, 0, data.length))
                .putLong((records << 8) | type).putLong(decoded);
        byte[] header = h.array();
        h.putLong(0, HighwayHash.hash64(KEY, header, 8, 32));
        emit(header, begin, end);
        emit(data, begin, end);
        while (pos < end) {
            emit(new byte[(int) Math.min(4096, end - pos)], begin, end);
        }
        return begin;
    }

    /** Content bytes, a block header written first wherever a block begins. */
    private void emit(byte[] b, long begin, long end) throws IOException {
        int i = 0;
        while (i < b.length) {
            if (pos % BLOCK == 0) {
                ByteBuffer bh = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
                bh.putLong(0).putLong(pos - begin).putLong(end - pos);
                byte[] header = bh.array();
                bh.putLong(0, HighwayHash.hash64(KEY, header, 8, 16));
                out.write(header);
                pos += 24;
            }
            int n = (int) Math.min(b.length - i, BLOCK - pos % BLOCK);
            out.write(b, i, n);
            i += n;
            pos += n;
        }
    }

    /** A padding chunk from here to the next block boundary. */
    void padToBlock() throws IOException {
        if (pos % BLOCK == 0) {
            return;
        }
        long target = (pos / BLOCK + 1) * BLOCK;
        long data = target - pos - 40;
        if (data < 0) {
            target += BLOCK;
            data = target - pos - 40 - 24;
        }
        chunk('p', 0, 0, new byte[(int) data]);
    }

    static byte[] simple(byte[]... records) {
        ByteArrayOutputStream sizes = new ByteArrayOutputStream();
        ByteArrayOutputStream values = new ByteArrayOutputStream();
        for (byte[] r : records) {
            varint(sizes, r.length);
            values.writeBytes(r);
        }
        ByteArrayOutputStream d = new ByteArrayOutputStream();
        d.write(0); // uncompressed
        varint(d, sizes.size());
        d.writeBytes(sizes.toByteArray());
        d.writeBytes(values.toByteArray());
        return d.toByteArray();
    }

    static void varint(ByteArrayOutputStream o, long v) {
        while ((v & ~0x7FL) != 0) {
            o.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        o.write((int) v);
    }

    static byte[] message(long... fieldsAndValues) { // varint fields: number, value, number, value...
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        for (int i = 0; i < fieldsAndValues.length; i += 2) {
            varint(o, fieldsAndValues[i] << 3);
            varint(o, fieldsAndValues[i + 1]);
        }
        return o.toByteArray();
    }

    static byte[] nested(int field, byte[] inner) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        varint(o, ((long) field << 3) | 2);
        varint(o, inner.length);
        o.writeBytes(inner);
        return o.toByteArray();
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        ByteBuffer vec;
        try (FileChannel ch = FileChannel.open(dir.resolve("rows.bin"))) {
            vec = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size()).order(ByteOrder.LITTLE_ENDIAN);
        }
        int rows = vec.capacity() / 256;
        Path file = dir.resolve("rows.array_record");
        try (OutputStream os = new java.io.BufferedOutputStream(Files.newOutputStream(file, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING), 1 << 20)) {
            MakeArrayRecord w = new MakeArrayRecord(os);
            w.chunk('s', 0, 0, new byte[0]);
            long[] offsets = new long[rows];
            for (int i = 0; i < rows; i++) {
                ByteBuffer r = ByteBuffer.allocate(268).order(ByteOrder.LITTLE_ENDIAN);
                r.putLong(i).putInt(i % 1000);
                r.put(vec.slice(i * 256, 256));
                offsets[i] = w.chunk('r', 1, 268, simple(r.array()));
            }
            byte[][] footer = new byte[rows + 1][];
            footer[0] = nested(1, concat(message(1, 1, 2, rows, 3, rows),
                    nested(4, "group_size:1,transpose:false,pad_to_block_boundary:false,uncompressed".getBytes())));
            long decoded = footer[0].length;
            for (int i = 0; i < rows; i++) {
                footer[i + 1] = message(1, offsets[i], 2, 268, 3, 1);
                decoded += footer[i + 1].length;
            }
            long footerAt = w.chunk('r', rows + 1, decoded, simple(footer));
            w.padToBlock();
            byte[] ps = concat(message(1, footerAt), message(2, 0x71930e704fdae05eL));
            long begin = w.chunk('r', 3, 3L * ps.length, simple(ps, ps, ps));
            long end = begin + BLOCK;
            long left = end - w.pos - 40;
            w.chunk('p', 0, 0, new byte[(int) left]);
        }
        System.out.println(rows + " records: " + file);
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
