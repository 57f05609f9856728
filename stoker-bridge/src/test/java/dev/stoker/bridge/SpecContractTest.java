package dev.stoker.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stoker.sources.Specs;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Python package checks options as the server does: {@code stoker/_options.py}, reading the
 * schema it carries ({@code _schema.json}), takes the same sources, the same options in the same
 * nested specs, each of the same kind, least value, words and default as {@link Specs#schema()}
 * says from the records now (NOTE [One schema]).
 */
class SpecContractTest {
    @Test
    void pythonReadsTheSchemaJavaWrites() throws Exception {
        String out = PythonSide.print("_options",
                "def line(where, name, group, o):",
                "    print(where, name, group or '-', m.kind_of(o), o.get('minimum', o.get('items', {}).get('minimum')),",
                "          ','.join(o.get('enum', [])) or '-', o.get('auto', False), json.dumps(o['default'], separators=(',', ':')))",
                "for name, o in m.LOADER.items(): line('loader', name, '', o)",
                "for kind, (paths, own, groups) in m.SOURCES.items():",
                "    if paths: print(kind, paths)",
                "    for name, o in own.items(): line(kind, name, '', o)",
                "    for g in groups:",
                "        for name, o in m.GROUPS[g].items(): line(kind, name, g, o)");
        JsonNode defs = new ObjectMapper().readTree(Specs.schema()).get("$defs");
        List<String> java = new ArrayList<>();
        lines(defs, "loader", "loader", "", java);
        for (String kind : Specs.kinds()) {
            lines(defs, kind, kind, "", java);
        }
        assertEquals(String.join("\n", java), out, "the specs (Java) and python/stoker/_options.py reading _schema.json (Python) "
                + "differ: is python/stoker/_schema.json stale (OptionsReferenceTest writes it)?");
    }

    private static void lines(JsonNode defs, String def, String where, String group, List<String> out) {
        List<String> nested = new ArrayList<>();
        for (var e : defs.get(def).get("properties").properties()) {
            JsonNode o = e.getValue();
            String name = e.getKey();
            if (name.equals("kind")) {
                continue;
            } else if (name.equals("paths") || name.equals("path")) {
                out.add(where + " " + name);
            } else if (o.has("$ref")) {
                nested.add(name);
            } else {
                JsonNode min = o.has("minimum") ? o.get("minimum") : o.path("items").get("minimum");
                List<String> words = new ArrayList<>();
                o.path("enum").forEach(w -> words.add(w.asText()));
                out.add(where + " " + name + " " + (group.isEmpty() ? "-" : group) + " "
                        + (o.has("format") ? o.get("format").asText() : o.get("type").asText()) + " "
                        + (min == null ? "None" : min.asText()) + " " + (words.isEmpty() ? "-" : String.join(",", words)) + " "
                        + (o.path("auto").asBoolean() ? "True" : "False") + " " + o.get("default"));
            }
        }
        for (String g : nested) {
            lines(defs, g, where, g, out);
        }
    }
}
