package dev.stoker.formats.tar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import dev.stoker.formats.Fixtures;
import dev.stoker.formats.npy.NpyArray;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FieldsTest {

    static TarSample sample(Map<String, byte[]> fields) {
        Map<String, MemorySegment> m = new LinkedHashMap<>();
        fields.forEach((k, v) -> m.put(k, MemorySegment.ofArray(v)));
        return new TarSample("k1", "shard.tar", m);
    }

    @Test
    void decodesTheCommonFields() throws IOException {
        TarSample s = sample(Map.of("cls", " 42\n".getBytes(), "txt", "héllo".getBytes(StandardCharsets.UTF_8),
                "json", "{\"a\": [1, 2.5, \"x\"], \"b\": null}".getBytes(),
                "npy", Files.readAllBytes(Fixtures.npy("i4_le.npy"))));
        assertEquals(42, Fields.integer(s, "cls"));
        assertEquals("héllo", Fields.text(s, "txt"));
        Map<?, ?> j = (Map<?, ?>) Fields.json(s, "json");
        assertEquals(List.of(1L, 2.5, "x"), j.get("a"));
        assertTrue(j.containsKey("b") && j.get("b") == null);
        NpyArray a = Fields.npy(s, "npy");
        assertEquals("<i4", a.descr());
        assertEquals(15, a.elements());
    }

    @Test
    void badFieldsAreNamed() {
        TarSample s = sample(Map.of("cls", "4 2".getBytes(), "txt", new byte[] {(byte) 0xC3, 0x28}, "json", "{".getBytes()));
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> Fields.integer(s, "cls"));
        assertEquals("shard.tar: sample 'k1': field 'cls' is not one integer", e.getMessage());
        assertThrows(CorruptShardException.class, () -> Fields.text(s, "txt"));
        assertThrows(CorruptShardException.class, () -> Fields.json(s, "json"));
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class, () -> Fields.integer(s, "label"));
        assertTrue(missing.getMessage().contains("has no field 'label'"), missing.getMessage());
    }
}
