package dev.stoker.formats;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stoker.DType;
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
}
