package dev.stoker.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.stoker.sources.Specs;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Every option of the specs with its meaning, as {@code stoker bench KIND --help} says it: the
 * loader's options and each source's, under the specs' names (snake case, where the flags are
 * dashed). The Python package carries it ({@code python/stoker/_reference.json}) and builds
 * {@code help(stoker.Loader)} and {@code help(stoker.sources.KIND)} from it, so that the help an
 * installed wheel gives is the command line's, word for word; {@code OptionsReferenceTest} holds
 * the file to this.
 */
final class OptionsReference {
    private OptionsReference() {
    }

    /** {"loader": {name: meaning}, "sources": {kind: {"summary": ..., "options": {name: meaning}}}, "missing": [...]}. */
    static Map<String, Object> build() {
        Map<String, Object> out = new LinkedHashMap<>();
        List<String> missing = new ArrayList<>();
        CommandLine bench = Main.commands(new Main(), "bench").getSubcommands().get("bench");
        Map<String, String> loader = new LinkedHashMap<>();
        CommandSpec any = bench.getSubcommands().get("synthetic").getCommandSpec();
        for (String name : Specs.loaderOptions()) {
            put(loader, name, any, "loader", missing);
        }
        out.put("loader", loader);
        Map<String, Object> sources = new LinkedHashMap<>();
        for (String kind : Specs.kinds()) {
            CommandLine command = bench.getSubcommands().get(kind);
            if (command == null) {
                missing.add(kind + ": no stoker bench " + kind);
                continue;
            }
            CommandSpec spec = command.getCommandSpec();
            Map<String, String> options = new LinkedHashMap<>();
            for (String name : Specs.options(kind).keySet()) {
                put(options, name, spec, kind, missing);
            }
            Map<String, Object> source = new LinkedHashMap<>();
            source.put("summary", text(String.join(" ", spec.usageMessage().description())));
            source.put("options", options);
            sources.put(kind, source);
        }
        out.put("sources", sources);
        out.put("missing", missing);
        return out;
    }

    static String json() {
        java.io.StringWriter w = new java.io.StringWriter();
        try (JsonGenerator g = new JsonFactory().createGenerator(w)) {
            g.useDefaultPrettyPrinter();
            write(g, build());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return w.toString().replace("\r\n", "\n").replace(" : ", ": ") + "\n";
    }

    private static void write(JsonGenerator g, Object value) throws java.io.IOException {
        if (value instanceof Map<?, ?> map) {
            g.writeStartObject();
            for (var e : map.entrySet()) {
                g.writeFieldName((String) e.getKey());
                write(g, e.getValue());
            }
            g.writeEndObject();
        } else if (value instanceof List<?> list) {
            g.writeStartArray();
            for (Object o : list) {
                write(g, o);
            }
            g.writeEndArray();
        } else {
            g.writeString((String) value);
        }
    }

    private static void put(Map<String, String> into, String name, CommandSpec command, String where, List<String> missing) {
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
            into.put(name, meaning);
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
