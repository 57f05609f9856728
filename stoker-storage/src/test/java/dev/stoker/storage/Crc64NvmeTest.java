package dev.stoker.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class Crc64NvmeTest {

    /** Bit by bit, straight from the definition: reflected in and out, init and xorout all ones. */
    static long reference(byte[] b, int off, int len) {
        long poly = Long.reverse(0xAD93D23594C93659L);
        long crc = -1L;
        for (int i = off; i < off + len; i++) {
            crc ^= b[i] & 0xFF;
            for (int k = 0; k < 8; k++) {
                crc = (crc & 1) != 0 ? (crc >>> 1) ^ poly : crc >>> 1;
            }
        }
        return ~crc;
    }

    @Test
    void theCatalogueCheckValueAndTheEmptyInput() {
        Crc64Nvme crc = new Crc64Nvme();
        assertEquals(0L, crc.getValue());
        crc.update("123456789".getBytes(StandardCharsets.US_ASCII));
        assertEquals(0xAE8B14860A799888L, crc.getValue());
        assertArrayEquals(new byte[] {(byte) 0xAE, (byte) 0x8B, 0x14, (byte) 0x86, 0x0A, 0x79, (byte) 0x98, (byte) 0x88},
                crc.getChecksumBytes(), "big-endian, as S3 encodes it");
    }

    @Test
    void anySplitOfAnyInputGivesTheReferenceValue() {
        SplittableRandom random = new SplittableRandom(64);
        for (int round = 0; round < 300; round++) {
            byte[] data = new byte[random.nextInt(0, 3000)];
            random.nextBytes(data);
            int off = data.length == 0 ? 0 : random.nextInt(0, data.length);
            int len = random.nextInt(0, data.length - off + 1);
            Crc64Nvme crc = new Crc64Nvme();
            for (int at = off; at < off + len; ) {
                int n = Math.min(off + len - at, random.nextInt(0, 40));
                if (n == 1) {
                    crc.update(data[at]);
                } else {
                    crc.update(data, at, n);
                }
                at += n;
            }
            assertEquals(reference(data, off, len), crc.getValue(), "round " + round + ": " + len + " bytes at " + off);
        }
    }

    @Test
    void resetGoesBackToTheMarkOrTheStart() {
        byte[] a = "shard-".getBytes(StandardCharsets.US_ASCII);
        byte[] b = "000001.tar".getBytes(StandardCharsets.US_ASCII);
        Crc64Nvme crc = new Crc64Nvme();
        crc.update(b);
        crc.reset();
        crc.update(a);
        crc.mark(0);
        crc.update(a);
        crc.reset();
        crc.update(b);
        byte[] ab = "shard-000001.tar".getBytes(StandardCharsets.US_ASCII);
        assertEquals(reference(ab, 0, ab.length), crc.getValue());
    }
}
