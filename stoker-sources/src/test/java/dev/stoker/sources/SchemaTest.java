package dev.stoker.sources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The schema says what the records do (NOTE [One schema]): for every option of every spec, a value
 * below its least value is refused naming the option, the least value is not refused for its range,
 * each of its words is taken and another word is refused naming it; and each default is the value
 * a spec that leaves the option out has.
 */
class SchemaTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNode DEFS = read(Specs.schema()).get("$defs");

    private static JsonNode read(String json) {
        try {
            return JSON.readTree(json);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Each spec: its definition's name, the group an option is in ("" for its own), and how a spec is read from JSON. */
    private record Case(String def, String group, Function<ObjectNode, Object> read, ObjectNode base) {
    }

    private static List<Case> cases() {
        List<Case> out = new ArrayList<>();
        out.add(new Case("loader", "", o -> Specs.loader(o.toString()), JSON.createObjectNode()));
        for (String kind : Specs.kinds()) {
            Function<ObjectNode, Object> read = o -> Specs.source(o.toString());
            ObjectNode base = JSON.createObjectNode().put("kind", kind);
            out.add(new Case(kind, "", read, base));
            for (var e : DEFS.get(kind).get("properties").properties()) {
                if (e.getValue().has("$ref")) {
                    out.add(new Case(e.getKey(), e.getKey(), read, base));
                }
            }
        }
        return out;
    }

    private static ObjectNode with(Case c, String name, JsonNode value) {
        ObjectNode spec = c.base().deepCopy();
        (c.group().isEmpty() ? spec : spec.putObject(c.group())).set(name, value);
        return spec;
    }

    @Test
    void everyLeastValueIsTheRecordsOwn() {
        int checked = 0;
        for (Case c : cases()) {
            for (var e : DEFS.get(c.def()).get("properties").properties()) {
                JsonNode o = e.getValue();
                boolean list = o.path("type").asText().equals("array");
                JsonNode min = list ? o.path("items").get("minimum") : o.get("minimum");
                if (min == null) {
                    continue;
                }
                String name = e.getKey();
                JsonNode below = list ? JSON.createArrayNode().add(min.asLong() - 1).add(min.asLong()) : JSON.valueToTree(min.asLong() - 1);
                SpecException refused = assertThrows(SpecException.class, () -> c.read().apply(with(c, name, below)),
                        c.def() + "." + name + " takes " + below + ", below its least value " + min);
                assertEquals(name, refused.option(), refused.getMessage());
                if (!list) {
                    try {
                        c.read().apply(with(c, name, min));
                    } catch (SpecException at) {
                        assertFalse(at.getMessage().contains(">= "), c.def() + "." + name + " refuses its least value: " + at.getMessage());
                    }
                }
                checked++;
            }
        }
        assertTrue(checked > 30, "least values checked: " + checked);
    }

    @Test
    void everyWordIsTakenAndNoOther() {
        int checked = 0;
        for (Case c : cases()) {
            for (var e : DEFS.get(c.def()).get("properties").properties()) {
                if (!e.getValue().has("enum")) {
                    continue;
                }
                String name = e.getKey();
                for (JsonNode word : e.getValue().get("enum")) {
                    try {
                        c.read().apply(with(c, name, word));
                    } catch (SpecException refused) {
                        assertFalse(name.equals(refused.option()) && refused.getMessage().contains("must be"),
                                c.def() + "." + name + " refuses its word " + word + ": " + refused.getMessage());
                    }
                }
                SpecException refused = assertThrows(SpecException.class,
                        () -> c.read().apply(with(c, name, JSON.valueToTree("bogus"))), c.def() + "." + name + " takes 'bogus'");
                assertEquals(name, refused.option(), refused.getMessage());
                assertTrue(refused.getMessage().contains(e.getValue().get("enum").get(0).asText()), refused.getMessage());
                checked++;
            }
        }
        assertTrue(checked > 10, "options with words checked: " + checked);
    }

    @Test
    void everyDefaultIsWhatALeftOutOptionIs() {
        assertEquals(DEFS.get("loader").get("properties").get("batch_size").get("default").asInt(), LoaderSpec.DEFAULT.batchSize());
        for (String kind : Specs.kinds()) {
            JsonNode written = read(Specs.json(Specs.source("{\"kind\": \"" + kind + "\"}")));
            for (var e : DEFS.get(kind).get("properties").properties()) {
                if (e.getKey().equals("kind") || e.getValue().has("$ref")) {
                    continue;
                }
                JsonNode value = written.get(e.getKey());
                JsonNode declared = e.getValue().get("default");
                assertEquals(declared.isNull() ? null : declared, value == null || value.isNull() ? null : value, kind + "." + e.getKey());
            }
        }
    }
}
