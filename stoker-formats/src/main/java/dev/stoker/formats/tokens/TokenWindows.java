package dev.stoker.formats.tokens;

import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.formats.io.Fingerprints;

/**
 * Windows of {@code seqLen + 1} tokens as training samples: field {@code x} holds the first
 * {@code seqLen} tokens and {@code y} the same shifted by one (the next-token targets), as
 * int64 (default) or int32, copied straight from the mapping into the batch.
 *
 * <ul>
 *   <li>{@link #disjoint}: window {@code i} starts at {@code i * seqLen}; shuffled with
 *       {@code Sampler.shuffle()}, every token is seen once per epoch.</li>
 *   <li>{@link #overlapping}: window {@code i} starts at token {@code i}; drawn with
 *       {@code Sampler.random(n)} this is nanoGPT's {@code get_batch} (random offsets with
 *       replacement).</li>
 * </ul>
 */
public final class TokenWindows implements DirectDataset {
    private final Tokens tokens;
    private final int seqLen;
    private final long stride;
    private final DType out;
    private final long size;
    private final Schema schema;
    private final DType type;

    private TokenWindows(Tokens tokens, int seqLen, long stride, DType out) {
        if (seqLen < 1) {
            throw new IllegalArgumentException("seqLen must be >= 1, got " + seqLen);
        }
        if (out != DType.INT64 && out != DType.INT32) {
            throw new IllegalArgumentException("x and y are int64 or int32, not " + out.label());
        }
        this.tokens = tokens;
        this.seqLen = seqLen;
        this.stride = stride;
        this.out = out;
        this.type = tokens.dtype();
        TokenCopy.checkTokenType(type, tokens.name());
        long n = tokens.length();
        this.size = n < seqLen + 1L ? 0 : (n - seqLen - 1) / stride + 1;
        this.schema = Schema.of(Field.tensor("x", out, seqLen), Field.tensor("y", out, seqLen));
    }

    /** Non-overlapping windows: every token in one window (and, as a target, once more). */
    public static TokenWindows disjoint(Tokens tokens, int seqLen, DType out) {
        return new TokenWindows(tokens, seqLen, seqLen, out);
    }

    /** A window at every token offset (for random sampling with replacement, as nanoGPT). */
    public static TokenWindows overlapping(Tokens tokens, int seqLen, DType out) {
        return new TokenWindows(tokens, seqLen, 1, out);
    }

    /** A hash of the tokens' bytes at both ends and their count, with the window's shape. */
    @Override
    public long fingerprint() {
        return Fingerprints.ends(tokens.segment()) ^ (long) seqLen << 48 ^ stride << 40;
    }

    public int seqLen() {
        return seqLen;
    }

    /** The first token of window {@code i}. */
    public long start(long i) {
        return i * stride;
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
        return tokens.name();
    }

    @Override
    public void read(long index, Row row) throws java.io.IOException {
        long s = index * stride;
        TokenCopy.copy(tokens.segment(), type, s, seqLen, row.column(0), row.offset(0), out, tokens.name());
        TokenCopy.copy(tokens.segment(), type, s + 1, seqLen, row.column(1), row.offset(1), out, tokens.name());
    }
}
