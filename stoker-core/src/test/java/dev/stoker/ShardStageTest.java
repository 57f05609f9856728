package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.StreamingDataset.ShardReader;
import dev.stoker.testing.LoaderContract;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Stages over a shard's samples ({@link ShardStage}, {@link StreamingDataset#through}). */
class ShardStageTest {

    /** Shards of varied sizes (0 to 22) of values {@code shard << 20 | i}; a bad record where {@code bad} says. */
    static final class Source implements StreamingDataset<Long> {
        final int shards;
        final java.util.function.LongPredicate bad;
        final AtomicInteger open = new AtomicInteger();

        Source(int shards, java.util.function.LongPredicate bad) {
            this.shards = shards;
            this.bad = bad;
        }

        static int size(int shard) {
            return (int) Math.floorMod(Keys.key(3, shard), 23L);
        }

        @Override
        public int shards() {
            return shards;
        }

        @Override
        public long fingerprint() {
            return 42;
        }

        @Override
        public ShardReader<Long> open(int shard) {
            open.incrementAndGet();
            return new ShardReader<>() {
                int i;
                boolean closed;

                @Override
                public Long next() throws IOException {
                    if (i >= size(shard)) {
                        return null;
                    }
                    long v = ((long) shard << 20) | i++;
                    if (bad.test(v)) {
                        throw new CorruptRecordException("shard-" + shard, i - 1, "record " + (i - 1) + " is bad");
                    }
                    return v;
                }

                @Override
                public void close() {
                    if (!closed) {
                        closed = true;
                        open.decrementAndGet();
                    }
                }
            };
        }
    }

    /** N to 1: the sums of consecutive pairs, an odd one at a shard's end dropped. Keeps its half pair across a bad record. */
    static final ShardStage<Long, Long> PAIRS = upstream -> new ShardReader<>() {
        Long first;

        @Override
        public Long next() throws IOException {
            while (true) {
                Long v = upstream.next();
                if (v == null) {
                    return null;
                }
                if (first == null) {
                    first = v;
                } else {
                    long sum = first + v;
                    first = null;
                    return sum;
                }
            }
        }

        @Override
        public void close() throws IOException {
            upstream.close();
        }
    };

    /** 1 to N: each sample, then its negation. */
    static final ShardStage<Long, Long> TWICE = upstream -> new ShardReader<>() {
        Long pending;

        @Override
        public Long next() throws IOException {
            if (pending != null) {
                Long p = pending;
                pending = null;
                return p;
            }
            Long v = upstream.next();
            pending = v == null ? null : -v;
            return v;
        }

        @Override
        public void close() throws IOException {
            upstream.close();
        }
    };

    /** What {@code PAIRS.andThen(TWICE)} gives for a shard, computed directly (records where {@code bad} says left out). */
    static List<Long> expected(int shards, java.util.function.LongPredicate bad) {
        List<Long> out = new ArrayList<>();
        for (int s = 0; s < shards; s++) {
            List<Long> kept = new ArrayList<>();
            for (int i = 0; i < Source.size(s); i++) {
                long v = ((long) s << 20) | i;
                if (!bad.test(v)) {
                    kept.add(v);
                }
            }
            for (int i = 0; i + 1 < kept.size(); i += 2) {
                long sum = kept.get(i) + kept.get(i + 1);
                out.add(sum);
                out.add(-sum);
            }
        }
        return out;
    }

