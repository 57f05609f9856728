package dev.stoker.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.SyntheticDataset;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ring of stoker serve, read back as the Python side reads it (ShmRing's documented layout). */
class ShmRingTest {
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @TempDir
    Path dir;

    @Test
    void batchesAreCollatedIntoTheirSlotsAndTheHeaderSaysWhereEachColumnIs() throws IOException {
        SyntheticDataset data = new SyntheticDataset(100, 24, 0);
        LoaderBuilder b = Loader.builder(data).batchSize(8).workers(2).prefetch(3).holds(2);
        try (ShmRing ring = ShmRing.create(dir, "stoker-ring-test", b.schema(), 8, b.buffers(), 0);
             Loader loader = b.allocator(ring).build();
             FileChannel ch = FileChannel.open(ring.path(), StandardOpenOption.READ);
             Arena a = Arena.ofConfined()) {
            MemorySegment view = ch.map(FileChannel.MapMode.READ_ONLY, 0, ring.size(), a); // as the client maps it
            assertEquals("STOKRING", view.getString(0, StandardCharsets.US_ASCII).substring(0, 8));
            assertEquals(3 + 2, view.get(INT, 12), "slots: the prefetch window and the batches held");
            Set<Integer> slots = new HashSet<>();
            Iterator<Batch> it = loader.iterator();
            for (long counter = 1; it.hasNext(); counter++) {
                Batch batch = it.next();
                int slot = ring.slotOf(batch);
                slots.add(slot);
                assertEquals(0, ring.publish(batch, slot, counter), "nothing outgrew the slot");
                long s = ShmRing.RING_HEADER + slot * ring.slotBytes();
                assertEquals(batch.sequence(), view.get(LONG, s));
                assertEquals(batch.size(), view.get(INT, s + 16));
                assertEquals(counter, view.get(LONG, s + 32));
                assertEquals("data", view.getString(s + 64));
                long at = view.get(LONG, s + 64 + 104);
                assertEquals(24L * batch.size(), view.get(LONG, s + 64 + 112));
                assertEquals(0, at % 64, "columns are 64-byte aligned");
                MemorySegment seen = view.asSlice(s + at, 24L * batch.size());
                assertEquals(-1, seen.mismatch(batch.data(0).asSlice(0, 24L * batch.size())), "the client reads the batch's bytes");
                batch.close();
                assertTrue(ring.clientFree(slot), "the client held the slot it was sent");
            }
            assertTrue(slots.size() > 1 && slots.size() <= 5, slots.toString());
        }
        assertFalse(Files.exists(dir.resolve("stoker-ring-test")), "closing removes the name");
    }

    @Test
    void aRingThatDoesNotFitSaysHowMuchIsNeededAndHowToGetIt() {
        SyntheticDataset data = new SyntheticDataset(100, 1 << 30, 0);
        // past the loader's own memory limit too (refused first, with its numbers): lifted, to reach the ring's check
        LoaderBuilder b = Loader.builder(data).batchSize(64).workers(1).prefetch(2).memoryLimit(Long.MAX_VALUE);
        IOException e = assertThrows(IOException.class, () -> ShmRing.create(dir, "stoker-ring-big", b.schema(), 64, b.buffers(), 0));
        assertTrue(e.getMessage().contains("needs 192.0 GiB") && e.getMessage().contains("--shm-size"), e.getMessage());
        assertFalse(Files.exists(dir.resolve("stoker-ring-big")));
    }

    @Test
    void aStartingServerSweepsTheRingsOfDeadServersOnly() throws IOException {
        long dead = deadPid();
        Path stale = Files.createFile(dir.resolve(ShmRing.PREFIX + dead + "-1-abc"));
        Path live = Files.createFile(dir.resolve(ShmRing.PREFIX + ProcessHandle.current().pid() + "-1-abc"));
        Path other = Files.createFile(dir.resolve("unrelated"));
        BridgeServer.sweepStaleRings(dir);
        assertFalse(Files.exists(stale));
        assertTrue(Files.exists(live) && Files.exists(other));
    }

    private static long deadPid() throws IOException {
        try {
            Process p = new ProcessBuilder("true").start();
            p.waitFor();
            return p.pid();
        } catch (InterruptedException e) {
            throw new IOException(e);
        }
    }

    /** The client's report (NOTE [Bridge flow] in Session), written as the Python side writes it. */
    @Test
    void theSessionTakesGivenBackSlotsInOrderAndOnlyWholeEntriesOfThisTurn() throws IOException {
        SyntheticDataset data = new SyntheticDataset(100, 24, 0);
        LoaderBuilder b = Loader.builder(data).batchSize(8).workers(2).prefetch(3);
        try (ShmRing ring = ShmRing.create(dir, "stoker-ring-test", b.schema(), 8, b.buffers(), 0);
             FileChannel ch = FileChannel.open(ring.path(), StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena a = Arena.ofConfined()) {
            MemorySegment client = ch.map(FileChannel.MapMode.READ_WRITE, 0, ring.size(), a);
            int slots = ring.slots();
            long queue = ShmRing.RING_HEADER + slots * ring.slotBytes();
            assertEquals(ring.size(), queue + 4096, "the queue is one page here, after the last slot");
            assertEquals(-1, ring.nextGivenBack(), "a queue never written holds nothing");
            long given = 0;
            for (int turn = 0; turn < 3; turn++) { // around the queue, which holds one entry a slot
                for (int i = 0; i < slots; i++, given++) {
                    client.set(LONG, queue + 8 * (given % slots), (given + 1) << 32 | (i * 3 % slots));
                }
                for (int i = 0; i < slots; i++) {
                    assertEquals(i * 3 % slots, ring.nextGivenBack(), "turn " + turn + ", entry " + i);
                }
                assertEquals(-1, ring.nextGivenBack(), "an entry of the last turn is not taken again");
            }
            client.set(LONG, queue + 8 * (given % slots), (given + 2) << 32 | 1); // numbered past the next one
            assertEquals(-1, ring.nextGivenBack(), "an entry numbered for a later one is not yet the next");
            client.set(LONG, queue + 8 * (given % slots), (given + 1) << 32 | 1);
            assertEquals(1, ring.nextGivenBack());
            client.set(LONG, Protocol.RING_TAKEN_AT, 41);
            assertEquals(41, ring.clientTaken());
            ring.waits(7L << 48 | 12);
            assertEquals(7L << 48 | 12, client.get(LONG, Protocol.RING_WAITS_AT));
        }
    }

    @Test
    void noticesAheadDefaultToWhatFits4MiBBetweenTwoAnd32AndRunsAreHalfOfThemAtMost8() {
        assertEquals(32, Session.defaultAhead(64 << 10));
        assertEquals(8, Session.defaultAhead(512 << 10));
        assertEquals(2, Session.defaultAhead(4 << 20));
        assertEquals(2, Session.defaultAhead(64L * 3 * 224 * 224 * 4));
        assertEquals(4, Session.run(8));
        assertEquals(8, Session.run(32));
        assertEquals(1, Session.run(2));
        assertEquals(1, Session.run(1));
    }

    @Test
    void aRingGrowsToItsBoundAsBatchesAreHeldAndNeverGivesOutASlotTheClientHolds() throws IOException {
        SyntheticDataset data = new SyntheticDataset(400, 24, 0);
        LoaderBuilder sizing = Loader.builder(data).batchSize(8).workers(2).prefetch(3);
        int initial = sizing.buffers();
        long slotGuess;
        try (ShmRing ring = ShmRing.create(dir, "stoker-ring-grow", sizing.schema(), 8, initial, 0)) {
            slotGuess = ring.slotBytes();
        }
        long bound = ShmRing.RING_HEADER + 20 * slotGuess;
        try (ShmRing ring = ShmRing.create(dir, "stoker-ring-grow", sizing.schema(), 8, initial, bound)) {
            assertEquals(20, ring.slots(), "as many slots as fit the bound");
            assertEquals(initial, ring.made(), "made now: the initial slots only");
            assertTrue(Files.size(ring.path()) == ring.size(), "the file spans the bound");
            List<Batch> held = new ArrayList<>();
            Set<Integer> slots = new HashSet<>();
            try (Loader loader = Loader.builder(data).batchSize(8).workers(2).prefetch(3).holds(20 - (initial - 1))
                    .allocator(ring).build()) {
                Iterator<Batch> it = loader.iterator();
                long counter = 0;
                while (it.hasNext() && held.size() < 12) {
                    Batch b = it.next();
                    int slot = ring.slotOf(b);
                    assertTrue(slots.add(slot), "slot " + slot + " given out while the client holds it");
                    ring.publish(b, slot, ++counter);
                    held.add(b);
                }
                assertTrue(ring.made() > initial && ring.made() <= 20, "grew to " + ring.made());
                assertEquals(12, ring.clientHeld());
            }
            // the loader is closed: the slots the client holds stay out of any new loader's pool
            assertEquals(12, ring.orphans());
            try (Loader next = Loader.builder(data).batchSize(8).workers(2).prefetch(3).holds(20 - (initial - 1) - 12)
                    .allocator(ring).build()) {
                Iterator<Batch> it = next.iterator();
                for (int i = 0; i < 5 && it.hasNext(); i++) {
                    Batch b = it.next();
                    assertFalse(slots.contains(ring.slotOf(b)), "a held slot was reused");
                }
            }
            for (int s : slots) {
                assertTrue(ring.clientFree(s));
                assertFalse(ring.clientFree(s), "freed twice");
            }
            assertEquals(0, ring.orphans());
        }
    }
}
