package dev.stoker.formats.tokens;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.github.luben.zstd.ZstdOutputStream;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.ErrorPolicy;
import dev.stoker.formats.Fixtures;
import dev.stoker.formats.io.TokenPreparer;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.npy.NpyArray;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenPreparerTest {
    @TempDir
    Path tmp;

    static final String[] DOCS = {"Hello world", "naïve café 😀", "", "def f(x):\n    return x", "line\twith\ttabs"};

    Path jsonl(String name, String... extraLines) throws IOException {
        StringBuilder b = new StringBuilder();
        for (String d : DOCS) {
            b.append("{\"id\": 1, \"text\": ").append(quote(d)).append(", \"meta\": {\"a\": [1, 2]}}\n");
        }
        for (String l : extraLines) {
            b.append(l).append('\n');
        }
        Path p = tmp.resolve(name);
        byte[] bytes = b.toString().getBytes(StandardCharsets.UTF_8);
        try (OutputStream out = name.endsWith(".gz") ? new GZIPOutputStream(Files.newOutputStream(p))
                : name.endsWith(".zst") ? new ZstdOutputStream(Files.newOutputStream(p)) : Files.newOutputStream(p)) {
            out.write(bytes);
        }
        return p;
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                default -> b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static long[] expectedTokens(Tokenizer t, int copies) {
        List<Long> out = new ArrayList<>();
        for (int k = 0; k < copies; k++) {
            for (String d : DOCS) {
                for (int id : t.encode(d)) {
                    out.add((long) id);
                }
                out.add((long) t.endOfText());
            }
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    static long[] read(Tokens t) {
        long[] out = new long[(int) t.length()];
        for (int i = 0; i < out.length; i++) {
            out[i] = t.token(i);
        }
        return out;
    }

    @Test
    void plainGzipAndZstdInputsGiveTheSameTokensInEveryFormat() throws IOException {
        Tokenizer gpt2 = Tokenizer.named("r50k_base");
        List<Path> inputs = List.of(jsonl("a.jsonl"), jsonl("b.jsonl.gz"), jsonl("c.jsonl.zst"));
        long[] want = expectedTokens(gpt2, 3);
        new TokenPreparer(gpt2, TokenPreparer.Format.BIN, "text", ErrorPolicy.FAIL, 2).run(inputs, tmp.resolve("out"));
        try (TokenFile f = TokenFile.open(tmp.resolve("out.bin"), DType.UINT16)) {
            assertArrayEquals(want, read(f));
        }
        new TokenPreparer(gpt2, TokenPreparer.Format.NPY, "text", ErrorPolicy.FAIL, 3).run(inputs, tmp.resolve("out"));
        try (NpyArray a = Npy.read(tmp.resolve("out.npy"))) {
            assertEquals("<u2", a.descr());
            assertArrayEquals(want, read(Tokens.of(a)));
        }
        TokenPreparer.Summary s = new TokenPreparer(gpt2, TokenPreparer.Format.MEGATRON, "text", ErrorPolicy.FAIL, 1)
                .run(inputs, tmp.resolve("meg"));
        assertEquals(15, s.documents());
        assertEquals(want.length, s.tokens());
        try (Megatron m = Megatron.open(tmp.resolve("meg"))) {
            assertEquals(15, m.documents());
            assertArrayEquals(want, read(m));
            assertEquals(gpt2.endOfText(), m.token(m.sequenceStart(0) + m.sequenceLength(0) - 1));
        }
    }

    @Test
    void theOutputIsTheSameBytesForAnyWorkerCount() throws IOException {
        StringBuilder big = new StringBuilder();
        for (int i = 0; i < 3000; i++) {
            big.append("{\"text\": \"document ").append(i).append(" says ").append("word ".repeat(i % 400)).append("\"}\n");
        }
        Path in = tmp.resolve("big.jsonl");
        Files.writeString(in, big);
        Tokenizer t = Tokenizer.named("cl100k_base");
        new TokenPreparer(t, TokenPreparer.Format.BIN, "text", ErrorPolicy.FAIL, 1).run(List.of(in), tmp.resolve("one"));
        new TokenPreparer(t, TokenPreparer.Format.BIN, "text", ErrorPolicy.FAIL, 4).run(List.of(in), tmp.resolve("four"));
        assertArrayEquals(Files.readAllBytes(tmp.resolve("one.bin")), Files.readAllBytes(tmp.resolve("four.bin")));
        assertEquals(0, Files.size(tmp.resolve("one.bin")) % 4, "cl100k ids need uint32");
    }

    @Test
    void aMalformedLineNamesFileAndLineAndLeavesNoOutput() throws IOException {
        Path in = jsonl("bad.jsonl", "{\"text\": \"fine\"}", "{\"text\": unquoted}", "{\"other\": 1}");
        CorruptShardException e = assertThrows(CorruptShardException.class,
                () -> new TokenPreparer(Tokenizer.named("bytes"), TokenPreparer.Format.BIN, "text", ErrorPolicy.FAIL, 2)
                        .run(List.of(in), tmp.resolve("x")));
        assertTrue(e.getMessage().startsWith(in + ": line 7: malformed JSON"), e.getMessage());
        try (var files = Files.list(tmp)) {
            assertEquals(List.of(in), files.toList(), "no output and no temporary file left behind");
        }
        TokenPreparer.Summary s = new TokenPreparer(Tokenizer.named("bytes"), TokenPreparer.Format.BIN, "text", ErrorPolicy.SKIP_SAMPLE, 2)
                .run(List.of(in), tmp.resolve("x"));
        assertEquals(2, s.skipped(), "the unquoted value and the missing field");
        assertEquals(6, s.documents());
    }

    @Test
    void invalidUtf8IsNamedWithItsLine() throws IOException {
        Path in = tmp.resolve("utf.jsonl");
        byte[] good = "{\"text\": \"ok\"}\n".getBytes(StandardCharsets.UTF_8);
        byte[] bad = {'{', '"', 't', 'e', 'x', 't', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}', '\n'};
        Files.write(in, concat(good, bad, good));
        CorruptShardException e = assertThrows(CorruptShardException.class,
                () -> new TokenPreparer(Tokenizer.named("bytes"), TokenPreparer.Format.BIN, "text", ErrorPolicy.FAIL, 1)
                        .run(List.of(in), tmp.resolve("u")));
        assertTrue(e.getMessage().contains("line 2: invalid UTF-8"), e.getMessage());
        TokenPreparer.Summary s = new TokenPreparer(Tokenizer.named("bytes"), TokenPreparer.Format.BIN, "text", ErrorPolicy.SKIP_SAMPLE, 1)
                .run(List.of(in), tmp.resolve("u"));
        assertEquals(1, s.skipped());
        assertEquals(2, s.documents(), "the lines after a bad one are still read");
    }

    @Test
    void numpyReadsTheNpyOutput() throws Exception {
        assumeTrue(Fixtures.numpyAvailable(), "python3 with numpy is not installed: skipping the numpy read-back");
        Path in = jsonl("n.jsonl");
        new TokenPreparer(Tokenizer.named("r50k_base"), TokenPreparer.Format.NPY, "text", ErrorPolicy.FAIL, 2).run(List.of(in), tmp.resolve("n"));
        String out = Fixtures.python("import numpy as np,sys; a=np.load(sys.argv[1]); print(a.dtype.str, a.shape, a[:3].tolist(), int(a[-1]))",
                tmp.resolve("n.npy").toString());
        long[] want = expectedTokens(Tokenizer.named("r50k_base"), 1);
        assertEquals("<u2 (" + want.length + ",) [" + want[0] + ", " + want[1] + ", " + want[2] + "] 50256", out.strip());
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}
