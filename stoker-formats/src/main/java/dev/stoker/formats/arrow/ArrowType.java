package dev.stoker.formats.arrow;

import dev.stoker.DType;
import java.util.List;

/**
 * A field's Arrow type, as far as Stoker reads it: its path (for errors) and its own name, its kind, element type or size, children, and
 * dictionary encoding. Types Stoker does not read (dates, times, decimals, unions, maps, views)
 * are refused by name when the schema is read.
 */
record ArrowType(String name, String field, Kind kind, DType dtype, long size, List<ArrowType> children, Dictionary dictionary) {
    enum Kind { NULL, BOOL, INT, FLOAT, UTF8, LARGE_UTF8, BINARY, LARGE_BINARY, FIXED_BINARY, LIST, LARGE_LIST, FIXED_LIST, STRUCT }

    /** A dictionary encoding: the dictionary's id and the type of its keys. */
    record Dictionary(long id, DType index) {
    }

    /** Buffers the kind has after its validity bitmap. */
    int buffers() {
        if (dictionary != null) {
            return 1;
        }
        return switch (kind) {
            case NULL, STRUCT, FIXED_LIST -> 0;
            case BOOL, INT, FLOAT, FIXED_BINARY, LIST, LARGE_LIST -> 1;
            case UTF8, LARGE_UTF8, BINARY, LARGE_BINARY -> 2;
        };
    }

    /** Whether the kind has a validity bitmap buffer (every kind but null). */
    boolean hasValidity() {
        return kind != Kind.NULL;
    }
}
