package dev.stoker.formats.tokens;

import dev.stoker.DType;
import dev.stoker.formats.npy.NpyArray;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A flat array of token ids in memory (usually a mapping): a raw {@code .bin}, a one-dimensional
 * {@code .npy}, or the data of a Megatron indexed dataset. Little-endian.
 */
public interface Tokens {

    /**
     * A numpy array's elements as tokens: a one-dimensional little-endian integer array (an
     * {@link IllegalArgumentException} names the array and says what it is instead). The view
     * lives as long as the array.
     */
    static Tokens of(NpyArray a) {
        String name = a.name();
        if (a.shape().length != 1) {
            throw new IllegalArgumentException(name + ": token arrays are one-dimensional, this one has shape "
                    + Arrays.toString(a.shape()));
        }
        if (a.byteOrder() == ByteOrder.BIG_ENDIAN && a.dtype().byteSize() > 1) {
            throw new IllegalArgumentException(name + ": big-endian token arrays are not supported; numpy: arr.astype('<u2')");
        }
        TokenCopy.checkTokenType(a.dtype(), name);
        record View(long length, DType dtype, java.lang.foreign.MemorySegment segment, String name) implements Tokens {
        }
        return new View(a.elements(), a.dtype(), a.segment(), name);
    }

    /** Number of tokens. */
    long length();

    /** The element type: an integer type. */
    DType dtype();

    /** The tokens' bytes: {@code length() * dtype().byteSize()} of them. */
    MemorySegment segment();

    /** A name for errors, e.g. the file. */
    String name();

    /** Token {@code i} as a long (unsigned types widen without sign). */
    default long token(long i) {
        return TokenCopy.get(segment(), dtype(), i);
    }
}
