package dev.stoker.storage;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import software.amazon.awssdk.checksums.SdkChecksum;

/**
 * CRC-64/NVME, the checksum S3 computes for every object it stores (and returns, asked with
 * {@code x-amz-checksum-mode}, as {@code x-amz-checksum-crc64nvme}): the reflected polynomial
 * {@code 0xAD93D23594C93659}, initial value and final XOR all ones; the check value of
 * {@code "123456789"} is {@code 0xAE8B14860A799888}. The AWS SDK computes it only through its CRT
 * native library, a separate dependency of some 20 MB; this is the table-driven form, eight bytes
 * a step (slicing by 8: one table lookup per byte, no dependency between the lookups of a step).
 * {@link #getChecksumBytes} is big-endian, as S3 encodes it.
 */
final class Crc64Nvme implements SdkChecksum {
    private static final long POLY = 0x9A6C9329AC4BC9B5L; // 0xAD93D23594C93659, bits reversed
    private static final long[][] T = tables();
    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private long crc = -1L;
    private long marked = -1L;

    private static long[][] tables() {
        long[][] t = new long[8][256];
        for (int n = 0; n < 256; n++) {
            long c = n;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ POLY : c >>> 1;
            }
            t[0][n] = c;
        }
        for (int n = 0; n < 256; n++) {
            for (int k = 1; k < 8; k++) {
                t[k][n] = (t[k - 1][n] >>> 8) ^ t[0][(int) (t[k - 1][n] & 0xFF)];
            }
        }
        return t;
    }

    @Override
    public void update(int b) {
        crc = (crc >>> 8) ^ T[0][(int) ((crc ^ b) & 0xFF)];
    }

    @Override
    public void update(byte[] b, int off, int len) {
        java.util.Objects.checkFromIndexSize(off, len, b.length);
        long c = crc;
        long[] t0 = T[0], t1 = T[1], t2 = T[2], t3 = T[3], t4 = T[4], t5 = T[5], t6 = T[6], t7 = T[7];
        int i = off;
        for (int end = off + len - 8; i <= end; i += 8) {
            long x = c ^ (long) LONG_LE.get(b, i);
            c = t7[(int) x & 0xFF] ^ t6[(int) (x >>> 8) & 0xFF] ^ t5[(int) (x >>> 16) & 0xFF] ^ t4[(int) (x >>> 24) & 0xFF]
                    ^ t3[(int) (x >>> 32) & 0xFF] ^ t2[(int) (x >>> 40) & 0xFF] ^ t1[(int) (x >>> 48) & 0xFF] ^ t0[(int) (x >>> 56)];
        }
        for (int end = off + len; i < end; i++) {
            c = (c >>> 8) ^ t0[(int) ((c ^ b[i]) & 0xFF)];
        }
        crc = c;
    }

    /** The CRC of the bytes so far. */
    @Override
    public long getValue() {
        return ~crc;
    }

    @Override
    public byte[] getChecksumBytes() {
        long v = getValue();
        byte[] out = new byte[8];
        for (int i = 0; i < 8; i++) {
            out[i] = (byte) (v >>> (56 - 8 * i));
        }
        return out;
    }

    @Override
    public void reset() {
        crc = marked;
    }

    @Override
    public void mark(int readLimit) {
        marked = crc;
    }
}
