package dev.stoker.formats.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PositionedInputStreamTest {
    @TempDir
    Path tmp;

    /** Random reads of every size (inside, across and past the buffer) and skips give what a stream over the bytes gives. */
    @Test
    void readsAndSkipsAsAStreamOverTheSameBytes() throws IOException {
        SplittableRandom r = new SplittableRandom(7);
        for (int round = 0; round < 40; round++) {
            byte[] data = new byte[r.nextInt(0, 40_000)];
            r.nextBytes(data);
            Path f = tmp.resolve("f" + round);
            Files.write(f, data);
            try (FileChannel ch = FileChannel.open(f)) {
                PositionedInputStream in = new PositionedInputStream(ch, data.length, ByteBuffer.allocate(1 + r.nextInt(4096)));
                ByteArrayInputStream want = new ByteArrayInputStream(data);
                for (int step = 0; step < 200; step++) {
                    switch (r.nextInt(3)) {
                        case 0 -> assertEquals(want.read(), in.read());
                        case 1 -> {
                            long n = r.nextInt(0, 9000);
                            assertEquals(want.skip(n), in.skip(n));
                        }
                        default -> {
                            int n = r.nextInt(0, 9000);
                            byte[] a = new byte[n];
                            byte[] b = new byte[n];
                            int k = want.readNBytes(a, 0, n);
                            int m = in.readNBytes(b, 0, n);
                            assertEquals(k, m);
                            assertArrayEquals(a, b);
                        }
                    }
                    assertEquals(want.available(), in.available());
                }
            }
        }
    }
}
