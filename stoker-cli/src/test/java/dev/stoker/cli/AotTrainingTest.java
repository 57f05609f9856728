package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The start-up cache's training run (NOTE [Start-up cache]) still runs every command it trains on. */
class AotTrainingTest {
    @TempDir
    Path tmp;

    @Test
    void theTrainingRunsEveryCommandItTrainsOn() throws Exception {
        AotTraining.run(tmp); // throws, naming the command, if one of them fails
        assertTrue(Files.size(tmp.resolve("shard-000002.tar")) > 0, "the shards were written");
        try (var images = Files.walk(tmp.resolve("images"))) {
            assertEquals(96, images.filter(p -> p.toString().endsWith(".jpg")).count());
        }
    }
}
