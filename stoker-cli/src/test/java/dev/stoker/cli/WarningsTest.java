package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

class WarningsTest {

    @Test
    void warningsAreKeptOnceInOneLineAndTheLoggersOwnHandlersAreBackAfterwards() {
        Logger root = Logger.getLogger("");
        Handler[] before = root.getHandlers();
        System.Logger log = System.getLogger("dev.stoker.Somewhere");
        try (Warnings w = new Warnings()) {
            assertArrayEquals(new Handler[] {w}, root.getHandlers(), "nothing else prints while a command runs");
            log.log(System.Logger.Level.INFO, "not a warning");
            log.log(System.Logger.Level.WARNING, "a worker of {0} did not stop", "x: int64");
            log.log(System.Logger.Level.WARNING, "could not remove /dev/shm/stoker-1", new IOException("Permission denied"));
            log.log(System.Logger.Level.WARNING, "a worker of {0} did not stop", "x: int64");
            log.log(System.Logger.Level.ERROR, "two\nlines");
            assertEquals(List.of("a worker of x: int64 did not stop", "could not remove /dev/shm/stoker-1 (Permission denied)",
                    "two lines"), w.messages());
            w.close();
            w.close(); // idempotent
        }
        assertArrayEquals(before, root.getHandlers());
        assertFalse(List.of(root.getHandlers()).stream().anyMatch(h -> h instanceof Warnings));
    }
}
