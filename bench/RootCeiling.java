import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.Inflater;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash64;
import net.jpountz.xxhash.XXHashFactory;

/**
 * The decompression ceiling of the ROOT benchmark: how fast the JVM decompresses the very baskets
 * the loader reads, and nothing else. Every TBasket key of the named branches in the given files is
 * read into memory first (no I/O is timed), then each repeat decompresses them all (ROOT's 9-byte
 * block headers; LZ4 blocks with their XXH64 checksum verified, as a reader must; zlib with one
 * reused {@link Inflater} a thread) on 1 thread and on the loader's worker count, baskets dealt
 * round-robin to threads. The figure is events/s: the files' entries over the time to decompress
 * the baskets that hold them (the baskets of the branches read cover every entry once), so it
 * compares directly with the loader's events/s. Same libraries as stoker-root: lz4-java's
 * fastestInstance() and java.util.zip.
 *
 * Keys are walked from fBEGIN to fEND (as bench/jetclass_ttree.py lays them out, and as ROOT does
 * in a file written once; a gap, a negative fNbytes, is stepped over).
 *
 * Usage (single-file source launch, JDK 22+):
 *   java -cp lz4-java.jar bench/RootCeiling.java --branches part_,n_part,jet_,label --threads 1,2 \
 *        --repeats 5 FILE.root...
 * A branch is selected when its name starts with one of the --branches prefixes. Prints one JSON
 * line per thread count.
 */
public final class RootCeiling {
    record Basket(String file, byte[] bytes, int keylen, int objlen) {
    }

