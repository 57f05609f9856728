package dev.stoker.sources;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.lang.reflect.RecordComponent;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Specs as JSON: {@code {"kind": "tokens", "paths": ["train.bin"], "seq_len": 1024}} for a source,
 * {@code {"batch_size": 32, "workers": null}} for the loader. Names are the record components' in
 * snake case (the CLI's flags without dashes, Python's keywords); a nested spec (a shard source's
 * {@code images}, a remote source's {@code cache}) is an object. An option left out takes its
 * default; an unknown option, a value of the wrong type (a float for an integer, a string for a
 * number) and a value out of range are {@link SpecException}s naming the option.
 */
public final class Specs {
    private static final ObjectMapper JSON = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            // a number or a flag given as a string is a mistake to name, not a value to guess at
            .withCoercionConfig(LogicalType.Integer, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Float, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Boolean, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
            .build();

    /** Each kind of source, by name, with its defaults (the values of an option left out). */
    private static final Map<String, SourceSpec> DEFAULTS = defaults();

    private Specs() {
    }

    private static Map<String, SourceSpec> defaults() {
        Map<String, SourceSpec> m = new LinkedHashMap<>();
        m.put("synthetic", Synthetic.of());
        m.put("tokens", Tokens.of(List.of()));
        m.put("jsonl", Jsonl.of(List.of()));
        m.put("shards", Shards.of());
        m.put("folder", Folder.of(null));
        m.put("hdf5", Hdf5.of(null, List.of()));
        m.put("sqlite", Sqlite.of(null, null, null));
        m.put("parquet", Parquet.of(null));
        m.put("mds", Mds.of(null));
        m.put("tfrecord", TfRecord.of(List.of()));
        m.put("arrayrecord", ArrayRecord.of(List.of()));
        m.put("arrow", Arrow.of(List.of()));
        m.put("litdata", LitData.of(null));
        m.put("arrays", NamedArrays.of(Map.of()));
        m.put("root", Root.of(List.of(), null));
        return m;
    }

    /** The kinds of source, by name. */
    public static List<String> kinds() {
        return List.copyOf(DEFAULTS.keySet());
    }

    static String kind(Class<?> type) {
        for (var e : DEFAULTS.entrySet()) {
            if (e.getValue().getClass() == type) {
                return e.getKey();
            }
        }
        throw new IllegalArgumentException(type.getName() + " is not a source spec");
    }

    /** A source spec from its JSON. */
    public static SourceSpec source(String json) {
        JsonNode node = tree(json);
        JsonNode kind = node.get("kind");
        if (kind == null || !kind.isTextual()) {
            throw new SpecException("kind", "must name the source: one of " + String.join(", ", kinds()));
        }
        SourceSpec defaults = DEFAULTS.get(kind.asText());
        if (defaults == null) {
            throw new SpecException("kind", "must be one of " + String.join(", ", kinds()) + ", got '" + kind.asText() + "'");
        }
        ObjectNode given = ((ObjectNode) node).deepCopy();
        given.remove("kind");
        return read(defaults, given, "source '" + kind.asText() + "'");
    }

    /**
     * Opens {@code source} for {@code loader}: from a copy of its local files in memory when the
     * loader spec says {@code in_memory} ({@link InMemory}), else where they are.
     */
    public static Recipe open(SourceSpec source, LoaderSpec loader) throws java.io.IOException {
        InMemory.sweep(); // a copy in memory that a killed process left (and its reaper missed) goes at the next open
        return loader.inMemory() ? InMemory.open(source, loader) : source.open(loader);
    }

    /** A loader spec from its JSON. */
    public static LoaderSpec loader(String json) {
        return read(LoaderSpec.DEFAULT, (ObjectNode) tree(json), "the loader");
    }

    /** A value of a nested type ({@code type}) of option {@code option}, from its JSON, read as the specs are. */
    static <T> T value(String json, Class<T> type, String option) {
        try {
            return JSON.readValue(json, type);
        } catch (UnrecognizedPropertyException e) {
            throw new SpecException(option, "has no option '" + e.getPropertyName() + "'");
        } catch (JsonProcessingException e) {
            throw new SpecException(option, "has a value that cannot be read: " + firstLine(e.getOriginalMessage()));
        }
    }

    /** The JSON of {@code spec}, its kind first; {@link #source} reads it back equal. */
    public static String json(SourceSpec spec) {
        ObjectNode node = JSON.createObjectNode().put("kind", spec.kind());
        node.setAll((ObjectNode) JSON.valueToTree(spec));
        return node.toString();
    }

    /** The JSON of {@code spec}; {@link #loader} reads it back equal. */
    public static String json(LoaderSpec spec) {
        return JSON.valueToTree(spec).toString();
    }

    /**
     * Every option of every spec as a JSON Schema (draft 2020-12): its type, least value, words and
     * default, one definition a spec ({@code loader}, each kind, and the nested {@code images} and
     * {@code cache}). NOTE [One schema].
     */
    public static String schema() {
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(Schema.of(JSON, LoaderSpec.DEFAULT, DEFAULTS));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The options of source {@code kind}, as JSON names them, each with the nested spec it belongs
     * to ({@code ""} for the source's own, {@code "images"}, {@code "cache"}): for the clients that
     * build specs from keywords, and the test that holds them to these records.
     */
    public static Map<String, String> options(String kind) {
        SourceSpec defaults = DEFAULTS.get(kind);
        if (defaults == null) {
            throw new SpecException("kind", "must be one of " + String.join(", ", kinds()) + ", got '" + kind + "'");
        }
        Map<String, String> out = new LinkedHashMap<>();
        options(defaults.getClass(), "", out);
        return out;
    }

    /** The loader's options, as JSON names them. */
    public static List<String> loaderOptions() {
        Map<String, String> out = new LinkedHashMap<>();
        options(LoaderSpec.class, "", out);
        return List.copyOf(out.keySet());
    }

    private static void options(Class<?> type, String group, Map<String, String> out) {
        for (RecordComponent c : type.getRecordComponents()) {
            String name = Schema.snake(c.getName());
            if (c.getType().isRecord()) {
                options(c.getType(), name, out);
            } else {
                out.put(name, group);
            }
        }
    }

    static JsonNode tree(String json) {
        JsonNode node;
        try {
            node = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new SpecException(null, "a spec must be JSON: " + e.getOriginalMessage());
        }
        if (node == null || !node.isObject()) {
            throw new SpecException(null, "a spec must be a JSON object, got " + (node == null ? "nothing" : node.getNodeType()));
        }
        return node;
    }

    /** {@code given} over the JSON of {@code defaults}, nested objects merged too, read as a record of their type. */
    @SuppressWarnings("unchecked")
    private static <T> T read(T defaults, ObjectNode given, String what) {
        ObjectNode merged = JSON.valueToTree(defaults);
        merge(merged, given);
        try {
            return (T) JSON.treeToValue(merged, defaults.getClass());
        } catch (UnrecognizedPropertyException e) {
            throw new SpecException(e.getPropertyName(), "is not an option of " + what);
        } catch (ValueInstantiationException e) {
            if (e.getCause() instanceof SpecException s) {
                throw s;
            }
            throw new SpecException(null, what + ": " + e.getOriginalMessage());
        } catch (MismatchedInputException e) {
            String option = e.getPath().isEmpty() ? null : e.getPath().getLast().getFieldName();
            if (e instanceof InvalidFormatException f && f.getTargetType() != null && f.getTargetType().isEnum()
                    && Word.class.isAssignableFrom(f.getTargetType()) && f.getValue() instanceof String word) {
                throw SpecException.notOneOf(option, word, Word.words(f.getTargetType()));
            }
            throw new SpecException(option, "has a value of the wrong type for " + what + ": " + firstLine(e.getOriginalMessage()));
        } catch (JsonProcessingException e) {
            throw new SpecException(null, what + ": " + firstLine(e.getOriginalMessage()));
        }
    }

    private static void merge(ObjectNode into, ObjectNode given) {
        for (var e : given.properties()) {
            JsonNode have = into.get(e.getKey());
            if (have instanceof ObjectNode o && e.getValue() instanceof ObjectNode g) {
                merge(o, g);
            } else {
                into.set(e.getKey(), e.getValue());
            }
        }
    }

    private static String firstLine(String s) {
        int nl = s == null ? -1 : s.indexOf('\n');
        return nl < 0 ? String.valueOf(s) : s.substring(0, nl);
    }

    /**
     * An option's value that is one of a few words: an enum whose JSON (and flag value) is
     * {@link #word()}, its name in lower case unless it says otherwise.
     */
    public interface Word {
        @com.fasterxml.jackson.annotation.JsonValue
        default String word() {
            return ((Enum<?>) this).name().toLowerCase(java.util.Locale.ROOT);
        }

        /** The constant of {@code type} whose word is {@code value}, or a {@link SpecException} naming {@code option} and the words. */
        static <E extends Enum<E> & Word> E of(Class<E> type, String option, String value) {
            for (E e : type.getEnumConstants()) {
                if (e.word().equals(value)) {
                    return e;
                }
            }
            throw SpecException.notOneOf(option, String.valueOf(value), words(type));
        }

        /** The words of {@code type}, an enum of words, in its order. */
        static String[] words(Class<?> type) {
            Object[] constants = type.getEnumConstants();
            String[] words = new String[constants.length];
            for (int i = 0; i < words.length; i++) {
                words[i] = ((Word) constants[i]).word();
            }
            return words;
        }
    }
}
