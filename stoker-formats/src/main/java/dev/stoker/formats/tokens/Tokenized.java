package dev.stoker.formats.tokens;

/**
 * One document's token ids, as {@link Tokenize} hands them to {@link Pack}: the bytes
 * tokenizer's are the document's UTF-8 bytes themselves (no copy, no widening: borrowed when
 * the document was), other tokenizers' are ids. No end-of-text id: packing puts one after each
 * document.
 */
public final class Tokenized implements dev.stoker.Sized {
    private byte[] bytes;
    private int offset;
    private int length;
    private int[] ids;

    private Tokenized() {
    }

    /** The bytes tokenizer's ids: {@code bytes[offset, offset + length)}, each unsigned. */
    public static Tokenized ofBytes(byte[] bytes, int offset, int length) {
        return new Tokenized().borrow(bytes, offset, length);
    }

    /** A BPE tokenizer's ids. */
    public static Tokenized ofIds(int[] ids) {
        Tokenized t = new Tokenized();
        t.ids = ids;
        t.length = ids.length;
        return t;
    }

    /** Made a view of other bytes: a borrowed value moving on. */
    Tokenized borrow(byte[] bytes, int offset, int length) {
        this.bytes = bytes;
        this.offset = offset;
        this.length = length;
        return this;
    }

    /** Whether the ids are bytes ({@link #bytes()}) rather than {@link #ids()}. */
    public boolean isBytes() {
        return bytes != null;
    }

    public byte[] bytes() {
        return bytes;
    }

    public int offset() {
        return offset;
    }

    /** How many ids. */
    public int length() {
        return length;
    }

    public int[] ids() {
        return ids;
    }

    @Override
    public long byteSize() {
        return bytes != null ? length : 4L * length;
    }
}