    public static void main(String[] args) throws Exception {
        List<String> prefixes = List.of("");
        int[] threads = {1};
        int repeats = 5;
        List<String> files = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--branches" -> prefixes = List.of(args[++i].split(","));
                case "--threads" -> threads = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--repeats" -> repeats = Integer.parseInt(args[++i]);
                default -> files.add(args[i]);
            }
        }
        List<Basket> baskets = new ArrayList<>();
        long entries = 0;
        java.util.Map<String, Integer> codecs = new java.util.TreeMap<>();
        for (String f : files) {
            entries += load(f, prefixes, baskets);
        }
        long compressed = 0;
        long uncompressed = 0;
        for (Basket b : baskets) {
            compressed += b.bytes.length - b.keylen;
            uncompressed += b.objlen;
            String c = b.bytes.length - b.keylen == b.objlen ? "none"
                    : new String(b.bytes, b.keylen, 2, StandardCharsets.ISO_8859_1);
            codecs.merge(c, 1, Integer::sum);
        }
        String codec = codecs.toString().replace("=", ": ");
        for (int t : threads) {
            double[] rates = new double[repeats];
            for (int r = 0; r < repeats; r++) {
                rates[r] = entries / seconds(baskets, t);
            }
            double[] sorted = rates.clone();
            Arrays.sort(sorted);
            double median = sorted[repeats / 2];
            System.out.printf("{\"ceiling\": \"baskets by block kind %s\", \"threads\": %d, \"baskets\": %d, \"compressedMB\": %.1f, \"uncompressedMB\": %.1f,"
                            + " \"events\": %d, \"eventsPerSec\": %d, \"uncompressedMBPerSec\": %.0f, \"rates\": %s}%n",
                    codec, t, baskets.size(), compressed / 1e6, uncompressed / 1e6, entries, Math.round(median),
                    median * uncompressed / entries / 1e6, Arrays.toString(Arrays.stream(rates).mapToLong(Math::round).toArray()));
        }
    }

    /** Reads the selected branches' baskets of one file; returns the tree's entries (those of the n_part or first basket set). */
    static long load(String path, List<String> prefixes, List<Basket> out) throws IOException {
        try (FileChannel ch = FileChannel.open(Path.of(path), StandardOpenOption.READ)) {
            ByteBuffer all = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size()).order(ByteOrder.BIG_ENDIAN);
            if (all.getInt(0) != 0x726f6f74) {
                throw new IOException(path + ": not a ROOT file");
            }
            boolean large = all.getInt(4) >= 1000000;
            long begin = all.getInt(8);
            long end = large ? all.getLong(12) : all.getInt(12) & 0xFFFFFFFFL;
            long pos = begin;
            long entries = -1;
            java.util.Map<String, Long> perBranch = new java.util.HashMap<>();
            while (pos + 4 <= end) {
                int nbytes = all.getInt((int) pos);
                if (nbytes < 0) {
                    pos -= nbytes;
                    continue;
                }
                if (nbytes < 26 || pos + nbytes > end) {
                    throw new IOException(path + ": key at byte " + pos + " declares " + nbytes + " bytes");
                }
                ByteBuffer k = all.duplicate().position((int) pos);
                k.getInt();
                int version = k.getShort();
                int objlen = k.getInt();
                k.getInt();
                int keylen = k.getShort();
                k.getShort();
                k.position(k.position() + (version > 1000 ? 16 : 8));
                String cls = tstring(k);
                String name = tstring(k);
                if (cls.equals("TBasket") && prefixes.stream().anyMatch(name::startsWith)) {
                    ByteBuffer ext = all.duplicate().position((int) (pos + keylen - 19 + 10));
                    int nevBuf = ext.getInt();
                    perBranch.merge(name, (long) nevBuf, Long::sum);
                    byte[] bytes = new byte[nbytes];
                    all.get((int) pos, bytes);
                    out.add(new Basket(path, bytes, keylen, objlen));
                }
                pos += nbytes;
            }
            for (long n : perBranch.values()) {
                if (entries >= 0 && n != entries) {
                    throw new IOException(path + ": branches hold different entry counts " + perBranch);
                }
                entries = n;
            }
            return Math.max(entries, 0);
        }
    }

    static String tstring(ByteBuffer b) {
        int n = b.get() & 0xFF;
        if (n == 255) {
            n = b.getInt();
        }
        byte[] s = new byte[n];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }

    static double seconds(List<Basket> baskets, int threads) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            long t0 = System.nanoTime();
            List<Future<Long>> parts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                parts.add(pool.submit(() -> {
                    Worker w = new Worker();
                    long sum = 0;
                    for (int i = me; i < baskets.size(); i += threads) {
                        sum += w.decompress(baskets.get(i));
                    }
                    return sum;
                }));
            }
            long sink = 0;
            for (Future<Long> f : parts) {
                sink += f.get();
            }
            double s = (System.nanoTime() - t0) / 1e9;
            if (sink == 42) {
                System.out.print("");
            }
            return s;
        } finally {
            pool.shutdown();
        }
    }

    static final class Worker {
        final LZ4SafeDecompressor lz4 = LZ4Factory.fastestInstance().safeDecompressor();
        final XXHash64 xxh = XXHashFactory.fastestInstance().hash64();
        final Inflater inflater = new Inflater();
        byte[] out = new byte[1 << 20];

        /** Decompresses one basket's payload; returns a byte of it (so the work is not optimized away). */
        long decompress(Basket b) throws Exception {
            byte[] in = b.bytes;
            if (out.length < b.objlen) {
                out = new byte[b.objlen];
            }
            int pos = b.keylen;
            int at = 0;
            if (in.length - pos == b.objlen) {
                System.arraycopy(in, pos, out, 0, b.objlen);
                return out[0];
            }
            while (at < b.objlen) {
                int c = (in[pos + 3] & 0xFF) | (in[pos + 4] & 0xFF) << 8 | (in[pos + 5] & 0xFF) << 16;
                int u = (in[pos + 6] & 0xFF) | (in[pos + 7] & 0xFF) << 8 | (in[pos + 8] & 0xFF) << 16;
                int body = pos + 9;
                if (in[pos] == 'L' && in[pos + 1] == '4') {
                    long want = ByteBuffer.wrap(in, body, 8).getLong();
                    if (xxh.hash(in, body + 8, c - 8, 0) != want) {
                        throw new IOException(b.file + ": an LZ4 block fails its checksum");
                    }
                    int n = lz4.decompress(in, body + 8, c - 8, out, at, u);
                    if (n != u) {
                        throw new IOException(b.file + ": an LZ4 block gave " + n + " bytes, not " + u);
                    }
                } else if (in[pos] == 'Z' && in[pos + 1] == 'L') {
                    inflater.reset();
                    inflater.setInput(in, body, c);
                    int n = 0;
                    while (n < u && !inflater.finished()) {
                        n += inflater.inflate(out, at + n, u - n);
                    }
                    if (n != u) {
                        throw new IOException(b.file + ": a zlib block gave " + n + " bytes, not " + u);
                    }
                } else {
                    throw new IOException(b.file + ": a block of " + new String(in, pos, 2, StandardCharsets.ISO_8859_1)
                            + ", this measures ZL and L4");
                }
                at += u;
                pos = body + c;
            }
            return out[at - 1];
        }
    }
}
