package dev.stoker.sources;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.List;
import java.util.Map;

/**
 * The specs' options as data, read off the records: each option's JSON type, its least value, the
 * words it takes, its default (the value {@link Specs} fills in for an option left out) and, for a
 * value that is more than its JSON type, its format. It is a JSON Schema (draft 2020-12): one
 * definition a spec, {@code loader}, each kind of source, and the nested {@code images} and
 * {@code cache}, which a source's definition refers to.
 *
 * <p>NOTE [One schema]: an option is declared once, as a record component of its spec, with its
 * range ({@link Min}), its words (an enum, or {@link Choices}) and its default (the spec's
 * {@code of(...)}). Everything else is made from that: the JSON {@link Specs} reads, this schema,
 * the defaults of {@code stoker bench}'s flags (the CLI's {@code SpecDefaults}), and the Python
 * package's checks and help ({@code python/stoker/_schema.json}, this schema with the flags'
 * meanings, written by the CLI's {@code OptionsReference} and held to it by a test). The records'
 * constructors check the ranges the annotations declare; {@code SchemaTest} holds them to each other.
 */
final class Schema {
    /** The least value of a number, or of each number of a list. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.RECORD_COMPONENT)
    @interface Min {
        long value();
    }

    /** Null is {@code auto}: a value chosen while running (Python takes the word {@code "auto"}). */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.RECORD_COMPONENT)
    @interface Auto {
    }

    /** The words a string option takes, where they are not an enum's. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.RECORD_COMPONENT)
    @interface Choices {
        String[] value();
    }

    /**
     * A value that is more than its JSON type: {@code folder} (made absolute where it is given; the
     * {@code words} it takes instead of a folder), {@code file}, {@code place} (where images are
     * decoded: {@code cpu}, or a GPU), {@code pads} (glob → length), {@code stacks} (name → fields),
     * {@code labelled} (group → files), {@code weights} (group → weight), {@code files} (field → file).
     */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.RECORD_COMPONENT)
    @interface Format {
        String value();

        String[] words() default {};
    }

    private Schema() {
    }

    /** The schema of {@code loader} and of {@code sources} (kind → its defaults), as {@code json} writes values. */
    static ObjectNode of(ObjectMapper json, LoaderSpec loader, Map<String, SourceSpec> sources) {
        ObjectNode root = json.createObjectNode();
        root.put("$schema", "https://json-schema.org/draft/2020-12/schema");
        root.put("title", "Stoker's specs: the loader's options, and each kind of source's");
        ObjectNode defs = root.putObject("$defs");
        defs.set("loader", object(json, loader, null));
        defs.set("images", object(json, Images.DEFAULT, null));
        defs.set("cache", object(json, RemoteCache.DEFAULT, null));
        for (var e : sources.entrySet()) {
            defs.set(e.getKey(), object(json, e.getValue(), e.getKey()));
        }
        return root;
    }

    /** The definition of {@code defaults}' record type, each option's default taken from it; {@code kind} its const, if a source's. */
    private static ObjectNode object(ObjectMapper json, Object defaults, String kind) {
        ObjectNode def = json.createObjectNode().put("type", "object").put("additionalProperties", false);
        ObjectNode properties = def.putObject("properties");
        if (kind != null) {
            properties.putObject("kind").put("const", kind);
            def.putArray("required").add("kind");
        }
        JsonNode values = json.valueToTree(defaults);
        for (RecordComponent c : defaults.getClass().getRecordComponents()) {
            String name = snake(c.getName());
            if (c.getType().isRecord()) {
                properties.putObject(name).put("$ref", "#/$defs/" + name);
                continue;
            }
            ObjectNode p = properties.putObject(name);
            type(p, c.getGenericType());
            Min min = c.getAnnotation(Min.class);
            if (min != null) {
                (p.has("items") ? (ObjectNode) p.get("items") : p).put("minimum", min.value());
            }
            Choices choices = c.getAnnotation(Choices.class);
            if (choices != null) {
                ArrayNode words = p.putArray("enum");
                List.of(choices.value()).forEach(words::add);
            }
            Format format = c.getAnnotation(Format.class);
            if (format != null) {
                p.put("format", format.value());
                if (format.words().length > 0) {
                    ArrayNode words = p.putArray("words");
                    List.of(format.words()).forEach(words::add);
                }
            }
            if (c.isAnnotationPresent(Auto.class)) {
                p.put("auto", true);
            }
            p.set("default", values.get(name));
        }
        return def;
    }

    /** {@code p}'s {@code type} (and {@code items}, {@code enum}) for a component of Java type {@code t}. */
    private static void type(ObjectNode p, Type t) {
        if (t instanceof ParameterizedType pt && pt.getRawType() == List.class) {
            p.put("type", "array");
            type(p.putObject("items"), pt.getActualTypeArguments()[0]);
        } else if (t instanceof ParameterizedType pt && pt.getRawType() == Map.class) {
            p.put("type", "object");
            type(p.putObject("additionalProperties"), pt.getActualTypeArguments()[1]);
        } else if (t == int.class || t == long.class || t == Integer.class || t == Long.class) {
            p.put("type", "integer");
        } else if (t == double.class || t == Double.class) {
            p.put("type", "number");
        } else if (t == boolean.class) {
            p.put("type", "boolean");
        } else if (t == String.class) {
            p.put("type", "string");
        } else if (t instanceof Class<?> e && e.isEnum()) {
            p.put("type", "string");
            ArrayNode words = p.putArray("enum");
            List.of(Specs.Word.words(e)).forEach(words::add);
        } else if (t instanceof Class<?> r && r.isRecord()) {
            p.put("type", "object");
        } else {
            throw new IllegalStateException("no JSON type for an option of type " + t);
        }
    }

    static String snake(String camel) {
        return PropertyNamingStrategies.SnakeCaseStrategy.INSTANCE.translate(camel);
    }
}
