package dev.stoker.formats.tokens;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.DType;
import dev.stoker.ErrorPolicy;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.StreamingDataset;
import dev.stoker.formats.text.TextStream;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * NOTE [Window cache]: a packed stream with its windows kept gives the batches of the stream
 * without them, epoch after epoch, in this loader and a later one; only a shard packed to its
 * end is kept; a damaged file or one of other bytes is not used.
 */
class WindowCacheTest {
    @TempDir
    Path tmp;

    private Path text(String name, int docs, int salt) throws IOException {
        Path p = tmp.resolve(name);
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < docs; i++) {
            b.append("{\"text\": \"document ").append(i * 7 + salt).append(" says ").append("abc é ".repeat(i % 9))
                    .append("\"}\n");
        }
        Files.writeString(p, b.toString(), StandardCharsets.UTF_8);
        return p;
    }

    private record Setup(TextStream text, Pack pack, StreamingDataset<Pack.Window> packed) {
        static Setup of(Path file, Tokenizer t) throws IOException {
            return of(file, t, 700);
        }

        static Setup of(Path file, Tokenizer t, long shardBytes) throws IOException {
            Pack pack = new Pack(t, 32);
            TextStream text = new TextStream(List.of(file), "text", shardBytes);
            return new Setup(text, pack, text.through(new Tokenize(t).andThen(pack)));
        }

        WindowCache cached(Path folder) throws IOException {
            return new WindowCache(packed, pack, folder, text::digest);
        }
    }

    /** Every epoch's batches as lists of tokens. */
    private static List<List<Long>> epochs(StreamingDataset<Pack.Window> data, Pack pack, int epochs, int workers,
                                           ErrorPolicy policy) {
        List<List<Long>> out = new ArrayList<>();
        LoaderBuilder b = Loader.builder(data, pack.collator(DType.INT64)).batchSize(3).seed(5).shuffle()
                .shuffleWindow(5).errorPolicy(policy);
        try (Loader l = (workers > 0 ? b.workers(workers) : b).build()) {
            for (int e = 0; e < epochs; e++) {
                for (Batch batch : l) {
                    out.add(tokens(batch));
                }
            }
        }
        return out;
    }

    private static List<Long> tokens(Batch batch) {
        List<Long> v = new ArrayList<>();
        for (long i = 0; i < batch.size() * 32L; i++) {
            v.add(batch.data(0).getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i));
        }
        return v;
    }

    private static List<Path> files(Path folder) throws IOException {
        try (Stream<Path> s = Files.list(folder)) {
            return s.sorted().toList();
        }
    }

    @Test
    void keptWindowsGiveTheBatchesOfTheStreamWithoutThemForEveryTokenizer() throws IOException {
        Path file = text("docs.jsonl", 300, 0);
        for (String name : new String[] {"bytes", "r50k_base"}) {
            Setup s = Setup.of(file, Tokenizer.named(name));
            List<List<Long>> ref = epochs(s.packed, s.pack, 3, 2, ErrorPolicy.FAIL);
            assertTrue(ref.size() > 20, name + ": " + ref.size() + " batches");
            Path folder = tmp.resolve("w-" + name);
            WindowCache c = s.cached(folder);
            assertEquals(ref, epochs(c, s.pack, 3, 2, ErrorPolicy.FAIL), name);
            assertEquals(c.shards(), c.kept(), "each shard kept once");
            assertEquals(2L * c.shards(), c.hits(), "read back by epochs 2 and 3");
            assertEquals(c.shards(), files(folder).size(), "a file a shard, no temporary left");
            // a later loader (a later run, another process) reads every shard back, with any worker count
            WindowCache later = s.cached(folder);
            assertEquals(ref, epochs(later, s.pack, 3, 0, ErrorPolicy.FAIL));
            assertEquals(3L * c.shards(), later.hits());
            assertEquals(0, later.kept());
        }
    }

    @Test
    void onlyAShardPackedToItsEndIsKept() throws IOException {
        Path file = text("docs.jsonl", 300, 0);
        Setup s = Setup.of(file, Tokenizer.named("bytes"));
        List<List<Long>> ref = epochs(s.packed, s.pack, 2, 0, ErrorPolicy.FAIL);
        Path folder = tmp.resolve("w");
        WindowCache c = s.cached(folder);
        try (Loader l = Loader.builder(c, s.pack.collator(DType.INT64)).batchSize(3).seed(5).shuffle()
                .shuffleWindowBytes(0).build()) {
            var it = l.iterator();
            it.next(); // no workers, stream order: the first shard is open, partly read
        }
        assertEquals(0, c.kept());
        assertEquals(List.of(), files(folder), "an epoch cut short keeps nothing, leaves nothing");
        assertEquals(ref, epochs(c, s.pack, 2, 0, ErrorPolicy.FAIL));
        assertEquals(c.shards(), c.kept());
    }

    @Test
    void aShardWithASkippedRecordIsPackedAgainEachEpoch() throws IOException {
        Path file = text("docs.jsonl", 200, 0);
        String t = Files.readString(file);
        int at = t.indexOf("{\"text\": \"document 490 ");
        Files.writeString(file, t.substring(0, at) + "{oops\n" + t.substring(at));
        Setup s = Setup.of(file, Tokenizer.named("bytes"));
        List<List<Long>> ref = epochs(s.packed, s.pack, 2, 0, ErrorPolicy.SKIP_SAMPLE);
        WindowCache c = s.cached(tmp.resolve("w"));
        assertEquals(ref, epochs(c, s.pack, 2, 0, ErrorPolicy.SKIP_SAMPLE));
        assertEquals(c.shards() - 1, c.kept(), "all but the shard with the bad line");
        assertEquals(c.shards() - 1, files(tmp.resolve("w")).size());
    }

    @Test
    void aDamagedFileOrOneOfOtherBytesIsNotUsed() throws IOException {
        Path file = text("docs.jsonl", 3000, 0); // past the fingerprint's two 64 KiB ends
        Setup s = Setup.of(file, Tokenizer.named("r50k_base"), 8192);
        List<List<Long>> ref = epochs(s.packed, s.pack, 1, 0, ErrorPolicy.FAIL);
        Path folder = tmp.resolve("w");
        epochs(s.cached(folder), s.pack, 1, 0, ErrorPolicy.FAIL);
        Path first = s.cached(folder).file(0);
        byte[] b = Files.readAllBytes(first);
        b[100] ^= 1; // a window's token
        Files.write(first, b);
        WindowCache again = s.cached(folder);
        assertEquals(ref, epochs(again, s.pack, 1, 0, ErrorPolicy.FAIL));
        assertEquals(1, again.dropped());
        assertEquals(1, again.kept(), "packed and kept again");
        // the text rewritten in place, its size, its ends and so its fingerprint the same: the
        // windows of the old bytes are not served
        String t = Files.readString(file);
        int at = t.indexOf("document 10500 ");
        Files.writeString(file, t.substring(0, at) + "document 10501 " + t.substring(at + 15));
        Setup changed = Setup.of(file, Tokenizer.named("r50k_base"), 8192);
        assertEquals(s.packed.fingerprint(), changed.packed.fingerprint(), "a fingerprint of the files' ends");
        List<List<Long>> fresh = epochs(changed.packed, changed.pack, 1, 0, ErrorPolicy.FAIL);
        assertNotEquals(ref, fresh);
        WindowCache stale = changed.cached(folder);
        assertEquals(fresh, epochs(stale, changed.pack, 1, 0, ErrorPolicy.FAIL));
        assertEquals(1, stale.dropped(), "the changed shard's file");
        // a file cut short is not this cache
        Path f0 = stale.file(0);
        Files.write(f0, java.util.Arrays.copyOf(Files.readAllBytes(f0), 40));
        WindowCache cut = changed.cached(folder);
        assertEquals(fresh, epochs(cut, changed.pack, 1, 0, ErrorPolicy.FAIL));
        assertEquals(1, cut.dropped());
    }

    /** Every check is made when a file is opened, before its first window: a file that fails one is packed again, never a failed run. */
    @Test
    void aFileWhoseFooterMiscountsItsWindowsOrWhoseRecordsDoNotParseIsPackedAgain() throws IOException {
        Path file = text("docs.jsonl", 300, 0);
        for (String name : new String[] {"bytes", "r50k_base"}) {
            Setup s = Setup.of(file, Tokenizer.named(name));
            List<List<Long>> ref = epochs(s.packed, s.pack, 1, 0, ErrorPolicy.FAIL);
            Path folder = tmp.resolve("count-" + name);
            epochs(s.cached(folder), s.pack, 1, 0, ErrorPolicy.FAIL);
            Path f0 = s.cached(folder).file(0);
            byte[] good = Files.readAllBytes(f0);
            ByteBuffer footer = ByteBuffer.wrap(good).order(ByteOrder.LITTLE_ENDIAN);
            long count = footer.getLong(good.length - 16);
            for (long wrong : new long[] {count + 1, count - 1}) { // the windows' CRC still right
                byte[] b = good.clone();
                ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(b.length - 16, wrong);
                Files.write(f0, b);
                WindowCache again = s.cached(folder);
                assertEquals(ref, epochs(again, s.pack, 1, 0, ErrorPolicy.FAIL), name + ", a footer of " + wrong);
                assertEquals(1, again.dropped());
                assertEquals(1, again.kept(), "packed and kept again");
                assertTrue(java.util.Arrays.equals(good, Files.readAllBytes(f0)), "the same file again");
            }
            if (name.equals("bytes")) { // a record of more end-of-text positions than a window holds, under a right CRC
                byte[] b = good.clone();
                ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
                bb.putInt(64, 33);
                java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
                crc.update(b, 64, b.length - 64 - 16);
                bb.putInt(b.length - 8, (int) crc.getValue());
                Files.write(f0, b);
                WindowCache again = s.cached(folder);
                assertEquals(ref, epochs(again, s.pack, 1, 0, ErrorPolicy.FAIL), name + ", a record that does not parse");
                assertEquals(1, again.dropped());
            }
        }
    }

    /**
     * A file cut short while a pass reads it (another program's doing: Stoker writes a file whole
     * and renames it into place) is dropped, and its shard packed again from the source past the
     * windows handed out: the batches are those of the stream without a cache.
     */
    @Test
    void aFileCutShortWhileReadIsPackedAgainFromItsShard() throws IOException {
        Path file = text("docs.jsonl", 8000, 0);
        Setup s = Setup.of(file, Tokenizer.named("bytes"), 1L << 30); // one shard, of more than a read's piece
        List<List<Long>> ref = epochs(s.packed, s.pack, 1, 0, ErrorPolicy.FAIL);
        Path folder = tmp.resolve("w");
        epochs(s.cached(folder), s.pack, 1, 0, ErrorPolicy.FAIL);
        WindowCache c = s.cached(folder);
        Path f0 = c.file(0);
        assertTrue(Files.size(f0) > 1 << 18, Files.size(f0) + " bytes");
        List<List<Long>> got = new ArrayList<>();
        try (Loader l = Loader.builder(c, s.pack.collator(DType.INT64)).batchSize(3).seed(5).shuffle()
                .shuffleWindow(5).build()) { // no workers: only the batches asked for are made
            var it = l.iterator();
            got.add(tokens(it.next()));
            try (var ch = java.nio.channels.FileChannel.open(f0, java.nio.file.StandardOpenOption.WRITE)) {
                ch.truncate(100_000);
            }
            while (it.hasNext()) {
                got.add(tokens(it.next()));
            }
        }
        assertEquals(ref, got);
        assertEquals(1, c.hits());
        assertEquals(1, c.dropped());
        assertEquals(1, c.kept(), "packed and kept again");
        assertEquals(ref, epochs(s.cached(folder), s.pack, 1, 0, ErrorPolicy.FAIL), "read back");
    }

    @Test
    void aStreamWithoutAFingerprintIsRefused() {
        Pack pack = new Pack(Tokenizer.named("bytes"), 8);
        StreamingDataset<Pack.Window> none = new StreamingDataset<>() {
            @Override
            public int shards() {
                return 0;
            }

            @Override
            public ShardReader<Pack.Window> open(int shard) {
                throw new UnsupportedOperationException();
            }
        };
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new WindowCache(none, pack, tmp.resolve("w"), shard -> 0));
        assertTrue(e.getMessage().contains("gives no fingerprint"), e.getMessage());
    }
}
