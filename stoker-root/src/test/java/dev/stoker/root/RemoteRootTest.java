package dev.stoker.root;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.storage.testing.MemoryStore;
import dev.stoker.storage.testing.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A ROOT file read where it lies, by ranged requests, gives what the local file gives. */
class RemoteRootTest {
    @TempDir
    Path tmp;

    private static List<String> values(RootTable t) throws IOException {
        List<String> out = new ArrayList<>();
        for (RootColumn c : t.columns()) {
            ColumnData d = t.read(c, 0, t.entries());
            out.add(c + " " + java.util.Arrays.hashCode(d.values().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
                    + " " + java.util.Arrays.toString(d.offsets()));
        }
        return out;
    }

    private static List<String> local(String name, String tree) throws IOException {
        try (RootFile f = RootFile.open(PhysicsData.root(name).toString()); RootTable t = f.table(tree)) {
            return values(t);
        }
    }

    @Test
    void overHttpByRangedRequests() throws IOException {
        for (String name : List.of("uproot-HZZ-lz4.root", "uproot-small-evnt-tree-fullsplit.root")) {
            Files.copy(PhysicsData.root(name), tmp.resolve(name));
        }
        try (TestServer s = new TestServer(tmp)) {
            try (RootFile f = RootFile.open(s.url("uproot-HZZ-lz4.root")); RootTable t = f.table("events")) {
                assertEquals(local("uproot-HZZ-lz4.root", "events"), values(t));
            }
            try (RootFile f = RootFile.open(s.url("uproot-small-evnt-tree-fullsplit.root")); RootTable t = f.table("tree")) {
                assertEquals(local("uproot-small-evnt-tree-fullsplit.root", "tree"), values(t));
            }
            // a basket a request: never the whole file, never a request an entry
            int requests = s.requests.get("uproot-HZZ-lz4.root").get();
            assertTrue(requests > 2 && requests < 120, requests + " requests");
        }
    }

    @Test
    void fromAStoreThatDeliversOneByteAtATime() throws IOException {
        try (MemoryStore m = MemoryStore.mount("root-one-byte").chunk(1)) {
            m.put("zmumu.root", Files.readAllBytes(PhysicsData.root("uproot-Zmumu.root")));
            try (RootDataset d = new RootDataset(List.of(m.location("zmumu.root")), "events", List.of("E1", "Q1"));
                 RootFile f = RootFile.open(m.location("zmumu.root")); RootTable t = f.table("events")) {
                assertEquals(2304, d.size());
                assertEquals(local("uproot-Zmumu.root", "events"), values(t));
            }
        }
    }
}
