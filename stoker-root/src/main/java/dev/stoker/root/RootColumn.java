package dev.stoker.root;

import dev.stoker.DType;

/**
 * A numeric column of a {@link RootTable}: {@code fixed} elements of {@code dtype} an entry (1 for
 * a scalar, N for a fixed-size array {@code T[N]}), or, when {@code ragged}, a variable number of
 * them an entry ({@code fixed} is then 1). {@code type} is ROOT's type name as uproot shows it,
 * e.g. {@code float}, {@code int32_t[3]}, {@code float[]}, {@code std::vector<float>}.
 */
public record RootColumn(String name, DType dtype, int fixed, boolean ragged, String type) {
}
