package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The example of README.md, as written there (with train() recording what it saw). */
class ReadmeExampleTest {
    private final Set<String> trained = new HashSet<>();
    private int batches;

    private void train(Batch batch) {
        for (int r = 0; r < batch.size(); r++) {
            trained.add(new String(batch.bytes(0, r).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8));
        }
        batches++;
    }

    @Test
    @SuppressWarnings("unused")
    void theReadmeExampleRunsAsWritten() {
        Dataset<byte[]> records = new Dataset<>() {
            public long size() { return 10_000; }
            public byte[] get(long i) { return ("record " + i).getBytes(StandardCharsets.UTF_8); }
        };

        String saved = null;
        try (Loader loader = Loader.builder(records, Collator.bytes("record", 16))
                .batchSize(256)
                .workers(4)
                .prefetch(8)
                .shuffle(true).seed(42)
                .rank(0).worldSize(2)
                .build()) {
            for (Batch batch : loader) {
                MemorySegment offsets = batch.offsets(0);
                MemorySegment bytes = batch.data(0);
                train(batch);
                if (batch.sequence() == 9) {
                    saved = loader.state().toJson();
                    break;
                }
            }
        }
        assertNotNull(saved);
        assertEquals(10, batches);
        assertEquals(2560, trained.size());

        try (Loader resumed = Loader.builder(records, Collator.bytes("record", 16)).batchSize(256)
                .shuffle(true).rank(0).worldSize(3).resume(LoaderState.fromJson(saved)).build()) {
            for (Batch batch : resumed) {
                train(batch);
            }
        }
        // rank 0 of 2 took 2,560 of the first 5,120 positions; rank 0 of 3 takes a third of the
        // remaining 4,880 (1,627, padding included)
        assertEquals(2560 + 1627, trained.size());
    }
}
