package dev.stoker.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.stoker.sources.Specs;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The specs' schema with every option's meaning, as {@code stoker bench KIND --help} says it:
 * {@link Specs#schema()} (each option's type, least value, words and default), each option given
 * the {@code description} of its flag and each source the summary of its command (flags named as
 * the keywords they are: {@code --seq-len} is {@code seq_len}). The Python package carries it
 * ({@code python/stoker/_schema.json}): its checks of {@code stoker.Loader}'s keywords and its
 * help ({@code help(stoker.Loader)}, {@code help(stoker.sources.KIND)}) are made from it, so that
 * an installed wheel checks and explains every option as the command line does (NOTE [One
 * schema]); {@code OptionsReferenceTest} holds the file to this.
 */
final class OptionsReference {
    private OptionsReference() {
    }

    /** The schema with the meanings, and the options no command describes ({@code missing}, which should be empty). */
    record Reference(ObjectNode schema, List<String> missing) {
    }

    static Reference build() {
        ObjectNode schema;
        try {
            schema = (ObjectNode) new ObjectMapper().readTree(Specs.schema());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        ObjectNode defs = (ObjectNode) schema.get("$defs");
        List<String> missing = new ArrayList<>();
        CommandLine bench = Main.commands(new Main(), "bench").getSubcommands().get("bench");
        CommandSpec any = bench.getSubcommands().get("synthetic").getCommandSpec();
        describe(defs, "loader", any, "loader", missing);
        CommandSpec images = bench.getSubcommands().get("shards").getCommandSpec();
        describe(defs, "images", images, "images", missing);
        describe(defs, "cache", images, "cache", missing);
        for (String kind : Specs.kinds()) {
            CommandLine command = bench.getSubcommands().get(kind);
            if (command == null) {
                missing.add(kind + ": no stoker bench " + kind);
                continue;
            }
            CommandSpec spec = command.getCommandSpec();
            ((ObjectNode) defs.get(kind)).put("description", text(String.join(" ", spec.usageMessage().description())));
            describe(defs, kind, spec, kind, missing);
        }
        return new Reference(schema, missing);
    }

    /** Each option of definition {@code def} given its flag's meaning in {@code command}. */
    private static void describe(ObjectNode defs, String def, CommandSpec command, String where, List<String> missing) {
        for (var e : defs.get(def).get("properties").properties()) {
            if (e.getKey().equals("kind") || e.getValue().has("$ref")) {
                continue;
            }
            put((ObjectNode) e.getValue(), e.getKey(), command, where, missing);
        }
    }

    static String json() {
        try {
            return new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(build().schema())
                    .replace("\r\n", "\n").replace(" : ", ": ") + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The schema as the option tables of {@code docs/options.md}: the loader's options, the nested
     * specs', then each source's, one row an option (its keyword and flag, what it takes, its default
     * and meaning), so that the docs' tables are the specs' ({@code OptionTablesTest}).
     */
    static String markdown() {
        JsonNode defs = build().schema().get("$defs");
        StringBuilder md = new StringBuilder("""
                # Every option

                Written from the specs by `OptionTablesTest` (`-Dstoker.reference.write=true` writes it again):
                each option's keyword (Python's `stoker.Loader` and `stoker.sources`, a spec's JSON), its flag
                (`stoker bench KIND`), what it takes, its default and its meaning. The loader's options apply to
                every source; `images` are the options of the image sources, `cache` of those that read remote files.
                """);
        table(md, "The loader", defs, "loader");
        table(md, "Images (`images`)", defs, "images");
        table(md, "The cache of remote files (`cache`)", defs, "cache");
        for (String kind : Specs.kinds()) {
            List<String> nested = new ArrayList<>();
            defs.get(kind).get("properties").properties().forEach(e -> {
                if (e.getValue().has("$ref")) {
                    nested.add("`" + e.getKey() + "`");
                }
            });
            table(md, "Source `" + kind + "`" + (nested.isEmpty() ? "" : ", with " + String.join(" and ", nested)), defs, kind);
            md.append("\n").append(defs.get(kind).get("description").asText()).append("\n");
        }
        return md.toString();
    }

    private static void table(StringBuilder md, String title, JsonNode defs, String def) {
        md.append("\n## ").append(title).append("\n\n| keyword | flag | takes | default | meaning |\n| --- | --- | --- | --- | --- |\n");
        for (var e : defs.get(def).get("properties").properties()) {
            JsonNode o = e.getValue();
            if (e.getKey().equals("kind") || o.has("$ref")) {
                continue;
            }
            boolean positional = e.getKey().equals("paths") || e.getKey().equals("path");
            md.append("| `").append(e.getKey()).append("` | ").append(positional ? "(arguments)" : "`" + Main.flag(e.getKey()) + "`")
                    .append(" | ").append(takes(o)).append(" | ").append(o.get("default").isNull() ? "" : "`" + o.get("default") + "`")
                    .append(" | ").append(o.get("description").asText().replace("|", "\\|")).append(" |\n");
        }
    }

    /** What an option takes, in words: its type or format, its least value, its words. */
    private static String takes(JsonNode o) {
        String type = o.has("format") ? o.get("format").asText() : o.get("type").asText();
        if (type.equals("array")) {
            type = "list of " + o.get("items").get("type").asText() + "s";
        }
        List<String> words = new ArrayList<>();
        o.path("enum").forEach(w -> words.add("`" + w.asText() + "`"));
        o.path("words").forEach(w -> words.add("`" + w.asText() + "`"));
        JsonNode min = o.has("minimum") ? o.get("minimum") : o.path("items").get("minimum");
        String out = type.equals("string") && !o.has("words") && !words.isEmpty() ? "one of " + String.join(", ", words)
                : type + (words.isEmpty() ? "" : " or " + String.join(", ", words));
        if (min != null) {
            out += " ≥ " + min.asText();
        }
        return o.path("auto").asBoolean() ? out + " or `auto`" : out;
    }

    private static void put(ObjectNode into, String name, CommandSpec command, String where, List<String> missing) {
        ArgSpec arg = name.equals("paths") || name.equals("path")
                ? command.positionalParameters().stream().findFirst().orElse(null)
                : command.findOption(Main.flag(name));
        if (arg == null && name.equals("batch_size")) {
            arg = command.findOption("--batch");
        }
        String meaning = arg == null ? "" : text(String.join(" ", arg.description()));
        if (meaning.isEmpty()) {
            missing.add(where + "." + name);
        } else {
            into.put("description", meaning);
        }
    }

    /** The flags a meaning names as the Python keywords they are: {@code --seq-len} is {@code seq_len}. */
    private static String text(String description) {
        var m = java.util.regex.Pattern.compile("--([a-z][a-z0-9-]*)").matcher(description);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(b, m.group(1).replace('-', '_'));
        }
        return m.appendTail(b).toString().replaceAll("\\s+", " ").trim();
    }
}
