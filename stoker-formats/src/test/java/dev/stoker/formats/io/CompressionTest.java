package dev.stoker.formats.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

class CompressionTest {
    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void eachCompressionIsKnownByWhatItsToolWritesFirst() throws Exception {
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write(ascii("hello"));
        }
        assertEquals(Compression.GZIP, Compression.of(gz.toByteArray()));
        assertEquals(Compression.ZSTD, Compression.of(com.github.luben.zstd.Zstd.compress(ascii("hello"))));
        assertEquals(Compression.BZIP2, Compression.of(ascii("BZh91AY&SY and the rest")), "bzip2 -9's first block");
        assertEquals(Compression.XZ, Compression.of(new byte[] {(byte) 0xFD, '7', 'z', 'X', 'Z', 0, 0, 4}));
    }

    @Test
    void textThatBeginsLikeAMagicNumberIsNoCompression() {
        assertNull(Compression.of(ascii("BZh5 is how the line starts\n")), "bzip2's four letters without a block's magic");
        assertNull(Compression.of(new byte[] {0x1F, (byte) 0x8B, 0x41, 0x42}), "gzip's two bytes without its method");
        assertNull(Compression.of(new byte[] {(byte) 0xFD, '7', 'z', 'X', 'Y', 0}), "not xz's six bytes");
    }
}
