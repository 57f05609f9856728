package dev.stoker.formats.tokens;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.io.Compression;
import dev.stoker.formats.io.Magic;
import dev.stoker.formats.io.MappedFile;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A raw token file as nanoGPT writes it ({@code np.memmap}, {@code arr.tofile()}): token ids
 * back to back, little-endian, no header. uint16 for vocabularies up to 65,536, else uint32.
 */
public final class TokenFile implements Tokens, AutoCloseable {
    private final MappedFile file;
    private final DType dtype;
    private final long length;

    private TokenFile(MappedFile file, DType dtype, long length) {
        this.file = file;
        this.dtype = dtype;
        this.length = length;
    }

    /**
     * Maps {@code path} as tokens of type {@code dtype} (usually UINT16 or UINT32). A file whose
     * first bytes show it to be something else (NOTE [Raw or not]) is refused, naming what it is.
     */
    public static TokenFile open(Path path, DType dtype) throws IOException {
        return open(path, dtype, false);
    }

    /** The same; {@code asIs}: read as raw tokens whatever the file's first bytes look like. */
    public static TokenFile open(Path path, DType dtype, boolean asIs) throws IOException {
        TokenCopy.checkTokenType(dtype, path.toString());
        MappedFile f = MappedFile.open(path);
        String other = asIs ? null : otherFormat(f.segment(), dtype);
        if (other != null) {
            f.close();
            throw new CorruptShardException(path.toString(), 0, other + ", not raw token ids; a raw token file that "
                    + "only begins like one is read as it is with --raw (Python: raw=True)");
        }
        if (f.size() % dtype.byteSize() != 0) {
            f.close();
            throw new CorruptShardException(path.toString(), f.size(), "file size " + f.size()
                    + " is not a multiple of " + dtype.byteSize() + " bytes (" + dtype.label() + " tokens); truncated?");
        }
        return new TokenFile(f, dtype, f.size() / dtype.byteSize());
    }

    // NOTE [Raw or not]: a raw token file has no header, so any bytes may begin one, and a file of
    // another kind (a torch.save archive, an error page saved in place of the data, a compressed
    // file, a Megatron index given for its .bin) would read as tokens and train on its bytes. So a
    // file is refused when it begins with a signature token ids would not spell by chance: magic
    // numbers of four bytes and more (gzip's two are taken with its method byte), markup that
    // opens with a tag's name, and, for tokens of two bytes and more, a first KiB that is all text
    // (a token stream of a real vocabulary holds ids below 0x2020, whose high byte is a control
    // character). Tokens of one byte are a byte-level model's, and text is just what they spell.
    // The signatures are io.Magic's (zip, .npy, HDF5, Parquet, ROOT, SQLite, Arrow, the legacy
    // torch.save pickle) and io.Compression's; the tokens source reads a torch.save archive, a
    // .npy and a safetensors file as what they are before a file comes here as raw.

    /** Bytes of a file that the text check reads, and the fewest it needs to call a file text. */
    private static final int TEXT_PREFIX = 1024;
    private static final int TEXT_MINIMUM = 64;

    /** What {@code s}'s first bytes show it to be when that is not raw tokens of {@code dtype}; null otherwise. */
    static String otherFormat(MemorySegment s, DType dtype) {
        byte[] head = s.asSlice(0, Math.min(s.byteSize(), TEXT_PREFIX)).toArray(ValueLayout.JAVA_BYTE);
        if (startsWith(head, 0, Megatron.MAGIC)) {
            return "a Megatron index (give its .bin, or the prefix without .bin/.idx)";
        }
        Magic m = Magic.of(head); // the one sniffer of container formats
        if (m != null) {
            return switch (m) {
                case NPY -> "a numpy .npy array (give it a .npy name)";
                case ZIP -> "a zip archive (torch.save .pt, .npz)";
                case TORCH_LEGACY -> m.description() + "; torch.load it and torch.save it again (torch >= 1.6 writes the zip format)";
                default -> m.description();
            };
        }
        Compression c = Compression.of(head); // the one sniffer of compressed streams
        if (c != null) {
            return c.word() + "-compressed";
        }
        String markup = markup(head);
        if (markup != null) {
            return markup;
        }
        if (dtype.byteSize() > 1 && head.length >= TEXT_MINIMUM && isText(head, head.length < s.byteSize())) {
            int at = firstNonSpace(head, 0);
            return head[at] == '{' || head[at] == '[' ? "JSON text" : "text";
        }
        return null;
    }

    /** An HTML page or an XML document, by its first tag (after a byte-order mark and white space); null otherwise. */
    private static String markup(byte[] head) {
        int at = startsWith(head, 0, new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF}) ? 3 : 0;
        at = firstNonSpace(head, at);
        String start = new String(head, at, Math.min(head.length - at, 9), StandardCharsets.ISO_8859_1).toLowerCase(java.util.Locale.ROOT);
        if (start.startsWith("<!doctype") || start.startsWith("<html")) {
            return "an HTML page";
        }
        if (start.startsWith("<?xml")) {
            return "an XML document";
        }
        return null;
    }

    /** Whether {@code head} is UTF-8 text without control characters but white space ({@code cut}: a character may be cut at its end). */
    private static boolean isText(byte[] head, boolean cut) {
        CharBuffer chars = CharBuffer.allocate(head.length);
        CoderResult r = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(head), chars, !cut);
        if (r.isError()) {
            return false;
        }
        chars.flip();
        for (int i = 0; i < chars.length(); i++) {
            char ch = chars.get(i);
            if ((ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r' && ch != '\f') || ch == 0x7F) {
                return false;
            }
        }
        return true;
    }

    private static int firstNonSpace(byte[] b, int from) {
        int at = from;
        while (at < b.length - 1 && (b[at] == ' ' || b[at] == '\t' || b[at] == '\n' || b[at] == '\r')) {
            at++;
        }
        return at;
    }

    private static boolean startsWith(byte[] b, int at, byte[] prefix) {
        return b.length - at >= prefix.length && Arrays.equals(b, at, at + prefix.length, prefix, 0, prefix.length);
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public DType dtype() {
        return dtype;
    }

    @Override
    public MemorySegment segment() {
        return file.segment();
    }

    @Override
    public String name() {
        return file.path().toString();
    }

    @Override
    public void close() {
        file.close();
    }
}
