package dev.stoker.sources;

import dev.stoker.Loader;
import dev.stoker.root.RootDataset;
import dev.stoker.sources.Schema.Format;
import dev.stoker.sources.Schema.Min;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The entries of a tree (a TTree or an RNTuple) in one or more CERN ROOT files (local paths, or
 * http(s):// or s3:// URLs read by ranged requests), one after the other in file order, each
 * selected branch a field: scalars and fixed-size arrays as tensors, variable-length ones
 * ({@code T[n]}, {@code std::vector<T>}) as ragged fields. Shuffled, the clusters come in a random
 * order and the entries of a window of them mixed, the window as many clusters as fit in half the
 * cache (NOTE [Mixing] in {@code RootDataset}): each cluster is decompressed once a pass.
 *
 * <p>Labelled inputs: {@code groups} names several groups of files ({@code signal},
 * {@code background}); they are one dataset, group after group, with one more field
 * {@code label}, int64, the group's number in the order given. With {@code weights} (one a group),
 * an epoch draws the groups in those proportions instead, each group's entries in its own shuffled
 * order, a group drawn beyond its size passing through it again (NOTE [Group draws] in core).
 *
 * @param paths    the files, in order; a shard pattern ({@code run-{0..9}.root}) names several
 * @param tree     the tree's name, {@code dir/name} in a subdirectory
 * @param branches globs selecting branches (empty: every branch Stoker reads); a selected branch
 *                 Stoker does not read (a string, an object, a nested container) is an error naming it
 * @param decodedCacheMb  decoded clusters held at once, in MB
 * @param groups   groups of files by name, in label order (empty: {@code paths} without labels)
 * @param label    the name of the groups' label field
 * @param weights  each group's share of an epoch's draws (empty: every entry once an epoch)
 */
public record Root(List<String> paths, String tree, List<String> branches, @Min(1) long decodedCacheMb,
                   @Format("labelled") Map<String, List<String>> groups, String label,
                   @Format("weights") Map<String, Double> weights) implements SourceSpec {
    public Root {
        paths = paths == null ? List.of() : List.copyOf(paths);
        branches = branches == null ? List.of() : List.copyOf(branches);
        SpecException.atLeast("decoded_cache_mb", decodedCacheMb, 1);
        groups = groups == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(groups));
        label = label == null ? "label" : label;
        weights = weights == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(weights));
        if (!groups.isEmpty() && !paths.isEmpty()) {
            throw new SpecException("groups", "name the files either as paths or as groups, not both");
        }
        if (!weights.isEmpty() && groups.isEmpty()) {
            throw new SpecException("weights", "weigh groups of files: give groups ({'signal': [...], 'background': [...]})");
        }
        if (!weights.isEmpty() && !weights.keySet().equals(groups.keySet())) {
            throw new SpecException("weights", "must give one weight to each group " + groups.keySet() + ", got "
                    + weights.keySet());
        }
        for (var w : weights.entrySet()) {
            if (w.getValue() == null || !(w.getValue() >= 0) || w.getValue().isInfinite()) {
                throw new SpecException("weights", "group '" + w.getKey() + "' must have a finite weight >= 0, got " + w.getValue());
            }
        }
        if (!weights.isEmpty() && weights.values().stream().allMatch(w -> w == 0)) {
            throw new SpecException("weights", "must not all be 0");
        }
    }

    /** {@code tree} in the files {@code paths}, the branches {@code branches}, {@code decodedCacheMb} of decoded clusters. */
    public Root(List<String> paths, String tree, List<String> branches, long decodedCacheMb) {
        this(paths, tree, branches, decodedCacheMb, Map.of(), "label", Map.of());
    }

    /** Every readable branch of {@code tree} in the files {@code paths}, 256 MB of decoded clusters. */
    public static Root of(List<String> paths, String tree) {
        return new Root(paths, tree, List.of(), 256);
    }

    /** The dataset this spec reads, opened on its own (the caller closes it). */
    public RootDataset dataset() throws IOException {
        if (paths.isEmpty() && groups.isEmpty()) {
            throw new SpecException("paths", "must name the ROOT files (one or more), or groups of them");
        }
        if (tree == null || tree.isBlank()) {
            throw new SpecException("tree", "must name the tree (a TTree or an RNTuple), e.g. events or dir/events");
        }
        try {
            if (!groups.isEmpty()) {
                Map<String, List<String>> files = new LinkedHashMap<>();
                groups.forEach((name, given) -> files.put(name, expand("groups", given)));
                return RootDataset.labelled(files, label, tree, branches, decodedCacheMb << 20);
            }
            return new RootDataset(expand("paths", paths), tree, branches, decodedCacheMb << 20);
        } catch (IllegalArgumentException e) {
            // no such tree or branch, a refused branch, files that do not share the branches
            throw new SpecException(null, e.getMessage());
        }
    }

    private static List<String> expand(String option, List<String> given) {
        List<String> files = new ArrayList<>();
        for (String p : given) {
            try {
                files.addAll(dev.stoker.storage.ShardPattern.expand(List.of(p)));
            } catch (IllegalArgumentException e) {
                throw new SpecException(option, e.getMessage());
            }
        }
        return files;
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        RootDataset data = dataset();
        return Recipe.open(kind(), r -> {
            r.hold(data);
            boolean shuffle = loader.order() == LoaderSpec.Order.SHUFFLE;
            dev.stoker.Sampler order = null;
            if (!weights.isEmpty()) { // NOTE [Group draws]: each group in its own order, by clusters when shuffled
                List<String> names = data.groups();
                int window = Math.max(1, data.mixingWindow() / names.size());
                List<dev.stoker.Sampler> within = new ArrayList<>();
                for (int g = 0; g < names.size(); g++) {
                    within.add(shuffle ? dev.stoker.Sampler.blockShuffle(data.clusterStarts(g), window)
                            : dev.stoker.Sampler.sequential());
                }
                try {
                    order = dev.stoker.Sampler.groups(data.groupStarts(), names.stream().mapToDouble(weights::get).toArray(),
                            within);
                } catch (IllegalArgumentException e) { // a group of weight > 0 without entries
                    throw new SpecException("weights", e.getMessage() + " (the groups in order: " + names + ")");
                }
                r.report(() -> "root: groups " + names + " drawn in the proportions " + weights.values()
                        + (shuffle ? ", each shuffled by clusters, " + window + " at a time" : ", each in file order"));
            } else if (shuffle) { // NOTE [Mixing] in RootDataset
                int window = data.mixingWindow();
                order = dev.stoker.Sampler.blockShuffle(data.clusterStarts(), window);
                r.report(() -> String.format(java.util.Locale.ROOT, "root: shuffled by clusters, %d at a time (%d in all)",
                        window, data.clusterStarts().length - 1));
            }
            if (order != null) {
                r.sampler(order);
                double files = data.filesPerBatch(order.order(data.size(), loader.orderSeed(), 0), loader.batchSize(), 200);
                r.figure("filesPerBatch", files);
                r.report(() -> String.format(java.util.Locale.ROOT, "root: a batch draws from %.1f of the %d files on average",
                        files, data.files()));
            }
            r.base(() -> Loader.builder(data));
        });
    }
}
