package dev.stoker.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.LoaderState;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every dataset keeps through a loader, whatever its format and its kind (read by
 * index or streamed): each format's test extends this class and says how to build a loader over
 * a small dataset of its own. Samples are told apart by their rows' bytes, so the properties hold
 * for any format:
 * <ul>
 *   <li>a shuffled epoch holds every sample exactly once (the rows of the unshuffled epoch);
 *   <li>the batches are the same for any worker count;
 *   <li>an epoch resumed from a saved state gives the batches of the uninterrupted epoch;
 *   <li>another epoch holds the same samples, in another order.
 * </ul>
 * How each store delivers the bytes (one byte at a time, cut and resumed, failing) is the
 * command-line contract's part ({@code StoresContractTest}), which runs every format from every store.
 */
public abstract class LoaderContract {

    /**
     * A builder over the dataset under test, its collator (or transform and collator) set and
     * nothing else: fresh for each call, over the same data. The dataset must hold at least four
     * batches of {@link #batchSize()} samples, and its batches must not all look alike.
     */
    protected abstract LoaderBuilder builder() throws Exception;

    /** The batch size the properties are checked with; a dataset of many samples takes larger batches. */
    protected int batchSize() {
        return 4;
    }

    private final List<AutoCloseable> opened = new ArrayList<>();

    /** What a {@link #builder()} opened (a dataset holding files), closed after each test. */
    protected <T extends AutoCloseable> T closedAfter(T resource) {
        opened.add(resource);
        return resource;
    }

    @AfterEach
    void closeOpened() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
        opened.clear();
    }

    private List<String> rows(LoaderBuilder b) throws Exception {
        List<String> out = new ArrayList<>();
        try (Loader l = b.build()) {
            for (Batch batch : l) {
                for (int r = 0; r < batch.size(); r++) {
                    MessageDigest md = Digests.sha256();
                    for (int f = 0; f < batch.schema().size(); f++) {
                        md.update(batch.bytes(f, r).asByteBuffer());
                    }
                    out.add(HexFormat.of().formatHex(md.digest()));
                }
            }
        }
        return out;
    }

    private static List<String> batches(Iterator<Batch> it, int limit) {
        List<String> out = new ArrayList<>();
        while (out.size() < limit && it.hasNext()) {
            Batch b = it.next();
            out.add(b.size() + ":" + Digests.of(b));
        }
        return out;
    }

    private static TreeMap<String, Integer> counts(List<String> rows) {
        TreeMap<String, Integer> m = new TreeMap<>();
        rows.forEach(r -> m.merge(r, 1, Integer::sum));
        return m;
    }

    @Test
    void aShuffledEpochHoldsEverySampleOnce() throws Exception {
        List<String> plain = rows(builder().batchSize(batchSize()));
        assertTrue(plain.size() >= 4L * batchSize(), "the contract needs at least four batches of samples, got " + plain.size());
        for (int workers : new int[] {0, 3}) {
            List<String> shuffled = rows(builder().batchSize(batchSize()).shuffle().seed(11).workers(workers));
            assertEquals(counts(plain), counts(shuffled), workers + " workers: the same samples, each as often");
        }
    }

    @Test
    void theBatchesAreTheSameForAnyWorkerCount() throws Exception {
        List<String> want = null;
        for (int workers : new int[] {0, 1, 3}) {
            List<String> got;
            try (Loader l = builder().batchSize(batchSize()).shuffle().seed(5).workers(workers).build()) {
                got = batches(l.iterator(), Integer.MAX_VALUE);
            }
            if (want == null) {
                want = got;
            } else {
                assertEquals(want, got, workers + " workers");
            }
        }
    }

    @Test
    void aResumedEpochGivesTheBatchesOfTheUninterruptedOne() throws Exception {
        List<String> whole;
        try (Loader l = builder().batchSize(batchSize()).shuffle().seed(9).workers(2).build()) {
            whole = batches(l.iterator(), Integer.MAX_VALUE);
        }
        int cut = whole.size() / 2;
        LoaderState state;
        List<String> both;
        try (Loader l = builder().batchSize(batchSize()).shuffle().seed(9).workers(2).build()) {
            both = batches(l.iterator(), cut);
            state = l.state();
        }
        LoaderState back = LoaderState.fromJson(state.toJson()); // as a state file carries it
        try (Loader l = builder().batchSize(batchSize()).shuffle().seed(9).workers(3).resume(back).build()) {
            both.addAll(batches(l.iterator(), Integer.MAX_VALUE));
        }
        assertEquals(whole, both, "saved after " + cut + " batches, resumed with another worker count");
    }

    @Test
    void anotherEpochHoldsTheSameSamplesInAnotherOrder() throws Exception {
        List<String> first = rows(builder().batchSize(batchSize()).shuffle().seed(3));
        List<String> second = rows(builder().batchSize(batchSize()).shuffle().seed(3).epoch(1));
        assertEquals(counts(first), counts(second));
        assertNotEquals(first, second, "epoch 1 is shuffled anew");
    }
}
