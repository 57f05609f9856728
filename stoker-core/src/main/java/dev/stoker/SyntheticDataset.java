package dev.stoker;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * {@code size} samples of {@code sampleBytes} bytes whose contents are a pure function of the
 * sample index, optionally spending {@code workNanos} of CPU per sample as a decoder would. The
 * data of {@code stoker bench synthetic} and {@code stoker demo}, and of the loader's tests: any
 * misplaced, repeated or lost sample changes the batch digests.
 *
 * <p>Field {@code data}: uint8[sampleBytes], filled with 64-bit words {@code mix64(index, word)}
 * (little-endian; the last word cut to fit).
 */
public final class SyntheticDataset implements DirectDataset {
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final long size;
    private final int sampleBytes;
    private final long workNanos;
    private final Schema schema;

    public SyntheticDataset(long size, int sampleBytes, long workNanos) {
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0, got " + size);
        }
        if (sampleBytes < 1) {
            throw new IllegalArgumentException("sampleBytes must be >= 1, got " + sampleBytes);
        }
        if (workNanos < 0) {
            throw new IllegalArgumentException("workNanos must be >= 0, got " + workNanos);
        }
        this.size = size;
        this.sampleBytes = sampleBytes;
        this.workNanos = workNanos;
        this.schema = Schema.of(Field.tensor("data", DType.UINT8, sampleBytes));
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public Schema schema() {
        return schema;
    }

    @Override
    public String name() {
        return "synthetic";
    }

    /** The word {@code w} of sample {@code index}. */
    public static long word(long index, long w) {
        return Keys.key(index, w);
    }

    @Override
    public void read(long index, Row row) {
        if (workNanos > 0) {
            spin(workNanos);
        }
        MemorySegment col = row.column(0);
        long base = row.offset(0);
        int words = sampleBytes >>> 3;
        for (int w = 0; w < words; w++) {
            col.set(LONG, base + 8L * w, word(index, w));
        }
        int rest = sampleBytes & 7;
        if (rest != 0) {
            long last = word(index, words);
            for (int i = 0; i < rest; i++) {
                col.set(ValueLayout.JAVA_BYTE, base + 8L * words + i, (byte) (last >>> (8 * i)));
            }
        }
    }

    /** Busy-waits {@code nanos}, like CPU-bound decoding would. */
    static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    /** Its content is a function of its size and sample bytes (the simulated work is not content). */
    @Override
    public long fingerprint() {
        return Keys.key(Keys.key(0x53594e5448L, size), sampleBytes);
    }
}
