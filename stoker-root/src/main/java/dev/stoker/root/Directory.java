package dev.stoker.root;

import java.util.List;

/**
 * A directory of a ROOT file: its path ({@code ""} for the top one, {@code "dir/sub"} below) and its
 * keys, in the file's order, the highest cycle of each name only.
 */
public record Directory(String path, List<Key> keys) {
    public Directory {
        keys = List.copyOf(keys);
    }

    /** The key named {@code name}, or null. */
    public Key key(String name) {
        for (Key k : keys) {
            if (k.name().equals(name)) {
                return k;
            }
        }
        return null;
    }
}
