import dev.stoker.Batch;
import dev.stoker.Loader;
import dev.stoker.Padding;
import dev.stoker.Sampler;
import dev.stoker.root.RootDataset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The JVM side of the ROOT benchmark (what bench/root_stoker.py measures, without the Python
 * bridge): a Loader over a RootDataset of the JetClass-shaped trees, shuffled as the root source
 * shuffles (NOTE [Mixing] in RootDataset: a window of clusters at a time), batch 512, the 17
 * particle branches stacked and padded to [B, 128, 17] float32 with lengths, the jet floats and
 * label as they are. Each repeat is one epoch (or --batches batches of it); prints events/s a repeat,
 * the median, and the loader's stats. One loader serves every repeat, its decoded-cluster cache
 * (--decoded-cache-mb) kept across epochs; with --fresh each repeat opens a new dataset and loader, so every
 * repeat decompresses every basket it needs (the JVM stays warm: --warmup epochs run first, not
 * counted).
 *
 * Usage: java -cp 'stoker-cli/target/lib/*' bench/RootLoaderBench.java [--workers 2] [--repeats 3]
 *        [--decoded-cache-mb 256] [--batches N] [--fresh] [--warmup 0] FILE.root...
 */
public final class RootLoaderBench {
    static final String[] PARTICLES = {"part_px", "part_py", "part_pz", "part_energy", "part_deta", "part_dphi",
        "part_d0val", "part_d0err", "part_dzval", "part_dzerr", "part_charge", "part_isChargedHadron",
        "part_isNeutralHadron", "part_isPhoton", "part_isElectron", "part_isMuon", "part_pt"};

    public static void main(String[] args) throws Exception {
        int workers = 2;
        int repeats = 3;
        long cacheMb = 256;
        long batches = Long.MAX_VALUE;
        boolean fresh = false;
        int warmup = 0;
        List<String> files = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--workers" -> workers = Integer.parseInt(args[++i]);
                case "--repeats" -> repeats = Integer.parseInt(args[++i]);
                case "--decoded-cache-mb" -> cacheMb = Long.parseLong(args[++i]);
                case "--batches" -> batches = Long.parseLong(args[++i]);
                case "--fresh" -> fresh = true;
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                default -> files.add(args[i]);
            }
        }
        List<String> branches = new ArrayList<>(Arrays.asList(PARTICLES));
        branches.addAll(List.of("jet_pt", "jet_eta", "jet_energy", "label"));
        double[] rates = new double[repeats];
        Loader loader = null;
        RootDataset data = null;
        try {
            for (int r = -warmup; r < repeats; r++) {
                if (loader == null || fresh) {
                    if (loader != null) {
                        loader.close();
                        data.close();
                    }
                    data = new RootDataset(files, "tree", branches, cacheMb << 20);
                    // shuffled as the root source shuffles: clusters in a random order, a window of them at a time
                    Sampler mixing = Sampler.blockShuffle(data.clusterStarts(), data.mixingWindow());
                    loader = Loader.builder(data).batchSize(512).workers(workers).sampler(mixing).seed(1)
                            .padding(Padding.of().stack("particles", PARTICLES).pad("particles", 128).lengths(true)).build();
                }
                long t = System.nanoTime();
                long n = 0;
                long k = 0;
                for (Batch b : loader) {
                    n += b.size();
                    if (++k == batches) {
                        break;
                    }
                }
                double rate = n / ((System.nanoTime() - t) / 1e9);
                System.out.printf("%s %d: %d events, %.0f events/s%n", r < 0 ? "warm-up" : "repeat", r, n, rate);
                if (r >= 0) {
                    rates[r] = rate;
                }
            }
            double[] sorted = rates.clone();
            Arrays.sort(sorted);
            System.out.printf("{\"loader\": \"stoker-jvm\", \"workers\": %d, \"cacheMb\": %d, \"fresh\": %b, \"eventsPerSec\": %d, \"rates\": %s}%n",
                    workers, cacheMb, fresh, Math.round(sorted[repeats / 2]),
                    Arrays.toString(Arrays.stream(rates).mapToLong(Math::round).toArray()));
            System.out.println(loader.stats());
        } finally {
            if (loader != null) {
                loader.close();
                data.close();
            }
        }
    }
}
