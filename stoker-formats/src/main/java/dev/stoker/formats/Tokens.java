package dev.stoker.formats;

import dev.stoker.DType;
import java.lang.foreign.MemorySegment;

/**
 * A flat array of token ids in memory (usually a mapping): a raw {@code .bin}, a one-dimensional
 * {@code .npy}, or the data of a Megatron indexed dataset. Little-endian.
 */
public interface Tokens {

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
