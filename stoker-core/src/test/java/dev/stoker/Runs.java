package dev.stoker;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/** Test helpers: run loaders and record what they delivered. */
final class Runs {
    private Runs() {
    }

    record Delivered(long sequence, String digest, long[] indices) {
    }

    /** Takes up to {@code max} batches from a fresh iterator and checks each row's bytes. */
    static List<Delivered> take(Loader loader, long max) {
        List<Delivered> out = new ArrayList<>();
        Iterator<Batch> it = loader.iterator();
        while (out.size() < max && it.hasNext()) {
            out.add(record(it.next()));
        }
        return out;
    }

    static List<Delivered> all(Loader loader) {
        return take(loader, Long.MAX_VALUE);
    }

    static Delivered record(Batch b) {
        long[] idx = new long[b.size()];
        for (int r = 0; r < b.size(); r++) {
            idx[r] = b.index(r);
        }
        checkSynthetic(b);
        return new Delivered(b.sequence(), digest(b), idx);
    }

    static String digest(Batch b) {
        return dev.stoker.testing.Digests.of(b);
    }

    /** Every row of a synthetic batch holds exactly the bytes of the sample its index names. */
    static void checkSynthetic(Batch b) {
        if (!b.schema().field(0).name().equals("data") || b.schema().size() != 1) {
            return;
        }
        long n = b.schema().field(0).sampleBytes();
        for (int r = 0; r < b.size(); r++) {
            long idx = b.index(r);
            for (long w = 0; w + 8 <= n; w += 8) {
                long v = b.data(0).get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), r * n + w);
                if (v != SyntheticDataset.word(idx, w / 8)) {
                    throw new AssertionError("row " + r + " of batch " + b.sequence() + " does not hold sample " + idx);
                }
            }
        }
    }

    static List<Long> indices(List<Delivered> batches) {
        List<Long> out = new ArrayList<>();
        for (Delivered d : batches) {
            for (long i : d.indices()) {
                out.add(i);
            }
        }
        return out;
    }

    static List<String> digests(List<Delivered> batches) {
        return batches.stream().map(Delivered::digest).toList();
    }
}
