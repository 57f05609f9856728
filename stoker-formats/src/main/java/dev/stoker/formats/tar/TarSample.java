package dev.stoker.formats.tar;

import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * One WebDataset sample: the members of a tar shard that share a key. {@code fields} maps each
 * field name (the member's file name after its first dot, lower-cased, e.g. {@code jpg},
 * {@code cls}, {@code seg.png}) to its bytes, in archive order. For a random-access shard the
 * bytes are slices of the mapped file; do not keep them past the shard's life.
 */
public record TarSample(String key, String url, Map<String, MemorySegment> fields) implements dev.stoker.Sized {

    /** The bytes of its fields (and key), as a shuffle window bounded in bytes counts them. */
    @Override
    public long byteSize() {
        long n = key.length();
        for (MemorySegment f : fields.values()) {
            n += f.byteSize();
        }
        return n;
    }

    /** The bytes of a field; an exception names the sample and the fields it has. */
    public MemorySegment field(String name) {
        MemorySegment s = fields.get(name);
        if (s == null) {
            throw new IllegalArgumentException(url + ": sample '" + key + "' has no field '" + name + "' (it has "
                    + fields.keySet() + ")");
        }
        return s;
    }

    /**
     * WebDataset's split of a member path into key and field ({@code base_plus_ext}): the key is
     * the path up to the first dot of the file name, the field the rest; null when the file name
     * has no dot (such members belong to no sample).
     */
    static String[] split(String path) {
        int slash = path.lastIndexOf('/');
        int dot = path.indexOf('.', slash + 1);
        if (dot <= slash + 1 || dot == path.length() - 1) {
            return null;
        }
        return new String[] {path.substring(0, dot), path.substring(dot + 1).toLowerCase(java.util.Locale.ROOT)};
    }

    /** WebDataset skips top-level metadata members such as {@code __index__.json}. */
    static boolean isMeta(String path) {
        return path.indexOf('/') < 0 && path.startsWith("__");
    }
}
