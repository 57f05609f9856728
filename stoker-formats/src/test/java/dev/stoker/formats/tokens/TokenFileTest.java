package dev.stoker.formats.tokens;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.Fixtures;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Raw token files: read as they are, unless their first bytes show another format. */
class TokenFileTest {
    @TempDir
    Path tmp;

    /** {@code bytes} padded with zeros to an even length, so that only the first bytes can refuse them. */
    private Path file(String name, byte[] bytes) throws IOException {
        return Files.write(tmp.resolve(name), Arrays.copyOf(bytes, bytes.length + bytes.length % 2 + 1024));
    }

    private void assertRefused(Path p, String what) {
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> TokenFile.open(p, DType.UINT16).close());
        assertTrue(e.getMessage().startsWith(p + ": " + what) && e.getMessage().contains("not raw token ids"), e.getMessage());
        assertEquals(0, e.offset());
    }

    @Test
    void aZipArchiveAsTorchSaveWritesIsRefused() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (ZipOutputStream z = new ZipOutputStream(b)) {
            z.putNextEntry(new ZipEntry("archive/data.pkl"));
            z.write(new byte[] {(byte) 0x80, 2, '}', 'q', 0, '.'});
        }
        assertRefused(file("model.pt", b.toByteArray()), "a zip archive");
    }

    @Test
    void aLegacyTorchSaveFileIsRefused() throws IOException {
        byte[] legacy = {(byte) 0x80, 0x02, (byte) 0x8A, 0x0A, 0x6C, (byte) 0xFC, (byte) 0x9C, 0x46, (byte) 0xF9, 0x20, 0x6A,
            (byte) 0xA8, 0x50, 0x19, 0x2E};
        assertRefused(file("old.pt", legacy), "a torch.save file");
    }

    @Test
    void anHtmlErrorPageIsRefused() throws IOException {
        assertRefused(file("page.bin", "\n<!DOCTYPE html><html><body>404 Not Found</body></html>".getBytes(StandardCharsets.UTF_8)),
                "an HTML page");
        assertRefused(file("page2.bin", "<HTML><HEAD><TITLE>403</TITLE>".getBytes(StandardCharsets.UTF_8)), "an HTML page");
    }

    @Test
    void anXmlErrorDocumentIsRefused() throws IOException {
        assertRefused(file("s3.bin", "<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code></Error>".getBytes(StandardCharsets.UTF_8)),
                "an XML document");
    }

    @Test
    void jsonOrOtherTextIsRefused() throws IOException {
        String json = "{\"error\": \"not found\", \"message\": \"the object you asked for does not exist here\"}\n";
        assertRefused(Files.writeString(tmp.resolve("err.bin"), json + " "), "JSON text");
        assertRefused(Files.writeString(tmp.resolve("readme.bin"), "These are the tokens of the training set, made with "
                + "the GPT-2 tokenizer; see the README.\n"), "text");
    }

    @Test
    void aMegatronIndexIsRefused() throws IOException {
        assertRefused(Fixtures.dir().resolve("megatron/docs.idx"), "a Megatron index");
    }

    @Test
    void aNumpyArrayIsRefusedAsRawTokens() throws IOException {
        assertRefused(Fixtures.dir().resolve("npy/tokens_u2.npy"), "a numpy .npy array");
    }

    @Test
    void compressedFilesAreRefusedNamingTheCompression() throws IOException {
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (OutputStream out = new GZIPOutputStream(gz)) {
            out.write(new byte[4096]);
        }
        assertRefused(file("t.bin.gz", gz.toByteArray()), "gzip-compressed");
        ByteArrayOutputStream zst = new ByteArrayOutputStream();
        try (OutputStream out = new com.github.luben.zstd.ZstdOutputStream(zst)) {
            out.write(new byte[4096]);
        }
        assertRefused(file("t.bin.zst", zst.toByteArray()), "zstd-compressed");
        ByteArrayOutputStream lz4 = new ByteArrayOutputStream();
        try (OutputStream out = new net.jpountz.lz4.LZ4FrameOutputStream(lz4)) {
            out.write(new byte[4096]);
        }
        assertRefused(file("t.bin.lz4", lz4.toByteArray()), "lz4-compressed");
        // the first bytes of what bzip2 and xz write (bzip2 -9, xz -6) for any input
        assertRefused(file("t.bin.bz2", new byte[] {'B', 'Z', 'h', '9', 0x31, 0x41, 0x59, 0x26, 0x53, 0x59}), "bzip2-compressed");
        assertRefused(file("t.bin.xz", new byte[] {(byte) 0xFD, '7', 'z', 'X', 'Z', 0, 0, 4}), "xz-compressed");
    }

    @Test
    void tokenIdsThatBeginLikeAnotherFormatOnlyByChanceAreRead() throws IOException {
        // 0x8B1F (gzip's first two bytes) followed by a token that is no deflate method; "PK" alone; '<' and '{' tokens
        ByteBuffer b = ByteBuffer.allocate(2 * 4000).order(ByteOrder.LITTLE_ENDIAN);
        b.putShort((short) 0x8B1F).putShort((short) 0x0101).putShort((short) 0x4B50).putShort((short) 0x0000)
                .putShort((short) '<').putShort((short) '{');
        SplittableRandom r = new SplittableRandom(7);
        while (b.hasRemaining()) {
            b.putShort((short) r.nextInt(50_257));
        }
        Path p = Files.write(tmp.resolve("train.bin"), b.array());
        try (TokenFile t = TokenFile.open(p, DType.UINT16)) {
            assertEquals(4000, t.length());
            assertEquals(0x8B1F, t.token(0));
        }
    }

    @Test
    void bytesOfTextAreTokensOfOneByte() throws IOException {
        // byte-level tokens are text's own bytes: with uint8 tokens, text is no other format
        Path p = Files.writeString(tmp.resolve("bytes.bin"), "the tokens of a byte-level model are the bytes of its text, "
                + "and nothing else\n");
        try (TokenFile t = TokenFile.open(p, DType.UINT8)) {
            assertEquals('t', t.token(0));
        }
    }

    @Test
    void aFileOpenedAsItIsIsReadAsRawTokensWhateverItsFirstBytes() throws IOException {
        Path p = file("page.bin", "<!DOCTYPE html>".getBytes(StandardCharsets.UTF_8));
        try (TokenFile t = TokenFile.open(p, DType.UINT16, true)) {
            assertEquals(('!' << 8) | '<', t.token(0));
        }
    }
}
