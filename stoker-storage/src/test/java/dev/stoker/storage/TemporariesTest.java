package dev.stoker.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TemporariesTest {
    @TempDir
    Path tmp;

    @Test
    void aWriterSweepsTheTemporariesOfDeadProcessesOnlyAndTracksItsOwn() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        long me = ProcessHandle.current().pid();
        Path dead = Files.createFile(tmp.resolve(".train.bin." + gone.pid() + ".123.partial"));
        Path live = Files.createFile(tmp.resolve(".train.bin." + me + ".456.partial"));
        Path other = Files.createFile(tmp.resolve(".notes.partial")); // not a name Temporaries gives: left alone
        Path mine = Temporaries.create(tmp.resolve("train.bin"));
        assertFalse(Files.exists(dead), "a dead writer's temporary is swept");
        assertTrue(Files.exists(live) && Files.exists(other) && Files.exists(mine));
        assertEquals(me, Temporaries.writer(mine.getFileName().toString()));
        assertEquals(-1, Temporaries.writer("train.bin"));
        Files.delete(mine);
        Temporaries.done(mine);
    }

    @Test
    void namesThatAreNotATemporarysHaveNoWriter() throws IOException {
        assertEquals(-1, Temporaries.writer(".a.b.partial"));
        assertEquals(-1, Temporaries.writer(".a.shard.123.x"));
        assertEquals(42, Temporaries.writer(".a.b.c.42.999.partial"));
    }
}
