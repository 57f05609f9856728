package dev.stoker.sources;

import dev.stoker.Loader;
import dev.stoker.root.RootDataset;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The entries of a tree (a TTree or an RNTuple) in one or more CERN ROOT files (local paths, or
 * http(s):// or s3:// URLs read by ranged requests), one after the other in file order, each
 * selected branch a field: scalars and fixed-size arrays as tensors, variable-length ones
 * ({@code T[n]}, {@code std::vector<T>}) as ragged fields. Shuffled, the clusters come in a random
 * order and the entries of a window of them mixed, the window as many clusters as fit in half the
 * cache (NOTE [Mixing] in {@code RootDataset}): each cluster is decompressed once a pass.
 *
 * @param paths    the files, in order; a shard pattern ({@code run-{0..9}.root}) names several
 * @param tree     the tree's name, {@code dir/name} in a subdirectory
 * @param branches globs selecting branches (empty: every branch Stoker reads); a selected branch
 *                 Stoker does not read (a string, an object, a nested container) is an error naming it
 * @param cacheMb  decoded clusters held at once, in MB
 */
public record Root(List<String> paths, String tree, List<String> branches, long cacheMb) implements SourceSpec {
    public Root {
        paths = paths == null ? List.of() : List.copyOf(paths);
        branches = branches == null ? List.of() : List.copyOf(branches);
        SpecException.atLeast("cache_mb", cacheMb, 1);
    }

    /** Every readable branch of {@code tree} in the files {@code paths}, 256 MB of decoded clusters. */
    public static Root of(List<String> paths, String tree) {
        return new Root(paths, tree, List.of(), 256);
    }

    /** The dataset this spec reads, opened on its own (the caller closes it). */
    public RootDataset dataset() throws IOException {
        if (paths.isEmpty()) {
            throw new SpecException("paths", "must name the ROOT files (one or more)");
        }
        if (tree == null || tree.isBlank()) {
            throw new SpecException("tree", "must name the tree (a TTree or an RNTuple), e.g. events or dir/events");
        }
        List<String> files = new ArrayList<>();
        for (String p : paths) {
            try {
                files.addAll(dev.stoker.storage.ShardPattern.expand(List.of(p)));
            } catch (IllegalArgumentException e) {
                throw new SpecException("paths", e.getMessage());
            }
        }
        try {
            return new RootDataset(files, tree, branches, cacheMb << 20);
        } catch (IllegalArgumentException e) {
            // no such tree or branch, a refused branch, files that do not share the branches
            throw new SpecException(null, e.getMessage());
        }
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        RootDataset data = dataset();
        return Recipe.open(kind(), r -> {
            r.hold(data);
            if (loader.order().equals("shuffle")) { // NOTE [Mixing] in RootDataset
                int window = data.mixingWindow();
                dev.stoker.Sampler mixing = dev.stoker.Sampler.blockShuffle(data.clusterStarts(), window);
                r.sampler(mixing);
                double files = data.filesPerBatch(mixing.order(data.size(), loader.orderSeed(), 0), loader.batchSize(), 200);
                r.report(() -> String.format(java.util.Locale.ROOT, "root: shuffled by clusters, %d at a time (%d in all): "
                        + "a batch draws from %.1f of the %d files on average", window, data.clusterStarts().length - 1, files,
                        data.files()));
            }
            r.base(() -> Loader.builder(data));
        });
    }
}
