package dev.stoker.formats.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** gzip through ISA-L (where installed) against zlib and the gzip tool: the same bytes, the same errors. */
class GunzipTest {
    @TempDir
    Path tmp;

    static byte[] gzip(byte[] data, int from, int to) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(out)) {
            z.write(data, from, to - from);
        }
        return out.toByteArray();
    }

    /** Text-like bytes (compressible) or random ones (stored blocks), {@code n} of them. */
    static byte[] data(SplittableRandom r, int n) {
        byte[] d = new byte[n];
        if (r.nextBoolean()) {
            r.nextBytes(d);
        } else {
            for (int i = 0; i < n; i++) {
                d[i] = (byte) ("the quick brown fox {\"text\": 123}\n".charAt(r.nextInt(34)));
            }
        }
        return d;
    }

    static byte[] readAll(InputStream in, SplittableRandom r) throws IOException {
        // reads of random lengths, as a parser makes them
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[70_000];
        try (in) {
            for (int n; (n = in.read(buf, 0, 1 + r.nextInt(buf.length))) >= 0; ) {
                out.write(buf, 0, n);
            }
        }
        return out.toByteArray();
    }

    @Test
    void isalIsUsedWhereTheLibraryIsInstalled() {
        boolean installed = Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libisal.so.2"))
                || Files.exists(Path.of("/usr/lib/aarch64-linux-gnu/libisal.so.2"));
        Assumptions.assumeTrue(installed, "libisal2 is not installed here: gzip goes through zlib (as tested below)");
        assertTrue(Gunzip.native_(), "libisal.so.2 is installed but failed its check");
    }

    @Test
    void membersOfAnySizeInflateToTheBytesZlibGives() throws IOException {
        SplittableRandom r = new SplittableRandom(5);
        for (int t = 0; t < 40; t++) {
            int members = 1 + r.nextInt(4);
            ByteArrayOutputStream gz = new ByteArrayOutputStream();
            ByteArrayOutputStream want = new ByteArrayOutputStream();
            for (int m = 0; m < members; m++) {
                int n = new int[] {0, 1, 100, 65_536, 262_144, 1_000_003}[r.nextInt(6)] + r.nextInt(3);
                byte[] d = data(r, n);
                gz.write(gzip(d, 0, d.length));
                want.write(d);
            }
            if (r.nextInt(4) == 0) {
                gz.write(new byte[1 + r.nextInt(600)]); // zero padding after the last member
            }
            byte[] got = readAll(Gunzip.open(new ByteArrayInputStream(gz.toByteArray())), r);
            assertArrayEquals(want.toByteArray(), got, "test " + t + ": " + members + " members");
        }
    }

    @Test
    void aFileTheGzipToolWroteReadsBack() throws Exception {
        Path plain = tmp.resolve("lines.jsonl");
        SplittableRandom r = new SplittableRandom(6);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 20_000; i++) {
            sb.append("{\"text\": \"line ").append(i).append(' ').append(r.nextLong()).append("\"}\n");
        }
        Files.writeString(plain, sb);
        Process p;
        try {
            p = new ProcessBuilder("gzip", "-k", "-9", plain.toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            Assumptions.abort("no gzip tool here: " + e.getMessage());
            return;
        }
        assertEquals(0, p.waitFor(), new String(p.getInputStream().readAllBytes()));
        try (InputStream in = Gunzip.open(Files.newInputStream(tmp.resolve("lines.jsonl.gz")))) {
            assertArrayEquals(Files.readAllBytes(plain), in.readAllBytes());
        }
    }

    @Test
    void corruptionAndTruncationFailNamingTheCompressedByte() throws IOException {
        SplittableRandom r = new SplittableRandom(7);
        byte[] d = data(new SplittableRandom(1), 500_000);
        d[0] = 'x'; // (compressible: data(..) of seed 1 is text)
        byte[] gz = gzip(d, 0, d.length);

        byte[] cut = java.util.Arrays.copyOf(gz, gz.length / 2);
        IOException e = assertThrows(IOException.class, () -> readAll(Gunzip.open(new ByteArrayInputStream(cut)), r));
        assertTrue(e.getMessage().matches(".*(cut short|Unexpected end).*"), e.getMessage());

        byte[] trailer = gz.clone();
        trailer[trailer.length - 6] ^= 0x40; // in the CRC-32
        e = assertThrows(IOException.class, () -> readAll(Gunzip.open(new ByteArrayInputStream(trailer)), r));
        assertTrue(e.getMessage().matches("(?i).*(crc|corrupt).*"), e.getMessage());

        byte[] garbage = java.util.Arrays.copyOf(gz, gz.length + 3);
        garbage[gz.length] = 'x';
        if (Gunzip.native_()) {
            e = assertThrows(IOException.class, () -> readAll(Gunzip.open(new ByteArrayInputStream(garbage)), r));
            assertEquals("not in gzip format at compressed byte " + gz.length, e.getMessage());
        }

        for (int t = 0; t < 30; t++) {
            // a flipped byte: an error, or (rarely) other bytes that the CRC check then refuses; never a hang
            byte[] flipped = gz.clone();
            int at = 20 + r.nextInt(gz.length - 40);
            flipped[at] ^= (byte) (1 << r.nextInt(8));
            assertThrows(IOException.class, () -> readAll(Gunzip.open(new ByteArrayInputStream(flipped)), r), "flip at " + at);
        }
        assertThrows(IOException.class, () -> Gunzip.open(new ByteArrayInputStream(new byte[0])).read());
    }
}
