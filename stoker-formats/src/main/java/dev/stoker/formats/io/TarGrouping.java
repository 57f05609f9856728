package dev.stoker.formats.io;

import dev.stoker.CorruptShardException;
import java.util.HashSet;
import java.util.Set;

/**
 * WebDataset's grouping of a shard's members into samples, one rule for every reader of a
 * shard (the index, the stream, {@code ls} and {@code inspect}): a member's key is its path up
 * to the first dot of its file name and its field the rest; consecutive members with one key
 * form a sample; a field repeated within a sample is an error; {@code __*} files and names
 * without a dot belong to no sample.
 */
public final class TarGrouping {
    private final String shard;
    private String key;
    private long keyAt;
    private final Set<String> fields = new HashSet<>();

    public TarGrouping(String shard) {
        this.shard = shard;
    }

    /** The member's key and field, or null when it belongs to no sample. */
    public static String[] keyAndField(TarReader.Member m) {
        return isMeta(m.name()) ? null : split(m.name());
    }

    /** Whether a member of key {@code k} starts a sample other than the one being grouped. */
    public boolean starts(String k) {
        return !k.equals(key);
    }

    /** Adds a member's field to the sample of its key, starting that sample if it is new. */
    public void add(String[] keyAndField, TarReader.Member m) throws CorruptShardException {
        if (starts(keyAndField[0])) {
            key = keyAndField[0];
            keyAt = m.headerOffset();
            fields.clear();
        }
        if (!fields.add(keyAndField[1])) {
            throw new CorruptShardException(shard, m.headerOffset(), "duplicate field '" + keyAndField[1] + "' in sample '"
                    + key + "' (which starts at byte " + keyAt + ")");
        }
    }

    /**
     * WebDataset's split of a member path into key and field ({@code base_plus_ext}): the key is
     * the path up to the first dot of the file name, the field the rest; null when the file name
     * has no dot (such members belong to no sample).
     */
    private static String[] split(String path) {
        int slash = path.lastIndexOf('/');
        int dot = path.indexOf('.', slash + 1);
        if (dot <= slash + 1 || dot == path.length() - 1) {
            return null;
        }
        return new String[] {path.substring(0, dot), path.substring(dot + 1).toLowerCase(java.util.Locale.ROOT)};
    }

    /** WebDataset skips top-level metadata members such as {@code __index__.json}. */
    private static boolean isMeta(String path) {
        return path.indexOf('/') < 0 && path.startsWith("__");
    }
}
