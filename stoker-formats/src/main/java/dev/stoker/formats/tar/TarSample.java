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
}
