package dev.stoker.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stoker.sources.Specs;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The defaults of a source command's flags ({@code stoker bench KIND}, and {@code cat} and
 * {@code show}, which share them; the cache's and the images' flags wherever they are): the
 * spec's own, from {@link Specs#schema()}, so that a flag left out means what the option left out
 * of a spec means (NOTE [One schema]). A flag that is no spec's option keeps the default its
 * annotation gives.
 */
final class SpecDefaults implements CommandLine.IDefaultValueProvider {
    /** Kind (and {@code loader}, {@code images}, {@code cache}) → option name → its schema; read at the first source flag. */
    private Map<String, Map<String, JsonNode>> options;

    private Map<String, Map<String, JsonNode>> options() {
        if (options == null) {
            options = read();
        }
        return options;
    }

    private static Map<String, Map<String, JsonNode>> read() {
        Map<String, Map<String, JsonNode>> options = new LinkedHashMap<>();
        JsonNode defs;
        try {
            defs = new ObjectMapper().readTree(Specs.schema()).get("$defs");
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        options.put("loader", flat(defs, "loader"));
        options.put("images", flat(defs, "images"));
        options.put("cache", flat(defs, "cache"));
        for (String kind : Specs.kinds()) {
            options.put(kind, flat(defs, kind));
        }
        return options;
    }

    /** {@code name}'s options, with those of the nested specs it refers to. */
    private static Map<String, JsonNode> flat(JsonNode defs, String name) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        for (var e : defs.get(name).get("properties").properties()) {
            JsonNode ref = e.getValue().get("$ref");
            if (ref != null) {
                out.putAll(flat(defs, ref.asText().substring("#/$defs/".length())));
            } else {
                out.put(e.getKey(), e.getValue());
            }
        }
        return out;
    }

    @Override
    public String defaultValue(ArgSpec arg) {
        if (!(arg instanceof OptionSpec o) || arg.command() == null) {
            return null;
        }
        String name = o.longestName().replaceFirst("^--", "").replace('-', '_');
        JsonNode option;
        if (source(arg.command()) instanceof CommandSpec command) {
            option = options().get(command.name()).get(name);
            if (option == null) {
                option = options().get("loader").get(name);
            }
        } else if (o.userObject() instanceof java.lang.reflect.Member field) { // the cache's and the images' flags serve
            Class<?> mixin = field.getDeclaringClass();                          // other commands too (ls, inspect, prepare)
            option = CacheOptions.class.isAssignableFrom(mixin) ? options().get("cache").get(name)
                    : ImageOptions.class.isAssignableFrom(mixin) ? options().get("images").get(name) : null;
        } else {
            option = null;
        }
        if (option == null) {
            return null;
        }
        return option.path("auto").asBoolean() && option.get("default").isNull() ? "auto" : text(option.get("default"));
    }

    /** The source command {@code spec} belongs to (the command itself, or the one it is a mixin of), or null. */
    private static CommandSpec source(CommandSpec spec) {
        for (CommandSpec c = spec; c != null; c = c.parent()) {
            if (c.userObject() instanceof BenchCommand.Subcommand) {
                return c;
            }
        }
        return null;
    }

    /** A default as a flag's value: null for none (and for a flag that is off), a list as {@code A,B}. */
    private static String text(JsonNode value) {
        if (value == null || value.isNull() || value.isBoolean() && !value.asBoolean() || value.isContainerNode() && value.isEmpty()
                || value.isObject()) {
            return null;
        }
        if (value.isArray()) {
            List<String> items = new ArrayList<>();
            value.forEach(v -> items.add(text(v)));
            return String.join(",", items);
        }
        if (value.isFloatingPointNumber() && value.asDouble() == Math.rint(value.asDouble()) && Math.abs(value.asDouble()) < 1e15) {
            return Long.toString((long) value.asDouble()); // 0, not 0.0: as the flag is written
        }
        return value.asText();
    }
}
