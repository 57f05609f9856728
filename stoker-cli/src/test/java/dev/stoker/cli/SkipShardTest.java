package dev.stoker.cli;

import static dev.stoker.cli.MainTest.field;
import static dev.stoker.cli.MainTest.stoker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code --errors skip-shard} leaves out a file that cannot be read, of every format, and counts
 * it, as it does a tar shard; without it the run fails naming that file. The damaged files are
 * the interop fixtures' (their READMEs say what was damaged).
 */
class SkipShardTest {
    private static final Path INTEROP = Path.of("../stoker-formats/src/test/resources/interop");

    private static String at(String fixture) {
        return INTEROP.resolve(fixture).toString();
    }

    /** Runs bench over {@code args}: once failing (naming {@code bad}), once skipping; returns the samples delivered. */
    private static long skipped(String bad, String... args) {
        List<String> base = new ArrayList<>(List.of("bench"));
        base.addAll(List.of(args));
        base.addAll(List.of("--workers", "0", "--order", "sequential", "--json"));
        MainTest.Outcome failed = stoker(base.toArray(String[]::new));
        assertEquals(1, failed.code(), failed.err());
        assertTrue(failed.err().startsWith("stoker: ") && failed.err().contains(bad) && failed.err().strip().lines().count() == 1,
                failed.err());
        base.addAll(List.of("--errors", "skip-shard"));
        MainTest.Outcome run = stoker(base.toArray(String[]::new));
        assertEquals(0, run.code(), run.err());
        assertEquals("1", field(run.out().strip(), "skippedShards"), run.out());
        return Long.parseLong(field(run.out().strip(), "samples"));
    }

    private static long samples(String... args) {
        List<String> all = new ArrayList<>(List.of("bench"));
        all.addAll(List.of(args));
        all.addAll(List.of("--workers", "0", "--json"));
        MainTest.Outcome run = stoker(all.toArray(String[]::new));
        assertEquals(0, run.code(), run.err());
        return Long.parseLong(field(run.out().strip(), "samples"));
    }

    @Test
    void aTruncatedTfRecordFileIsLeftOutAndCounted() {
        String good = at("tfrecord/examples.tfrecord");
        String bad = at("tfrecord/truncated.tfrecord");
        assertEquals(samples("tfrecord", good, "--decode", "raw"), skipped(bad, "tfrecord", good, bad, "--decode", "raw"));
    }

    @Test
    void aTruncatedArrowFileIsLeftOutAndCounted() {
        String good = at("arrow/saved/data-00001-of-00002.arrow");
        String bad = at("arrow/corrupt/truncated.arrow");
        assertEquals(samples("arrow", good, "--fields", "id,text"), skipped(bad, "arrow", bad, good, "--fields", "id,text"));
    }

    @Test
    void aDamagedMdsShardIsLeftOutAndCounted() {
        for (String damage : List.of("truncated", "bad_offset")) {
            // 12 samples in shards of 5, 5 and 2; shard 0 is damaged
            String dir = at("mds/corrupt/" + damage);
            assertEquals(7, skipped(Path.of(dir, "shard.00000.mds").toString(), "mds", dir, "--fields", "int,str"), damage);
        }
    }

    @Test
    void aDamagedLitDataChunkIsLeftOutAndCounted() {
        for (String damage : List.of("truncated", "bad_offset")) {
            // chunk-0-1.bin holds items 5..8 of 12
            String dir = at("litdata/corrupt/" + damage);
            assertEquals(samples("litdata", at("litdata/pytree"), "--fields", "label,name") - 4,
                    skipped(Path.of(dir, "chunk-0-1.bin").toString(), "litdata", dir, "--fields", "label,name"), damage);
        }
    }
}
