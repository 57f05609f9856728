package dev.stoker.formats.text;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A document of text, as {@link TextStream} reads it: its UTF-8 bytes, validated, at
 * {@link #offset()} of {@link #bytes()} for {@link #length()} bytes. A document from a reader's
 * {@code next()} owns its bytes; one from {@code nextBorrowed()} is a view of the reader's buffer,
 * valid until the reader's next call.
 */
public final class Document implements dev.stoker.Sized {
    private byte[] bytes;
    private int offset;
    private int length;

    /** A document of these UTF-8 bytes (not copied; not validated here). */
    public Document(byte[] utf8) {
        this(utf8, 0, utf8.length);
    }

    Document(byte[] bytes, int offset, int length) {
        set(bytes, offset, length);
    }

    /** This document, made a view of other bytes (a borrowed document moving on). */
    void set(byte[] bytes, int offset, int length) {
        this.bytes = bytes;
        this.offset = offset;
        this.length = length;
    }

    /** The array holding the document's UTF-8 bytes (not a copy: do not change it). */
    public byte[] bytes() {
        return bytes;
    }

    public int offset() {
        return offset;
    }

    /** The document's length in bytes. */
    public int length() {
        return length;
    }

    /** A copy of the document's UTF-8 bytes. */
    public byte[] toByteArray() {
        return Arrays.copyOfRange(bytes, offset, offset + length);
    }

    /** The document as a String (decoded on each call). */
    public String text() {
        return new String(bytes, offset, length, StandardCharsets.UTF_8);
    }

    @Override
    public long byteSize() {
        return length;
    }

    @Override
    public String toString() {
        return length <= 60 ? text() : new String(bytes, offset, 60, StandardCharsets.UTF_8) + "…";
    }
}
