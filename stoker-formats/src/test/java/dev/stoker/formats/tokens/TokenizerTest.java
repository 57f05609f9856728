package dev.stoker.formats.tokens;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stoker.DType;
import dev.stoker.formats.Fixtures;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * Token ids must match OpenAI's tokenizer: fixtures/tokenizer/expected.json was produced by the
 * tiktoken npm package (the reference implementation compiled to WASM) for ~300 varied strings,
 * by fixtures/tokenizer/make_expected.mjs.
 */
class TokenizerTest {

    @Test
    void matchesOpenAisTokenizerOnTheCorpus() throws IOException {
        JsonNode expected = new ObjectMapper().readTree(Fixtures.dir().resolve("tokenizer/expected.json").toFile());
        JsonNode texts = expected.get("texts");
        int checked = 0;
        for (String name : new String[] {"r50k_base", "cl100k_base", "o200k_base"}) {
            Tokenizer t = Tokenizer.named(name);
            JsonNode ids = expected.get("encodings").get(name);
            assertEquals(texts.size(), ids.size());
            for (int i = 0; i < texts.size(); i++) {
                int[] want = new int[ids.get(i).size()];
                for (int j = 0; j < want.length; j++) {
                    want[j] = ids.get(i).get(j).asInt();
                }
                assertArrayEquals(want, t.encode(texts.get(i).asText()), name + " on text " + i + ": " + texts.get(i));
                checked++;
            }
        }
        assertEquals(3 * texts.size(), checked);
        assertEquals(303, texts.size());
    }

    @Test
    void bytesAreUtf8AndTypesFitTheVocabulary() {
        Tokenizer b = Tokenizer.named("bytes");
        assertArrayEquals(new int[] {0x68, 0xC3, 0xA9}, b.encode("hé"));
        assertEquals(256, b.endOfText());
        assertEquals(DType.UINT16, Tokenizer.named("gpt2").tokenType());
        assertEquals(50256, Tokenizer.named("gpt2").endOfText());
        assertEquals(DType.UINT32, Tokenizer.named("cl100k_base").tokenType());
        assertEquals(100257, Tokenizer.named("cl100k_base").endOfText());
        assertEquals(199999, Tokenizer.named("o200k_base").endOfText());
        assertThrows(IllegalArgumentException.class, () -> Tokenizer.named("llama"));
    }

    @Test
    void aRunLongerThanThePartLimitIsEncodedInPartsThatDecodeToTheSameText() {
        com.knuddels.jtokkit.api.Encoding gpt2 = com.knuddels.jtokkit.Encodings.newDefaultEncodingRegistry()
                .getEncoding(com.knuddels.jtokkit.api.EncodingType.R50K_BASE);
        Tokenizer t = Tokenizer.named("gpt2");
        java.util.SplittableRandom r = new java.util.SplittableRandom(5);
        StringBuilder run = new StringBuilder();
        for (int i = 0; i < 3 * Tokenizer.MAX_RUN + 17; i++) {
            run.append(i % 1000 == 999 ? "\uD83D\uDE00" : String.valueOf((char) ('a' + r.nextInt(26)))); // a surrogate pair now and then
        }
        String text = "before it, " + run + " and after it";
        int[] ids = t.encode(text);
        com.knuddels.jtokkit.api.IntArrayList list = new com.knuddels.jtokkit.api.IntArrayList();
        for (int id : ids) {
            list.add(id);
        }
        assertEquals(text, gpt2.decode(list), "every character once, no pair split");
        // text without such a run: exactly OpenAI's ids (the corpus test checks them), one call
        String normal = "before it, " + run.substring(0, Tokenizer.MAX_RUN) + " and after it";
        assertArrayEquals(gpt2.encodeOrdinary(normal).toArray(), t.encode(normal));
    }
}
