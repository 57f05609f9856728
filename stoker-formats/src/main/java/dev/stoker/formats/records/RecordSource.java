package dev.stoker.formats.records;

import dev.stoker.formats.io.Parts;
import dev.stoker.formats.io.RecordJson;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * A file format whose samples are records of named values (MDS, TFRecord, ArrayRecord): record
 * {@code i} read by {@link #get}, safe from several threads at once. A record maps each field's
 * name, in the format's order, to its value: a {@link Long}, {@link java.math.BigInteger},
 * {@link Double}, {@link Float}, {@link Boolean}, {@link String},
 * {@code byte[]}, {@link Tensor}, {@link Numbers}, {@link JsonText}, a {@link List} of values, a {@link Map}
 * (a struct), or null.
 *
 * <p>NOTE [Records]: a record format is read in two ways. {@code stoker cat} prints each record as
 * it is ({@link RecordJson}); the loader batches records through {@link RecordDataset}, which
 * flattens structs to {@code a.b} fields and needs every record to have the first one's fields,
 * types and shapes. Each format's reader validates what it reads (offsets, lengths, checksums)
 * and names the file and the record or byte offset of what it cannot read.
 */
public interface RecordSource extends AutoCloseable {

    long size();

    /** Record {@code index}, in {@code [0, size())}. */
    Map<String, Object> get(long index) throws IOException;

    /** The file or folder read, for errors. */
    String name();

    /** Where record {@code index} lives, for errors: its file and its index there. */
    default String where(long index) {
        return name() + " record " + index;
    }

    /**
     * The element type of field {@code field} (dotted for a struct's member) when the format
     * declares it a list of numbers of any length (an Arrow {@code list<int32>}), or null: the
     * loader then batches it as variable-length bytes, its elements' little-endian bytes one after
     * the other, rather than by the first record's length.
     */
    default dev.stoker.DType raggedType(String field) {
        return null;
    }

    /**
     * The bytes of field {@code field}'s value in every record, when each is stored as its
     * little-endian bytes, fixed in size and never null, so that {@link #copyFixed} can copy them
     * straight into a batch (an Arrow fixed-width column, an MDS fixed-size column); else -1.
     */
    default long fixedWidth(String field) {
        return -1;
    }

    /**
     * Copies field {@code field}'s values of records {@code [index, index + count)}, {@link #fixedWidth}
     * bytes each, one after the other into {@code dst} at {@code at}. Only for a field whose
     * {@code fixedWidth} is not -1.
     */
    default void copyFixed(String field, long index, int count, java.lang.foreign.MemorySegment dst, long at) throws IOException {
        throw new UnsupportedOperationException(name() + ": field '" + field + "' is not stored at a fixed width");
    }

    /**
     * Files or chunks left out when this was opened because they could not be read, under a skip
     * policy (NOTE [Unreadable shards] in {@link dev.stoker.formats.io.Unreadable}).
     */
    default long shardsLeftOut() {
        return 0;
    }

    /** A fingerprint of the content (NOTE in {@link dev.stoker.Dataset#fingerprint()}); 0: none. */
    default long fingerprint() {
        return 0;
    }

    @Override
    default void close() throws IOException {
    }

    /** The value at {@code path} (a struct's member's names in turn) of {@code record}, or null. */
    static Object lookup(Map<String, ?> record, String[] path) {
        Object v = record;
        for (String k : path) {
            if (!(v instanceof Map<?, ?> m)) {
                return null;
            }
            v = m.get(k);
        }
        return v;
    }

    /** The sources one after the other. */
    static RecordSource concat(List<? extends RecordSource> parts) {
        return concat(parts, 0);
    }

    /** The sources one after the other, {@code leftOut} more having been left out as unreadable. */
    static RecordSource concat(List<? extends RecordSource> parts, long leftOut) {
        if (parts.size() == 1 && leftOut == 0) {
            return parts.get(0);
        }
        return new Concat(List.copyOf(parts), leftOut);
    }

    /** Several sources read as one, in order. */
    final class Concat implements RecordSource {
        private final List<RecordSource> parts;
        private final long leftOut;
        private final long[] starts;
        /** Per field, {@link #fixedWidth}: asked for every run of records copied, found once. */
        private final java.util.concurrent.ConcurrentHashMap<String, Long> widths = new java.util.concurrent.ConcurrentHashMap<>();

        Concat(List<RecordSource> parts, long leftOut) {
            this.parts = parts;
            this.leftOut = leftOut;
            this.starts = new long[parts.size() + 1];
            for (int i = 0; i < parts.size(); i++) {
                starts[i + 1] = starts[i] + parts.get(i).size();
            }
        }

        private int part(long index) {
            return Parts.of(starts, index);
        }

        @Override
        public long size() {
            return starts[parts.size()];
        }

        @Override
        public Map<String, Object> get(long index) throws IOException {
            int p = part(index);
            return parts.get(p).get(index - starts[p]);
        }

        @Override
        public String where(long index) {
            int p = part(index);
            return parts.get(p).where(index - starts[p]);
        }

        @Override
        public String name() {
            return parts.get(0).name() + " and " + (parts.size() - 1) + " more";
        }

        @Override
        public dev.stoker.DType raggedType(String field) {
            return parts.get(0).raggedType(field);
        }

        @Override
        public long fixedWidth(String field) {
            return widths.computeIfAbsent(field, f -> {
                long w = parts.get(0).fixedWidth(f);
                for (RecordSource p : parts) {
                    if (p.fixedWidth(f) != w) {
                        return -1L;
                    }
                }
                return w;
            });
        }

        @Override
        public void copyFixed(String field, long index, int count, java.lang.foreign.MemorySegment dst, long at) throws IOException {
            long width = fixedWidth(field);
            while (count > 0) {
                int p = part(index);
                int n = (int) Math.min(count, starts[p + 1] - index);
                parts.get(p).copyFixed(field, index - starts[p], n, dst, at);
                index += n;
                count -= n;
                at += n * width;
            }
        }

        @Override
        public long shardsLeftOut() {
            long n = leftOut;
            for (RecordSource p : parts) {
                n += p.shardsLeftOut();
            }
            return n;
        }

        @Override
        public long fingerprint() {
            long f = 0;
            for (RecordSource p : parts) {
                f = f * 0x9E3779B97F4A7C15L + p.fingerprint();
            }
            return f;
        }

        @Override
        public void close() throws IOException {
            IOException first = null;
            for (RecordSource p : parts) {
                try {
                    p.close();
                } catch (IOException e) {
                    if (first == null) {
                        first = e;
                    }
                }
            }
            if (first != null) {
                throw first;
            }
        }
    }
}
