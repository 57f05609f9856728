package dev.stoker.root;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What a ROOT file holds, for {@code stoker inspect}: its trees (TTrees and RNTuples), their branches and baskets. */
public record RootInfo(String path, long bytes, String rootVersion, String compression, List<Tree> trees) {
    /** A tree: its path in the file, class, entries, clusters, the branches Stoker reads and those it does not. */
    public record Tree(String path, String className, long entries, int clusters, List<Branch> branches, Map<String, String> refused) {
    }

    /**
     * A branch Stoker reads: its name, ROOT's type, dtype, whether ragged, elements a fixed entry,
     * and its baskets and bytes on file (-1 where the tree does not say: an RNTuple's fields).
     */
    public record Branch(String name, String type, String dtype, boolean ragged, int fixed, long baskets, long bytes) {
    }

    /** Describes the file at {@code pathOrUrl} (a remote one by ranged reads). */
    public static RootInfo of(String pathOrUrl) throws IOException {
        try (RootFile f = RootFile.open(pathOrUrl)) {
            List<Tree> trees = new ArrayList<>();
            walk(f, f.directory(""), trees);
            int v = f.version();
            return new RootInfo(pathOrUrl, f.size(), v / 10000 + "." + String.format("%02d", v / 100 % 100) + "/"
                    + String.format("%02d", v % 100), compression(f.compression()), trees);
        }
    }

    private static void walk(RootFile f, Directory d, List<Tree> out) throws IOException {
        for (Key k : d.keys()) {
            String path = d.path().isEmpty() ? k.name() : d.path() + "/" + k.name();
            if (k.className().startsWith("TDirectory")) {
                walk(f, f.directory(path), out);
            } else if (k.className().equals("TTree") || k.className().startsWith("TNtuple") || k.className().endsWith("RNTuple")) {
                try (RootTable t = f.table(path)) {
                    List<Branch> branches = new ArrayList<>();
                    for (RootColumn c : t.columns()) {
                        long[] b = t instanceof TTreeTable tt ? tt.baskets(c) : new long[] {-1, -1};
                        branches.add(new Branch(c.name(), c.type(), c.dtype().label(), c.ragged(), c.fixed(), b[0], b[1]));
                    }
                    out.add(new Tree(path, k.className(), t.entries(), t.clusterStarts().length, branches, t.refused()));
                }
            }
        }
    }

    /** {@code fCompress} in words: {@code zlib level 1}, {@code lz4 level 4}, {@code none}. */
    static String compression(int c) {
        if (c == 0 || c % 100 == 0) {
            return "none";
        }
        String algorithm = switch (c < 100 ? 1 : c / 100) {
            case 1 -> "zlib";
            case 2 -> "lzma";
            case 3 -> "old ROOT";
            case 4 -> "lz4";
            case 5 -> "zstd";
            default -> "algorithm " + c / 100;
        };
        return algorithm + " level " + c % 100;
    }
}
