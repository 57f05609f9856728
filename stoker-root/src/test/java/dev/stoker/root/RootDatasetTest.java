package dev.stoker.root;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.DType;
import dev.stoker.Loader;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class RootDatasetTest {
    static String path(String name) {
        return PhysicsData.root(name).toString();
    }

    /** Entry {@code i}'s bytes of column {@code c}, read straight from the table. */
    private static MemorySegment entry(RootTable t, RootColumn c, long i) throws IOException {
        return t.read(c, i, i + 1).values();
    }

    /**
     * Every entry of four files once (the same events, each file compressed another way), each
     * branch's bytes as the table reads them: with a cache that holds every cluster, and with one
     * that holds one at a time, so that three workers reading shuffled entries find clusters freed
     * under them and read them again.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(longs = {RootDataset.DEFAULT_CACHE_BYTES, 1})
    void everyEntryOfEveryBranchArrivesOnceThroughAShuffledLoader(long cacheBytes) throws IOException {
        String p = path("uproot-HZZ.root");
        List<String> four = List.of(p, path("uproot-HZZ-lz4.root"), path("uproot-HZZ-zstd.root"), path("uproot-HZZ-lzma.root"));
        try (RootDataset d = new RootDataset(four, "events", List.of(), cacheBytes);
             RootFile f = RootFile.open(p); RootTable t = f.table("events")) {
            assertEquals(4 * 2421, d.size());
            assertEquals(t.columns().size(), d.schema().size());
            assertTrue(d.schema().field(d.schema().indexOf("Jet_Px")).isRagged());
            assertEquals(DType.FLOAT32, d.schema().field(d.schema().indexOf("Jet_Px")).dtype());
            BitSet seen = new BitSet();
            try (Loader l = Loader.builder(d).batchSize(64).workers(3).shuffle().seed(7).build()) {
                for (Batch b : l) {
                    for (int r = 0; r < b.size(); r++) {
                        long i = b.index(r);
                        assertTrue(!seen.get((int) i), "entry " + i + " twice");
                        seen.set((int) i);
                        if (i % (cacheBytes == 1 ? 3 : 13) == 0) {
                            for (int k = 0; k < t.columns().size(); k++) {
                                RootColumn c = t.columns().get(k);
                                assertEquals(-1, entry(t, c, i % 2421).mismatch(b.bytes(k, r)), c.name() + " entry " + i);
                            }
                        }
                    }
                }
            }
            assertEquals(4 * 2421, seen.cardinality());
        }
    }

    @Test
    void severalFilesAreOneDatasetInFileOrder() throws IOException {
        try (RootDataset one = new RootDataset(List.of(path("uproot-HZZ.root")), "events", List.of("Muon_*", "NMuon"));
             RootDataset two = new RootDataset(List.of(path("uproot-HZZ.root"), path("uproot-HZZ-zstd.root")), "events",
                     List.of("Muon_*", "NMuon"))) {
            assertEquals(2 * one.size(), two.size());
            assertEquals(List.of("Muon_Px", "Muon_Py", "Muon_Pz", "Muon_E", "Muon_Charge", "Muon_Iso", "NMuon"), two.branches()); // tree order
            List<byte[]> first = digests(one);
            List<byte[]> both = digests(two);
            for (int i = 0; i < first.size(); i++) {
                assertArrayEquals(first.get(i), both.get(i));
                assertArrayEquals(first.get(i), both.get(i + first.size()));
            }
            assertNotEquals(one.fingerprint(), two.fingerprint());
        }
    }

    /**
     * NOTE [Mixing]: shuffled by clusters, a window of them at a time, every entry arrives once and
     * a batch draws from several files, where storage order draws from one; the window is bounded
     * by the cache.
     */
    @Test
    void aClusterShuffleVisitsEveryEntryOnceAndMixesTheFiles() throws IOException {
        List<String> four = List.of(path("uproot-HZZ.root"), path("uproot-HZZ-lz4.root"), path("uproot-HZZ-zstd.root"),
                path("uproot-HZZ-lzma.root"));
        try (RootDataset d = new RootDataset(four, "events", List.of("Muon_Px", "NMuon"), 1L << 20)) {
            long[] starts = d.clusterStarts();
            assertEquals(0, starts[0]);
            assertEquals(d.size(), starts[starts.length - 1]);
            int window = d.mixingWindow();
            assertTrue(window >= 1 && window <= starts.length - 1, "window " + window);
            dev.stoker.Sampler mixing = dev.stoker.Sampler.blockShuffle(starts, window);
            assertEquals(1.0, d.filesPerBatch(dev.stoker.Sampler.sequential().order(d.size(), 0, 0), 64, 1000), 0.1);
            assertTrue(d.filesPerBatch(mixing.order(d.size(), 3, 0), 64, 1000) > 1.5, "a shuffled batch mixes the files");
            BitSet seen = new BitSet();
            try (Loader l = Loader.builder(d).sampler(mixing).batchSize(64).workers(2).seed(3).build()) {
                for (Batch b : l) {
                    for (int r = 0; r < b.size(); r++) {
                        assertTrue(!seen.get((int) b.index(r)), "entry " + b.index(r) + " twice");
                        seen.set((int) b.index(r));
                    }
                }
            }
            assertEquals(d.size(), seen.cardinality());
        }
        try (RootDataset small = new RootDataset(four, "events", List.of(), 1L << 16)) {
            assertEquals(1, small.mixingWindow(), "a cache smaller than two clusters mixes one at a time");
        }
    }

    /**
     * NOTE [Entry-major]: told that the loader stacks the jets' fields, the dataset holds them
     * entry by entry; the stacked batches hold what the fields hold read one by one.
     */
    @Test
    void stackedFieldsHeldEntryByEntryHoldWhatTheFieldsHold() throws IOException {
        String p = path("uproot-HZZ.root");
        List<String> jets = List.of("Jet_Px", "Jet_Py", "Jet_Pz", "Jet_E");
        java.lang.foreign.ValueLayout.OfFloat f32 = java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED
                .withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
        List<String> expected = new ArrayList<>();
        List<String> stacked = new ArrayList<>();
        for (boolean pad : new boolean[] {false, true}) {
            try (RootDataset d = new RootDataset(List.of(p), "events", List.of("Jet_*", "NJet", "Muon_Px"), 1L << 20)) {
                dev.stoker.LoaderBuilder b = Loader.builder(d).sampler(dev.stoker.Sampler.blockShuffle(d.clusterStarts(), 2))
                        .batchSize(50).workers(2).seed(4);
                if (pad) {
                    b.padding(dev.stoker.Padding.of().stack("jets", jets).pad("jets", 3).lengths(true));
                }
                try (Loader l = b.build()) {
                    dev.stoker.Schema s = l.schema();
                    for (Batch batch : l) {
                        for (int r = 0; r < batch.size(); r++) {
                            float[] v = new float[12];
                            long n;
                            if (pad) {
                                MemorySegment.copy(batch.bytes(s.indexOf("jets"), r), f32, 0, v, 0, 12);
                                n = batch.data(s.indexOf("jets_len")).getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, r);
                            } else {
                                n = Math.min(3, batch.bytes(s.indexOf("Jet_Px"), r).byteSize() / 4);
                                for (int j = 0; j < 4; j++) {
                                    MemorySegment col = batch.bytes(s.indexOf(jets.get(j)), r);
                                    for (int e = 0; e < n; e++) {
                                        v[e * 4 + j] = col.getAtIndex(f32, e);
                                    }
                                }
                            }
                            (pad ? stacked : expected).add(batch.index(r) + ":" + n + ":" + java.util.Arrays.toString(v));
                        }
                    }
                }
            }
        }
        assertEquals(2421, stacked.size());
        assertEquals(expected, stacked);
    }

    private static List<byte[]> digests(RootDataset d) throws IOException {
        List<byte[]> out = new ArrayList<>();
        try (Loader l = Loader.builder(d).batchSize(1).build()) {
            for (Batch b : l) {
                java.security.MessageDigest md;
                try {
                    md = java.security.MessageDigest.getInstance("SHA-256");
                } catch (java.security.NoSuchAlgorithmException e) {
                    throw new AssertionError(e);
                }
                b.digest(md);
                out.add(md.digest());
            }
        }
        return out;
    }

    @Test
    void aSelectedRefusedBranchIsAnErrorNamingItsType() {
        String zmumu = path("uproot-Zmumu.root"); // outside the lambdas: without ../shared the test is skipped, not failed
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RootDataset(List.of(zmumu), "events", List.of("*")).close());
        assertTrue(e.getMessage().endsWith("branch 'Type' is char*, which Stoker does not read; leave it out of branches="),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new RootDataset(List.of(zmumu), "events", List.of("Nope*")).close());
        assertTrue(e.getMessage().contains("no branch of tree 'events' matches 'Nope*'"), e.getMessage());
    }

    @Test
    void splitClassMembersAreFieldsNamedByTheirPaths() throws IOException {
        try (RootDataset d = new RootDataset(List.of(path("uproot-small-evnt-tree-fullsplit.root")), "tree",
                List.of("evt/Array*", "evt/P3/*", "evt/StlVecU16", "evt/SliceF64"))) {
            assertEquals(List.of(10L), java.util.Arrays.stream(d.schema().field(d.schema().indexOf("evt.ArrayF32")).shape()).boxed().toList());
            assertEquals(DType.INT32, d.schema().field(d.schema().indexOf("evt.P3.P3.Px")).dtype());
            assertTrue(d.schema().field(d.schema().indexOf("evt.StlVecU16")).isRagged());
            assertTrue(d.schema().field(d.schema().indexOf("evt.SliceF64")).isRagged());
        }
    }

    @Test
    void filesThatDoNotShareTheBranchesAreRefused() {
        List<String> both = List.of(path("uproot-HZZ.root"), path("uproot-Zmumu.root")); // skipped without ../shared
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RootDataset(both, "events", List.of("NJet")).close());
        assertTrue(e.getMessage().contains("uproot-Zmumu.root: tree 'events' has no branch 'NJet'"), e.getMessage());
    }

    @Test
    void anEmptyTreeIsAnEmptyDataset() throws IOException {
        try (RootDataset d = new RootDataset(List.of(path("uproot-empty.root")), "tree", List.of())) {
            assertEquals(0, d.size());
        }
    }
}