    static List<Long> values(Loader l) {
        List<Long> out = new ArrayList<>();
        for (Batch b : l) {
            for (int r = 0; r < b.size(); r++) {
                out.add(b.data(0).get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r));
            }
        }
        return out;
    }

    @Test
    void stagesComposeInOrderOverEachShardForAnyWorkerCount() {
        Source s = new Source(9, v -> false);
        StreamingDataset<Long> d = s.through(PAIRS.andThen(TWICE));
        assertEquals(9, d.shards());
        for (int workers : new int[] {0, 1, 3}) {
            try (Loader l = Loader.builder(d, Collator.int64("v")).batchSize(5).workers(workers).build()) {
                assertEquals(expected(9, v -> false), values(l), workers + " workers");
            }
            assertEquals(0, s.open.get(), "every reader closed, through its stages");
        }
        StreamingDataset<Long> other = s.through(TWICE).through(PAIRS);
        try (Loader l = Loader.builder(other, Collator.int64("v")).batchSize(5).build()) {
            assertTrue(values(l).stream().allMatch(v -> v == 0), "the other order: each value and its negation summed");
        }
    }

    @Test
    void aBadRecordPassesThroughTheStagesUnderTheLoadersErrorPolicy() {
        java.util.function.LongPredicate bad = v -> (v & 0xFFFFF) % 7 == 3;
        StreamingDataset<Long> d = new Source(9, bad).through(PAIRS.andThen(TWICE));
        for (int workers : new int[] {0, 2}) {
            try (Loader l = Loader.builder(d, Collator.int64("v")).batchSize(5).workers(workers)
                    .errorPolicy(ErrorPolicy.SKIP_SAMPLE).build()) {
                assertEquals(expected(9, bad), values(l), "a skipped record loses nothing around it, " + workers + " workers");
                long badRecords = 0;
                for (int s = 0; s < 9; s++) {
                    for (int i = 0; i < Source.size(s); i++) {
                        badRecords += bad.test(((long) s << 20) | i) ? 1 : 0;
                    }
                }
                assertEquals(badRecords, l.stats().skipped());
            }
            try (Loader l = Loader.builder(d, Collator.int64("v")).batchSize(5).workers(workers).build()) {
                LoaderException e = assertThrows(LoaderException.class, () -> values(l));
                assertTrue(e.getMessage().contains("shard-0") && e.getMessage().contains("record 3 is bad"), e.getMessage());
            }
        }
    }

    @Test
    void aStageShapesTheFingerprintAndNoneStaysNone() {
        Source s = new Source(3, v -> false);
        long plain = s.fingerprint();
        long paired = s.through(PAIRS).fingerprint();
        ShardStage<Long, Long> windows8 = withFingerprint(PAIRS, 8);
        ShardStage<Long, Long> windows9 = withFingerprint(PAIRS, 9);
        assertNotEquals(plain, paired, "a stage is other data");
        assertNotEquals(s.through(windows8).fingerprint(), s.through(windows9).fingerprint(), "so are its settings");
        assertEquals(s.through(windows8).fingerprint(), s.through(withFingerprint(PAIRS, 8)).fingerprint());
        ShardStage<Long, Long> twice = withFingerprint(TWICE, 2);
        assertNotEquals(s.through(windows8.andThen(twice)).fingerprint(), s.through(twice.andThen(windows8)).fingerprint(),
                "stages in another order are other data");
        StreamingDataset<Long> unknown = new StreamingDataset<>() {
            @Override
            public int shards() {
                return 1;
            }

            @Override
            public ShardReader<Long> open(int shard) {
                return s.open(shard);
            }
        };
        assertEquals(0, unknown.through(PAIRS).fingerprint(), "no fingerprint upstream, none through a stage");
    }

    @Test
    void aStageThatFailsToOpenClosesItsUpstream() {
        Source s = new Source(4, v -> false);
        ShardStage<Long, Long> refusing = upstream -> {
            upstream.close();
            throw new IOException("no room for this stage's buffers");
        };
        try (Loader l = Loader.builder(s.through(PAIRS.andThen(refusing)), Collator.int64("v")).batchSize(2).workers(2).build()) {
            LoaderException e = assertThrows(LoaderException.class, () -> values(l));
            assertTrue(e.getMessage().contains("no room"), e.getMessage());
        }
        assertEquals(0, s.open.get(), "no reader left open");
    }

    private static ShardStage<Long, Long> withFingerprint(ShardStage<Long, Long> stage, long fingerprint) {
        return new ShardStage<>() {
            @Override
            public ShardReader<Long> open(ShardReader<? extends Long> upstream) throws IOException {
                return stage.open(upstream);
            }

            @Override
            public long fingerprint() {
                return fingerprint;
            }
        };
    }

    @Nested
    class StagedStreamsKeepTheLoaderContract extends LoaderContract {
        @Override
        protected LoaderBuilder builder() {
            return Loader.builder(new Source(9, v -> false).through(PAIRS.andThen(TWICE)), Collator.int64("v"));
        }
    }
}
