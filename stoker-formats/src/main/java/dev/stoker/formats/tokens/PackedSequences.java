package dev.stoker.formats.tokens;

import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.internal.Permutation;

/**
 * Documents of a Megatron indexed dataset packed into fixed-length samples across document
 * boundaries, as Megatron's GPT dataset does: the documents (sequences) are laid end to end in a
 * document order, each followed by a separator token (unless the data already ends documents
 * with one: pass {@code separator < 0}), and sample {@code i} is the {@code seqLen + 1} tokens
 * from {@code i * seqLen}: {@code x} and {@code y} shifted by one, int64 or int32.
 *
 * <p>The document order is fixed by {@code documentSeed} (a keyed permutation; negative keeps the
 * file's order); shuffle the samples per epoch with the loader's sampler. Memory: one long per
 * document (the packed offsets).
 */
public final class PackedSequences implements DirectDataset {
    private final Megatron data;
    private final int seqLen;
    private final long separator;
    private final DType out;
    private final long[] ends;
    private final Permutation order;
    private final long total;
    private final long size;
    private final Schema schema;

    public PackedSequences(Megatron data, int seqLen, long separator, long documentSeed, DType out) {
        if (seqLen < 1) {
            throw new IllegalArgumentException("seqLen must be >= 1, got " + seqLen);
        }
        if (out != DType.INT64 && out != DType.INT32) {
            throw new IllegalArgumentException("x and y are int64 or int32, not " + out.label());
        }
        TokenCopy.checkTokenType(data.dtype(), data.name());
        long docs = data.sequences();
        if (docs > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(data.name() + ": too many sequences to pack (" + docs + ")");
        }
        this.data = data;
        this.seqLen = seqLen;
        this.separator = separator;
        this.out = out;
        this.order = documentSeed >= 0 && docs > 0 ? new Permutation(docs, documentSeed) : null;
        this.ends = new long[(int) docs];
        long at = 0;
        int sep = separator >= 0 ? 1 : 0;
        for (int k = 0; k < docs; k++) {
            at += data.sequenceLength(document(k)) + sep;
            ends[k] = at;
        }
        this.total = at;
        this.size = total < seqLen + 1L ? 0 : (total - 1) / seqLen;
        this.schema = Schema.of(Field.tensor("x", out, seqLen), Field.tensor("y", out, seqLen));
    }

    private long document(long k) {
        return order == null ? k : order.apply(k);
    }

    /** Tokens in the packed stream, separators included. */
    public long packedTokens() {
        return total;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public Schema schema() {
        return schema;
    }

    @Override
    public String name() {
        return data.prefix().toString();
    }

    @Override
    public void read(long index, Row row) throws java.io.IOException {
        long s = index * seqLen;
        copyStream(s, seqLen, row, 0);
        copyStream(s + 1, seqLen, row, 1);
    }

    /** Copies packed tokens {@code [from, from + n)} into field {@code field} of the row. */
    private void copyStream(long from, long n, Row row, int field) throws java.io.IOException {
        int k = docAt(from);
        long width = out.byteSize();
        long dst = row.offset(field);
        long pos = from;
        long left = n;
        while (left > 0) {
            long docStart = k == 0 ? 0 : ends[k - 1];
            long doc = document(k);
            int len = data.sequenceLength(doc);
            long inDoc = pos - docStart;
            if (inDoc < len) {
                long take = Math.min(left, len - inDoc);
                TokenCopy.copy(data.segment(), data.dtype(), data.sequenceStart(doc) + inDoc, take, row.column(field), dst, out,
                        data.name());
                dst += take * width;
                pos += take;
                left -= take;
            } else {
                TokenCopy.fill(separator, 1, row.column(field), dst, out);
                dst += width;
                pos++;
                left--;
            }
            while (left > 0 && pos >= ends[k]) {
                k++; // past this document (and its separator); empty documents are skipped
            }
        }
    }

    /** The packed document holding stream position {@code p}. */
    private int docAt(long p) {
        int lo = 0;
        int hi = ends.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (p < ends[mid]) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }
}
