package dev.stoker.formats.tokens;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;
import dev.stoker.DType;
import java.nio.charset.StandardCharsets;

/**
 * Text to token ids. The BPE tokenizers are OpenAI's ({@code r50k_base} = GPT-2,
 * {@code p50k_base}, {@code cl100k_base}, {@code o200k_base}) through JTokkit, a pure-Java
 * implementation checked against OpenAI's own (TokenizerTest); {@code bytes} gives the UTF-8 bytes
 * (ids 0..255). Special tokens in the text are encoded as ordinary text. Thread-safe.
 *
 * <p>BPE's work on one pre-tokenized piece grows faster than the piece (a 50 MB line with no
 * space is one piece), so a run of more than {@link #MAX_RUN} characters without whitespace is
 * encoded in parts of at most that many: the same ids as OpenAI's tokenizer for any text without
 * such a run, and bounded work for the rare text with one (its ids then differ inside the run).
 */
public final class Tokenizer {
    private static final EncodingRegistry REGISTRY = Encodings.newLazyEncodingRegistry();

    private final String name;
    private final Encoding encoding;
    private final int endOfText;
    private final int vocabSize;

    private Tokenizer(String name, Encoding encoding, int endOfText, int vocabSize) {
        this.name = name;
        this.encoding = encoding;
        this.endOfText = endOfText;
        this.vocabSize = vocabSize;
    }

    /** {@code r50k_base} (alias {@code gpt2}), {@code p50k_base}, {@code cl100k_base}, {@code o200k_base} or {@code bytes}. */
    public static Tokenizer named(String name) {
        return switch (name) {
            case "r50k_base", "gpt2" -> bpe("r50k_base", EncodingType.R50K_BASE, 50256, 50257);
            case "p50k_base" -> bpe("p50k_base", EncodingType.P50K_BASE, 50256, 50281);
            case "cl100k_base" -> bpe("cl100k_base", EncodingType.CL100K_BASE, 100257, 100277);
            case "o200k_base" -> bpe("o200k_base", EncodingType.O200K_BASE, 199999, 200019);
            case "bytes" -> new Tokenizer("bytes", null, 256, 257);
            default -> throw new IllegalArgumentException("unknown tokenizer '" + name
                    + "' (known: r50k_base, gpt2, p50k_base, cl100k_base, o200k_base, bytes)");
        };
    }

    private static Tokenizer bpe(String name, EncodingType type, int eot, int vocab) {
        return new Tokenizer(name, REGISTRY.getEncoding(type), eot, vocab);
    }

    public String name() {
        return name;
    }

    /** The end-of-text id ({@code <|endoftext|>}; 256 for {@code bytes}). */
    public int endOfText() {
        return endOfText;
    }

    /** One more than the largest id, special tokens included. */
    public int vocabSize() {
        return vocabSize;
    }

    /** The narrowest unsigned type that holds every id: uint16 up to 65,536 ids, else uint32. */
    public DType tokenType() {
        return vocabSize <= 65_536 ? DType.UINT16 : DType.UINT32;
    }

    /** Characters without whitespace encoded as one part at most (see the class's note). */
    public static final int MAX_RUN = 4096;

    /** The ids of {@code text}. */
    public int[] encode(String text) {
        if (encoding != null && longestRun(text) > MAX_RUN) {
            return encodeInParts(text);
        }
        if (encoding == null) {
            byte[] b = text.getBytes(StandardCharsets.UTF_8);
            int[] out = new int[b.length];
            for (int i = 0; i < b.length; i++) {
                out[i] = b[i] & 0xFF;
            }
            return out;
        }
        return encoding.encodeOrdinary(text).toArray();
    }

    /** The text of {@code ids} (no special tokens among them): {@code decode(encode(t))} is {@code t}. */
    public String decode(int[] ids) {
        if (encoding == null) {
            byte[] b = new byte[ids.length];
            for (int i = 0; i < ids.length; i++) {
                b[i] = (byte) ids[i];
            }
            return new String(b, StandardCharsets.UTF_8);
        }
        com.knuddels.jtokkit.api.IntArrayList list = new com.knuddels.jtokkit.api.IntArrayList(ids.length);
        for (int id : ids) {
            list.add(id);
        }
        return encoding.decode(list);
    }

    private static int longestRun(String text) {
        int longest = 0;
        int run = 0;
        for (int i = 0; i < text.length(); i++) {
            run = Character.isWhitespace(text.charAt(i)) ? 0 : run + 1;
            longest = Math.max(longest, run);
        }
        return longest;
    }

    /** The text cut inside each run of more than {@link #MAX_RUN} non-space characters, the parts encoded one by one. */
    private int[] encodeInParts(String text) {
        int[] out = new int[Math.max(16, text.length() / 3)];
        int n = 0;
        int from = 0;
        int run = 0;
        for (int i = 0; i <= text.length(); i++) {
            boolean end = i == text.length();
            if (!end) {
                run = Character.isWhitespace(text.charAt(i)) ? 0 : run + 1;
            }
            if (end || run == MAX_RUN) {
                // cut after this character (after both halves of a surrogate pair)
                int cut = end ? i : Character.isHighSurrogate(text.charAt(i)) && i + 1 < text.length() ? i + 2 : i + 1;
                if (cut > from) {
                    int[] part = encoding.encodeOrdinary(text.substring(from, cut)).toArray();
                    if (n + part.length > out.length) {
                        out = java.util.Arrays.copyOf(out, Math.max(n + part.length, 2 * out.length));
                    }
                    System.arraycopy(part, 0, out, n, part.length);
                    n += part.length;
                }
                if (end) {
                    break;
                }
                from = cut;
                i = cut - 1;
                run = 0;
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }
}
