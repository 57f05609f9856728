package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class LoaderBehaviourTest {

    /** A dataset of strings "sample-i" that fails (or sleeps) at chosen indices. */
    static final class Flaky implements Dataset<byte[]> {
        final long n;
        final long failAt;
        final long sleepAt;
        final long sleepMillis;

        Flaky(long n, long failAt, long sleepAt, long sleepMillis) {
            this.n = n;
            this.failAt = failAt;
            this.sleepAt = sleepAt;
            this.sleepMillis = sleepMillis;
        }

        @Override
        public long size() {
            return n;
        }

        @Override
        public byte[] get(long index) throws IOException {
            if (index == sleepAt) {
                try {
                    Thread.sleep(sleepMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
            }
            if (index == failAt || (failAt < 0 && index % -failAt == 0)) {
                throw new IOException("cannot decode record at byte " + (index * 100));
            }
            return ("sample-" + index).getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String name() {
            return "flaky.tar";
        }
    }

    static int liveWorkers() {
        return (int) Thread.getAllStackTraces().keySet().stream().filter(Loader::isWorkerThread).filter(Thread::isAlive).count();
    }

    @Test
    void aFailingSampleSurfacesWithSourceIndexAndCause() {
        for (int workers : new int[] {0, 1, 3}) {
            try (Loader l = Loader.builder(new Flaky(100, 37, -1, 0), Collator.bytes("text", 16))
                    .batchSize(8).workers(workers).build()) {
                Iterator<Batch> it = l.iterator();
                int delivered = 0;
                LoaderException e = null;
                while (it.hasNext()) {
                    try {
                        it.next();
                        delivered++;
                    } catch (LoaderException ex) {
                        e = ex;
                        break;
                    }
                }
                assertTrue(e != null, "the failure reaches the consumer");
                assertEquals(4, delivered, "the batches before the failing one are delivered, in order");
                assertEquals("flaky.tar", e.source());
                assertEquals(37, e.index());
                assertTrue(e.getMessage().contains("flaky.tar") && e.getMessage().contains("sample 37")
                        && e.getMessage().contains("at byte 3700"), e.getMessage());
                assertTrue(e.getCause() instanceof IOException);
                assertFalse(it.hasNext(), "a failed pass ends");
                assertEquals(4, l.state().delivered(), "the state stays before the failing batch");
            }
        }
        assertEquals(0, liveWorkers());
    }

    @Test
    void skipSampleLeavesOutAndCountsFailingSamples() {
        for (int workers : new int[] {0, 2}) {
            try (Loader l = Loader.builder(new Flaky(100, -10, -1, 0), Collator.bytes("text", 16))
                    .batchSize(10).workers(workers).errorPolicy(ErrorPolicy.SKIP_SAMPLE).build()) {
                List<String> seen = new ArrayList<>();
                for (Batch b : l) {
                    assertEquals(9, b.size(), "each batch lost its one failing sample");
                    for (int r = 0; r < b.size(); r++) {
                        seen.add(new String(b.bytes(0, r).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8));
                        assertTrue(b.index(r) % 10 != 0);
                    }
                }
                assertEquals(90, seen.size());
                assertTrue(seen.contains("sample-11") && !seen.contains("sample-10"));
                assertEquals(10, l.stats().skipped());
                assertEquals(90, l.stats().samples());
            }
        }
    }

    @Test
    void aStrayInterruptOfAWorkerMidPassFailsNoSample() throws Exception {
        // a read finds its thread interrupted by someone other than the loader (which interrupts only when closing)
        java.util.Set<Long> hit = java.util.concurrent.ConcurrentHashMap.newKeySet();
        DirectDataset strays = new DirectDataset() {
            @Override
            public long size() {
                return 200;
            }

            @Override
            public Schema schema() {
                return Schema.of(Field.scalar("i", DType.INT64));
            }

            @Override
            public void read(long index, Row row) throws IOException {
                if (index % 17 == 3 && hit.add(index)) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("interrupted waiting for block " + index);
                }
                row.putLong(0, 0, index);
            }
        };
        for (int workers : new int[] {0, 2}) {
            hit.clear();
            try (Loader l = Loader.builder(strays).batchSize(16).workers(workers).seed(1).build()) {
                long n = 0;
                for (Batch b : l) {
                    for (int r = 0; r < b.size(); r++) {
                        assertEquals(b.index(r), b.data("i").get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 8L * r));
                    }
                    n += b.size();
                }
                assertEquals(200, n, workers + " workers: every sample");
                assertEquals(12, hit.size());
            }
            assertTrue(!Thread.interrupted(), "the consumer's own flag is clear");
        }
    }

    /** Each sample writes its index; sample {@code bad} fails; {@code runs} also writes whole batches at once. */
    private record Indices(long size, long bad, boolean runs) implements DirectDataset {
        @Override
        public Schema schema() {
            return Schema.of(Field.scalar("i", DType.INT64));
        }

        @Override
        public void read(long index, Row row) throws IOException {
            if (index == bad) {
                throw new IOException("sample " + index + " is bad");
            }
            row.putLong(0, 0, index);
        }

        @Override
        public boolean readAll(long[] indices, int from, int count, Row row) throws IOException {
            if (!runs) {
                return false;
            }
            for (int k = 0; k < count; k++) {
                long index = indices[from + k];
                if (index == bad) {
                    throw new IOException("sample " + index + " is bad");
                }
                row.column(0).set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, row.offset(0) + 8L * k, index);
            }
            return true;
        }
    }

    @Test
    void wholeBatchesGiveTheBatchesOfOneAtATimeAndAFailingOneIsSkippedAlone() throws Exception {
        for (Sampler sampler : new Sampler[] {Sampler.sequential(), Sampler.shuffle(), Sampler.blockShuffle(new long[] {0, 40, 41, 90, 100}, 2)}) {
            for (int workers : new int[] {0, 2}) {
                List<List<Long>> want = null;
                for (boolean runs : new boolean[] {false, true}) {
                    List<List<Long>> got = new ArrayList<>();
                    try (Loader l = Loader.builder(new Indices(100, 37, runs)).sampler(sampler).batchSize(16).workers(workers)
                            .errorPolicy(ErrorPolicy.SKIP_SAMPLE).seed(5).build()) {
                        for (Batch b : l) {
                            List<Long> ids = new ArrayList<>();
                            for (int r = 0; r < b.size(); r++) {
                                long v = b.data("i").get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 8L * r);
                                assertEquals(b.index(r), v, "row " + r + " holds its own sample");
                                ids.add(v);
                            }
                            got.add(ids);
                        }
                        assertEquals(1, l.stats().skipped(), sampler + ", runs " + runs);
                        assertEquals(99, l.stats().samples());
                    }
                    if (want == null) {
                        want = got;
                    } else {
                        assertEquals(want, got, sampler + ", " + workers + " workers: runs change no batch");
                    }
                }
            }
        }
    }

    @Test
    void aTimeoutNamesTheBatchItWaitedFor() {
        try (Loader l = Loader.builder(new Flaky(64, Long.MAX_VALUE, 17, 1500), Collator.bytes("text", 16))
                .batchSize(8).workers(2).prefetch(2).timeout(Duration.ofMillis(200)).build()) {
            Iterator<Batch> it = l.iterator();
            it.next();
            it.next();
            LoaderTimeoutException e = assertThrows(LoaderTimeoutException.class, it::next);
            assertTrue(e.getMessage().contains("batch 2 of epoch 0") && e.getMessage().contains("timed out after")
                    && e.getMessage().contains("flaky.tar"), e.getMessage());
        }
        assertEquals(0, liveWorkers());
    }

    @Test
    void leavingALoopEarlyAndClosingLeaksNoThreadAndNoBuffer() {
        AtomicInteger open = new AtomicInteger();
        Allocator counting = () -> {
            open.incrementAndGet();
            Arena a = Arena.ofShared();
            return new Arena() {
                @Override
                public MemorySegment allocate(long byteSize, long byteAlignment) {
                    return a.allocate(byteSize, byteAlignment);
                }

                @Override
                public MemorySegment.Scope scope() {
                    return a.scope();
                }

                @Override
                public void close() {
                    open.decrementAndGet();
                    a.close();
                }
            };
        };
        int before = liveWorkers();
        try (Loader l = Loader.builder(new SyntheticDataset(10_000, 64, 0)).batchSize(16).workers(4).prefetch(6)
                .allocator(counting).build()) {
            assertEquals(7, open.get(), "prefetch + 1 buffers");
            for (Batch b : l) {
                if (b.sequence() == 3) {
                    break;
                }
            }
            assertTrue(liveWorkers() > before, "workers run while the pass is open");
            assertEquals(4, l.state().delivered());
        }
        assertEquals(before, liveWorkers(), "no worker thread outlives close()");
        assertEquals(0, open.get(), "every arena is closed");
    }

    @Test
    void closeIsIdempotentAndALoaderCannotBeIteratedAfterIt() {
        Loader l = Loader.builder(new SyntheticDataset(100, 8, 0)).batchSize(4).workers(2).build();
        l.iterator().next();
        l.close();
        l.close();
        assertThrows(IllegalStateException.class, l::iterator);
    }

    @Test
    void aBatchIsReleasedByTheNextCallOrByClose() {
        try (Loader l = Loader.builder(new SyntheticDataset(1000, 8, 0)).batchSize(10).workers(2).prefetch(3).build()) {
            Iterator<Batch> it = l.iterator();
            Batch a = it.next();
            a.close();
            a.close();
            Batch b = it.next();
            assertEquals(1, b.sequence());
            int seen = 2;
            while (it.hasNext()) {
                it.next();
                seen++;
            }
            assertEquals(100, seen);
            assertEquals(4, l.freeBuffers(), "all buffers back in the pool at the end of the pass");
        }
    }

    @Test
    void theWindowBoundsWorkAheadOfASlowConsumer() throws InterruptedException {
        AtomicInteger fetched = new AtomicInteger();
        Dataset<byte[]> counting = new Dataset<>() {
            @Override
            public long size() {
                return 10_000;
            }

            @Override
            public byte[] get(long index) {
                fetched.incrementAndGet();
                return new byte[] {1};
            }
        };
        try (Loader l = Loader.builder(counting, Collator.bytes("b", 1)).batchSize(10).workers(3).prefetch(4).build()) {
            Iterator<Batch> it = l.iterator();
            it.next();
            Thread.sleep(300);
            assertEquals((1 + 4) * 10, fetched.get(), "one batch taken plus prefetch batches ready, no more");
        }
    }

    @Test
    void transformsSeeAPerSampleSeedThatDoesNotDependOnWorkers() {
        Transform<byte[], byte[]> stamp = (sample, ctx) -> java.nio.ByteBuffer.allocate(16)
                .putLong(ctx.index()).putLong(ctx.seed()).array();
        List<String> reference = null;
        for (int workers : new int[] {0, 1, 4}) {
            try (Loader l = Loader.builder(new Flaky(200, Long.MAX_VALUE, -1, 0), stamp, Collator.bytes("x", 16))
                    .batchSize(7).workers(workers).shuffle().seed(5).build()) {
                List<String> digests = Runs.digests(Runs.all(l));
                if (reference == null) {
                    reference = digests;
                } else {
                    assertEquals(reference, digests, "workers " + workers);
                }
                LoaderStats s = l.stats();
                assertTrue(s.fetchNanos() > 0 && s.transformNanos() > 0 && s.collateNanos() > 0, s.toString());
            }
        }
    }

    @Test
    void variableLengthColumnsGrowAndKeepOffsets() {
        Dataset<byte[]> growing = new Dataset<>() {
            @Override
            public long size() {
                return 50;
            }

            @Override
            public byte[] get(long index) {
                byte[] b = new byte[(int) index * 100];
                java.util.Arrays.fill(b, (byte) index);
                return b;
            }
        };
        try (Loader l = Loader.builder(growing, Collator.bytes("blob", 1)).batchSize(10).workers(2).build()) {
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    MemorySegment s = b.bytes(0, r);
                    assertEquals(b.index(r) * 100, s.byteSize());
                    for (long i = 0; i < s.byteSize(); i += 37) {
                        assertEquals((byte) b.index(r), s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i));
                    }
                }
            }
        }
    }

    @Test
    void statsCountWhatWasDelivered() {
        try (Loader l = Loader.builder(new SyntheticDataset(1000, 64, 0)).batchSize(100).workers(2).build()) {
            Runs.all(l);
            LoaderStats s = l.stats();
            assertEquals(10, s.batches());
            assertEquals(1000, s.samples());
            assertEquals(64_000, s.bytes());
            assertTrue(s.wallNanos() > 0 && s.waitNanos() <= s.wallNanos());
            assertTrue(s.fetchNanos() > 0);
            assertTrue(s.waitFraction() >= 0 && s.waitFraction() <= 1);
        }
    }

    /**
     * A pass's mark, kept at each batch, gives later the state the loader gave there: from a
     * resumed position whose batches above the frontier were delivered out of order (the frontier
     * jumps over them), to the pass's end; a pass out of order keeps no marks.
     */
    @Test
    void aPassGivesTheStateAfterAnyOfItsBatchesAsTheLoaderGaveItThen() {
        LoaderState fresh;
        try (Loader l = Loader.builder(new SyntheticDataset(200, 8, 0)).batchSize(4).workers(2).shuffle().seed(5).build()) {
            fresh = l.state();
        }
        LoaderState resumed = new LoaderState(fresh.sampler(), fresh.size(), fresh.seed(), 0, 1, 0, 4,
                new LoaderState.Indexed(0, 12, new long[] {0, 2, 3, 7, 40}), 8, fresh.data());
        try (Loader l = Loader.builder(new SyntheticDataset(200, 8, 0)).batchSize(4).workers(2).shuffle().seed(5)
                .resume(resumed).build()) {
            Batches pass = l.iterator();
            List<Long> marks = new ArrayList<>(List.of(pass.mark()));
            List<LoaderState> states = new ArrayList<>(List.of(l.state()));
            while (pass.hasNext()) {
                pass.next().close();
                marks.add(pass.mark());
                states.add(l.state());
            }
            assertEquals(43, marks.size(), "47 batches left from sample 12, 5 of them delivered before the state was saved, and the start");
            for (int k = 0; k < marks.size(); k++) {
                assertEquals(states.get(k), pass.stateAfter(marks.get(k)), "the state after " + k + " batches of the pass");
            }
            LoaderState.Indexed start = (LoaderState.Indexed) states.get(0).position();
            assertEquals(16, start.rankOffset(), "the frontier moved over batch 0, which the resumed state had delivered");
            assertEquals(List.of(1L, 2L, 6L, 39L), java.util.Arrays.stream(start.done()).boxed().toList());
            assertEquals(1, states.getLast().epoch(), "the last batch's state is the next epoch's start");
            assertThrows(IllegalArgumentException.class, () -> pass.stateAfter(marks.getLast() + 1));
        }
        try (Loader l = Loader.builder(new SyntheticDataset(200, 8, 0)).batchSize(4).workers(2).unordered().build()) {
            assertEquals(-1, l.iterator().mark(), "batches out of order: the state is asked at once");
        }
    }

    /** NOTE [Wake] in IndexedPass: a consumer woken for runs gets the same batches, and the default window leaves the workers room beside a run. */
    @Test
    void aConsumerWokenForRunsGetsTheSameBatchesAndItsWindowLeavesTheWorkersRoom() throws Exception {
        List<List<Long>> want = null;
        for (int run : new int[] {0, 4, 64}) {
            LoaderBuilder b = Loader.builder(new SyntheticDataset(2_000, 8, 20_000)).batchSize(4).workers(2).shuffle().seed(3);
            if (run > 0) {
                b.wakeRun(run);
            }
            List<List<Long>> got = new ArrayList<>();
            try (Loader l = b.build()) {
                assertEquals(run == 0 ? 4 : 2 + run, l.prefetch(), "two batches a worker, or the workers beside a run");
                for (int e = 0; e < 2; e++) {
                    for (Batch batch : l) {
                        List<Long> ids = new ArrayList<>();
                        for (int r = 0; r < batch.size(); r++) {
                            ids.add(batch.index(r));
                        }
                        got.add(ids);
                    }
                }
            }
            if (want == null) {
                want = got;
                assertEquals(1_000, want.size());
            } else {
                assertEquals(want, got, "runs of " + run + " change no batch");
            }
        }
        assertThrows(IllegalArgumentException.class, () -> Loader.builder(new SyntheticDataset(10, 8, 0)).wakeRun(0));
        assertThrows(IllegalArgumentException.class, () -> Loader.builder(new SyntheticDataset(10, 8, 0)).wakeRun(65));
    }

    @Test
    void theBuilderRejectsBadOptionsAtOnce() {
        LoaderBuilder b = Loader.builder(new SyntheticDataset(10, 8, 0));
        assertThrows(IllegalArgumentException.class, () -> b.batchSize(0));
        assertThrows(IllegalArgumentException.class, () -> b.workers(-2));
        assertThrows(IllegalArgumentException.class, () -> b.prefetch(0));
        assertThrows(IllegalArgumentException.class, () -> b.prefetch(-2));
        assertThrows(IllegalArgumentException.class, () -> b.budget(0, 1 << 20));
        assertThrows(IllegalArgumentException.class, () -> b.budget(2, 0));
        assertThrows(IllegalArgumentException.class, () -> b.worldSize(0));
        assertThrows(IllegalArgumentException.class, () -> b.rank(-1));
        assertThrows(IllegalArgumentException.class, () -> b.timeout(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> b.epoch(-1));
        assertThrows(IllegalArgumentException.class, () -> b.rank(3).worldSize(2).build());
    }

    /** NOTE [Strict builder] in Loader. */
    @Test
    void anOptionSetTwiceOrWhereItDoesNotApplyIsAnErrorNamingBoth() {
        SyntheticDataset indexed = new SyntheticDataset(10, 8, 0);
        StreamingTest.Shards stream = new StreamingTest.Shards(4, 1, -1, -1);
        IllegalStateException twice = assertThrows(IllegalStateException.class,
                () -> Loader.builder(indexed).sampler(Sampler.random(5)).shuffle());
        assertEquals("sampler is set twice: by sampler(" + Sampler.random(5).id() + ") and by shuffle()", twice.getMessage());
        assertThrows(IllegalStateException.class, () -> Loader.builder(indexed).workers(2).workers(Loader.AUTO));
        assertThrows(IllegalStateException.class, () -> Loader.builder(indexed).seed(1).seed(1));
        // options that do not apply: refused by build(), naming the call and the reason
        String[] refused = {
            message(() -> Loader.builder(indexed).workers(2).shuffleWindow(8).build()),
            message(() -> Loader.builder(indexed).workers(2).shardsAhead(2).build()),
            message(() -> Loader.builder(indexed).prefetch(4).build()),
            message(() -> Loader.builder(indexed).workers(2).budget(2, 1 << 20).build()),
            message(() -> Loader.builder(stream, StreamingTest.VALUE).workers(2).prefetch(4).build()),
            message(() -> Loader.builder(stream, StreamingTest.VALUE).workers(2).unordered().build()),
            message(() -> Loader.builder(stream, StreamingTest.VALUE).shardBuffer(8).build()),
        };
        assertTrue(refused[0].startsWith("shuffleWindow(8) is for streaming datasets"), refused[0]);
        assertTrue(refused[1].startsWith("shardsAhead(2) is for streaming datasets"), refused[1]);
        assertTrue(refused[2].startsWith("prefetch(4) does not apply with no workers"), refused[2]);
        assertTrue(refused[3].startsWith("budget(2, 1048576) is what AUTO may use"), refused[3]);
        assertTrue(refused[4].startsWith("prefetch(4) is batches ahead of a dataset read by index")
                && refused[4].contains("shardsAhead(n)"), refused[4]);
        assertTrue(refused[5].startsWith("unordered() is for datasets read by index"), refused[5]);
        assertTrue(refused[6].startsWith("shardBuffer(8) does not apply with no workers"), refused[6]);
        LoaderState start;
        try (Loader l = Loader.builder(indexed).build()) {
            start = l.state();
        }
        assertTrue(message(() -> Loader.builder(indexed).epoch(2).resume(start).build())
                .startsWith("epoch(2) does not apply with resume(epoch 0)"));
        // the same options, each where it applies, build
        try (Loader l = Loader.builder(stream, StreamingTest.VALUE).workers(Loader.AUTO).shardsAhead(3).shardBuffer(8)
                .budget(2, 1 << 20).shuffleWindow(4).build()) {
            assertEquals(3, l.prefetch(), "a stream's read-ahead is its shards");
        }
    }

    /** The message of what {@code r} throws, which must be an IllegalArgumentException. */
    private static String message(org.junit.jupiter.api.function.Executable r) {
        return assertThrows(IllegalArgumentException.class, r).getMessage();
    }

    /** The state of each of {@code taken.length} ranks after rank r took {@code taken[r]} batches of 4 of 100 samples. */
    private static LoaderState[] ranksApart(int... taken) {
        LoaderState[] states = new LoaderState[taken.length];
        for (int rank = 0; rank < taken.length; rank++) {
            try (Loader l = Loader.builder(new SyntheticDataset(100, 8, 0)).batchSize(4).shuffle().seed(5)
                    .rank(rank).worldSize(taken.length).build()) {
                var it = l.iterator();
                for (int i = 0; i < taken[rank]; i++) {
                    it.next();
                }
                states[rank] = l.state();
            }
        }
        return states;
    }

    private static LoaderBuilder ranksOf(int rank, int worldSize) {
        return Loader.builder(new SyntheticDataset(100, 8, 0)).batchSize(4).shuffle().rank(rank).worldSize(worldSize);
    }

    @Test
    void oneRanksStateMidEpochResumesThatRankAloneAtItsWorldSize() {
        LoaderState[] s = ranksApart(3, 5);
        ResumeException alone = assertThrows(ResumeException.class, () -> ranksOf(0, 1).resume(s[0]).build());
        assertTrue(alone.getMessage().startsWith("cannot resume: the state is rank 0's of 2 ranks, and holds nothing of where"
                + " rank 1 stood"), alone.getMessage());
        assertTrue(alone.getMessage().contains("every old rank's state merged"), alone.getMessage());
        ResumeException other = assertThrows(ResumeException.class, () -> ranksOf(1, 2).resume(s[0]).build());
        assertTrue(other.getMessage().contains("rank 0's of 2 ranks"), other.getMessage());
        try (Loader own = ranksOf(1, 2).resume(s[1]).build()) {
            assertEquals(50 / 4 + 1 - 5, own.batches(), "a rank's own state: the rest of its share");
        }
    }

    @Test
    void everyRanksStateMergedResumesAtAnyWorldSizeAndRanksApartAreRefused() {
        LoaderState[] lockstep = ranksApart(4, 4);
        LoaderState merged = LoaderState.merge(List.of(lockstep));
        assertEquals(merged, LoaderState.fromJson(merged.toJson()), "the merge says so in its JSON");
        try (Loader one = ranksOf(0, 1).resume(merged).build()) {
            assertEquals((100 - 32 + 3) / 4, one.batches(), "the rest of the epoch, once");
        }
        IllegalArgumentException apart = assertThrows(IllegalArgumentException.class,
                () -> LoaderState.merge(List.of(ranksApart(3, 5))));
        assertTrue(apart.getMessage().contains("move in lockstep"), apart.getMessage());
        LoaderState[] four = ranksApart(2, 2, 2, 2);
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> LoaderState.merge(List.of(four[0], four[2])));
        assertTrue(missing.getMessage().contains("ranks [1, 3] of 4 are missing"), missing.getMessage());
    }

    @Test
    void oneRanksStateAtAnEpochsStartResumesAnyRankAtAnyWorldSize() {
        LoaderState start = ranksApart(13, 10)[0]; // rank 0 took its whole share: the next epoch's start
        assertEquals(1, start.epoch());
        assertEquals(LoaderState.Indexed.START, start.position());
        try (Loader l = ranksOf(1, 3).resume(start).build();
             Loader fresh = ranksOf(1, 3).seed(5).epoch(1).build()) {
            assertEquals(fresh.batches(), l.batches());
        }
    }

    @Test
    void aStateOfTheOtherKindIsRefusedUnlessItsNumbersMeanTheSame() {
        StreamingTest.Shards stream = new StreamingTest.Shards(6, 1, -1, -1);
        LoaderState mid;
        try (Loader l = Loader.builder(stream, StreamingTest.VALUE).batchSize(3).build()) {
            l.iterator().next();
            mid = l.state();
        }
        assertTrue(mid.position() instanceof LoaderState.Streamed s && s.samples() > 0, mid.toString());
        ResumeException e = assertThrows(ResumeException.class,
                () -> Loader.builder(new SyntheticDataset(6, 8, 0)).resume(mid).build());
        assertTrue(e.getMessage().contains("this loader reads by index"), e.getMessage());
        // a state written before positions had kinds, at a shard boundary, reads as either
        String old = mid.toJson().replace("\"position\":\"streamed\",", "").replaceAll("\"sampleInShard\":\\d+", "\"sampleInShard\":0")
                .replaceAll("\"rankOffset\":\\d+", "\"rankOffset\":2");
        LoaderState parsed = LoaderState.fromJson(old);
        assertEquals(new LoaderState.Indexed(0, 2, new long[0]), parsed.position());
        assertEquals(new LoaderState.Streams(1, Tail.PAD, new java.util.TreeMap<>(java.util.Map.of(0,
                new LoaderState.Streamed(2, 0, 0)))), parsed.streams(Tail.PAD));
    }

    @Test
    void anErrorNamesItsResourceOnceAndNoJavaClass() {
        java.util.List<java.util.function.Supplier<RuntimeException>> wrapped = java.util.List.of(
                () -> new java.io.UncheckedIOException(new CorruptShardException("data.bin", 12, "bad record")),
                () -> new RuntimeException(new CorruptShardException("data.bin", 12, "bad record")),
                () -> new IllegalArgumentException("data.bin: bad record (at byte 12)"));
        for (var thrown : wrapped) {
            Dataset<byte[]> bad = new Dataset<>() {
                @Override
                public long size() {
                    return 10;
                }

                @Override
                public byte[] get(long i) {
                    if (i == 3) { // a corrupt record, wrapped as code that cannot throw IOException wraps it
                        throw thrown.get();
                    }
                    return new byte[] {(byte) i};
                }

                @Override
                public String name() {
                    return "data.bin";
                }
            };
            try (Loader l = Loader.builder(bad, Collator.bytes("b", 4)).batchSize(1).build()) {
                LoaderException e = assertThrows(LoaderException.class, () -> {
                    for (Batch b : l) {
                        assertEquals(1, b.size());
                    }
                });
                String m = e.getMessage();
                assertTrue(m.startsWith("data.bin: sample 3"), m);
                assertEquals(m.indexOf("data.bin"), m.lastIndexOf("data.bin"), "the resource once: " + m);
                assertTrue(!m.contains("Exception"), "no Java class name: " + m);
                assertTrue(m.endsWith(": bad record (at byte 12)"), m);
            }
        }
    }

    @Test
    void aStateWithoutADataFingerprintIsRefusedOverADatasetThatHasOne() {
        SyntheticDataset data = new SyntheticDataset(100, 8, 0);
        assertTrue(data.fingerprint() != 0);
        LoaderState saved;
        try (Loader l = Loader.builder(data).batchSize(10).shuffle().seed(2).build()) {
            l.iterator().next();
            saved = l.state();
        }
        LoaderState stripped = LoaderState.fromJson(saved.toJson().replaceAll(",?\"data\":\"?[0-9a-fA-F-]+\"?", ""));
        assertEquals(0, stripped.data(), stripped.toJson());
        ResumeException e = assertThrows(ResumeException.class,
                () -> Loader.builder(new SyntheticDataset(100, 8, 1)).batchSize(10).shuffle().resume(stripped).build());
        assertTrue(e.getMessage().contains("no data fingerprint"), e.getMessage());
        try (Loader l = Loader.builder(data).batchSize(10).shuffle().resume(saved).build()) {
            assertEquals(9, l.batches(), "the state as saved resumes");
        }
    }

    @Test
    void resumingRefusesAStateFromAnotherDatasetOrSampler() {
        LoaderState s;
        try (Loader l = Loader.builder(new SyntheticDataset(100, 8, 0)).shuffle().batchSize(4).build()) {
            Runs.take(l, 3);
            s = l.state();
        }
        assertThrows(IllegalArgumentException.class,
                () -> Loader.builder(new SyntheticDataset(101, 8, 0)).shuffle().batchSize(4).resume(s).build());
        assertThrows(IllegalArgumentException.class,
                () -> Loader.builder(new SyntheticDataset(100, 8, 0)).sampler(Sampler.sequential()).batchSize(4).resume(s).build());
        assertThrows(IllegalArgumentException.class,
                () -> Loader.builder(new SyntheticDataset(100, 8, 0)).shuffle().seed(99).resume(s).build());
    }

    @Test
    void stateRoundTripsThroughJsonAndBadJsonIsNamed() {
        LoaderState s = new LoaderState("shuffle", 1000, -5, 3, 4, 1, 32, new LoaderState.Indexed(128, 64, new long[] {2, 5}), 9, 0xfeed);
        assertEquals(s, LoaderState.fromJson(s.toJson()));
        s = new LoaderState("shuffle", 1000, -5, 3, 4, 1, 32, new LoaderState.Streamed(64, 7, 3), 9, 0);
        assertEquals(s, LoaderState.fromJson(s.toJson()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LoaderState.fromJson("{\"version\":1,\"sampler\":\"shuffle\"}"));
        assertTrue(e.getMessage().contains("missing 'size'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> LoaderState.fromJson("{\"version\":1,"));
        assertTrue(e.getMessage().contains("malformed"), e.getMessage());
    }

    @Test
    void aStateIsNotWrittenOverAFifoAndTheFifoStays(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        LoaderState s = new LoaderState("shuffle", 1000, -5, 3, 4, 1, 32, new LoaderState.Indexed(128, 64, new long[] {2, 5}), 9, 0xfeed);
        java.nio.file.Path pipe = dir.resolve("state.json"); // a FIFO stands for a device such as /dev/null
        assertEquals(0, new ProcessBuilder("mkfifo", pipe.toString()).start().waitFor());
        IOException e = assertThrows(IOException.class, () -> s.write(pipe));
        assertEquals(pipe + ": not a regular file; refusing to replace it", e.getMessage());
        assertTrue(java.nio.file.Files.readAttributes(pipe, java.nio.file.attribute.BasicFileAttributes.class,
                java.nio.file.LinkOption.NOFOLLOW_LINKS).isOther(), "still a FIFO");
    }

    @Test
    void aStateIsWrittenAsEveryFileIsSoADeadWritersTemporaryIsSwept(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        LoaderState s = new LoaderState("shuffle", 1000, -5, 3, 4, 1, 32, new LoaderState.Indexed(128, 64, new long[] {2, 5}), 9, 0xfeed);
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        java.nio.file.Path left = java.nio.file.Files.createFile(dir.resolve(".state.json." + gone.pid() + ".1234.partial"));
        s.write(dir.resolve("state.json"));
        assertFalse(java.nio.file.Files.exists(left), "a checkpoint killed half-way leaves nothing for long");
        assertEquals(s, LoaderState.read(dir.resolve("state.json")));
    }

    @Test
    void stateFilesAreWrittenWholeAndBadOnesNamed(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
        LoaderState s = new LoaderState("shuffle", 1000, -5, 3, 4, 1, 32, new LoaderState.Indexed(128, 64, new long[] {2, 5}), 9, 0xfeed);
        java.nio.file.Path file = dir.resolve("state.json");
        s.write(file);
        s.write(file); // over the last one
        assertEquals(s, LoaderState.read(file));
        try (var files = java.nio.file.Files.list(dir)) {
            assertEquals(List.of(file), files.toList(), "no temporary file left");
        }
        java.nio.file.NoSuchFileException missing = assertThrows(java.nio.file.NoSuchFileException.class,
                () -> s.write(dir.resolve("none/state.json")));
        assertTrue(missing.getMessage().contains("no such directory"), missing.getMessage());
        java.nio.file.Files.writeString(file, "{\"version\":1,");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LoaderState.read(file));
        assertTrue(e.getMessage().startsWith(file + ": ") && e.getMessage().contains("malformed"), e.getMessage());
    }

    @Test
    void aNewIteratorContinuesWhereTheLastOneStopped() {
        try (Loader l = Loader.builder(new SyntheticDataset(100, 8, 0)).batchSize(10).workers(3).shuffle().build()) {
            List<String> whole;
            try (Loader ref = Loader.builder(new SyntheticDataset(100, 8, 0)).batchSize(10).shuffle().build()) {
                whole = Runs.digests(Runs.all(ref));
            }
            List<String> got = new ArrayList<>(Runs.digests(Runs.take(l, 4)));
            got.addAll(Runs.digests(Runs.take(l, 3)));
            got.addAll(Runs.digests(Runs.all(l)));
            assertEquals(whole, got);
        }
    }

    @Test
    void unorderedModeDoesNotWaitForASlowBatch() throws InterruptedException {
        CountDownLatch slowStarted = new CountDownLatch(1);
        Dataset<byte[]> slowFirst = new Dataset<>() {
            @Override
            public long size() {
                return 40;
            }

            @Override
            public byte[] get(long index) throws IOException {
                if (index == 0) {
                    slowStarted.countDown();
                    try {
                        Thread.sleep(800);
                    } catch (InterruptedException e) {
                        throw new IOException(e);
                    }
                }
                return new byte[] {(byte) index};
            }
        };
        try (Loader l = Loader.builder(slowFirst, Collator.bytes("b", 1)).batchSize(4).workers(2).prefetch(4)
                .unordered().build()) {
            Iterator<Batch> it = l.iterator();
            slowStarted.await();
            Batch first = it.next();
            assertTrue(first.sequence() != 0, "a ready batch is delivered before the slow one");
            int n = 1;
            while (it.hasNext()) {
                it.next();
                n++;
            }
            assertEquals(10, n);
        }
    }

    @Test
    void directDatasetViewsReadTheRightSamples() {
        SyntheticDataset d = new SyntheticDataset(100, 16, 0);
        List<DirectDataset> parts = d.randomSplit(3, 70, 30);
        java.util.Set<Long> words = new java.util.HashSet<>();
        int rows = 0;
        for (DirectDataset p : parts) {
            try (Loader l = Loader.builder(p).batchSize(8).workers(2).build()) {
                for (Batch b : l) {
                    for (int r = 0; r < b.size(); r++) {
                        words.add(b.data(0).get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, r * 16L));
                        rows++;
                    }
                }
            }
        }
        java.util.Set<Long> expected = new java.util.HashSet<>();
        for (long i = 0; i < 100; i++) {
            expected.add(SyntheticDataset.word(i, 0));
        }
        assertEquals(100, rows);
        assertEquals(expected, words, "the two parts hold every sample of the parent once");
        assertSame(d.schema(), parts.get(0).schema());
    }

    @Test
    void aStaleIteratorSaysSoInsteadOfHangingOrSharingBuffers() {
        try (Loader l = Loader.builder(new SyntheticDataset(1000, 8, 0)).batchSize(10).workers(2).build()) {
            Iterator<Batch> first = l.iterator();
            first.next();
            Iterator<Batch> second = l.iterator();
            assertThrows(IllegalStateException.class, first::hasNext);
            int n = 0;
            while (second.hasNext()) {
                second.next();
                n++;
            }
            assertEquals(99, n, "the newer iterator goes on from the first one's position");
        }
        Loader l = Loader.builder(new SyntheticDataset(1000, 8, 0)).batchSize(10).workers(2).build();
        Iterator<Batch> it = l.iterator();
        it.next();
        l.close();
        assertThrows(IllegalStateException.class, it::hasNext, "closing inside a loop ends it loudly");
    }

    @Test
    void anErrorSurfacesWhileAnotherWorkerIsStuckInARead() throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        Dataset<byte[]> data = new Dataset<>() {
            @Override
            public long size() {
                return 100;
            }

            @Override
            public byte[] get(long index) throws IOException {
                if (index == 50) {
                    try {
                        release.await(); // stuck until the test has seen the error
                    } catch (InterruptedException e) {
                        throw new IOException(e);
                    }
                }
                if (index == 3) {
                    throw new IOException("bad record");
                }
                return new byte[] {1};
            }
        };
        try (Loader l = Loader.builder(data, Collator.bytes("b", 1)).batchSize(10).workers(3).prefetch(6).build()) {
            Iterator<Batch> it = l.iterator();
            LoaderException e = assertThrows(LoaderException.class, it::next);
            assertEquals(3, e.index());
            release.countDown();
        }
        assertEquals(0, liveWorkers());
    }

    @Test
    void closeReturnsEvenWhenAWorkerIgnoresInterrupts() throws InterruptedException {
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        CountDownLatch stuck = new CountDownLatch(1);
        Dataset<byte[]> data = new Dataset<>() {
            @Override
            public long size() {
                return 100;
            }

            @Override
            public byte[] get(long index) {
                if (index == 0) {
                    stuck.countDown();
                    while (!stop.get()) {
                        Thread.onSpinWait(); // deaf to interrupts, like a native read
                    }
                }
                return new byte[] {1};
            }
        };
        Loader l = Loader.builder(data, Collator.bytes("b", 1)).batchSize(10).workers(1).build();
        l.iterator();
        stuck.await();
        long t0 = System.nanoTime();
        l.close();
        assertTrue(System.nanoTime() - t0 < 20_000_000_000L, "close() gave up on the stuck worker");
        stop.set(true);
        for (int i = 0; i < 100 && liveWorkers() > 0; i++) {
            Thread.sleep(20);
        }
        assertEquals(0, liveWorkers());
    }
}
