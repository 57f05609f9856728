package dev.stoker.formats.tar;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.stoker.CorruptShardException;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.npy.NpyArray;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Decoders for the fields of a {@link TarSample}, by what WebDataset's field names mean:
 * {@code cls} (an ASCII integer), {@code txt} (UTF-8 text), {@code json}, {@code npy}. Images
 * ({@code jpg}, {@code png}) decode through {@code dev.stoker.formats.image}: {@code
 * Image.decode(sample.field("jpg"), image, name)}, then {@code image.rgb()} or {@code copyRgb}
 * for uint8 HWC. Every error names the shard, the sample and the field.
 */
public final class Fields {
    private static final JsonFactory JSON = new JsonFactory();

    private Fields() {
    }

    /** An integer field such as {@code cls}: ASCII digits, an optional sign, surrounding whitespace. */
    public static long integer(TarSample s, String field) throws CorruptShardException {
        MemorySegment b = s.field(field);
        long v = 0;
        boolean any = false;
        boolean neg = false;
        boolean done = false;
        for (long i = 0; i < b.byteSize(); i++) {
            byte c = b.get(ValueLayout.JAVA_BYTE, i);
            if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
                done = any;
                continue;
            }
            if (done) {
                throw bad(s, field, "is not one integer");
            }
            if (c == '-' && !any && !neg) {
                neg = true;
            } else if (c >= '0' && c <= '9' && v <= (Long.MAX_VALUE - 9) / 10) {
                v = v * 10 + (c - '0');
                any = true;
            } else {
                throw bad(s, field, "is not an integer");
            }
        }
        if (!any) {
            throw bad(s, field, "is empty");
        }
        return neg ? -v : v;
    }

    /** A UTF-8 text field such as {@code txt}. */
    public static String text(TarSample s, String field) throws CorruptShardException {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(s.field(field).asByteBuffer()).toString();
        } catch (CharacterCodingException e) {
            throw bad(s, field, "is not valid UTF-8");
        }
    }

    /** A JSON field: objects as maps (in order), arrays as lists, numbers as Long or Double. */
    public static Object json(TarSample s, String field) throws CorruptShardException {
        byte[] b = s.field(field).toArray(ValueLayout.JAVA_BYTE);
        try (JsonParser p = JSON.createParser(b)) {
            p.nextToken();
            Object v = value(p);
            if (p.nextToken() != null) {
                throw bad(s, field, "has more than one JSON value");
            }
            return v;
        } catch (IOException e) {
            throw bad(s, field, "is not JSON: " + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
        }
    }

    private static Object value(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        if (t == null) {
            throw new IOException("empty");
        }
        switch (t) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String k = p.currentName();
                    p.nextToken();
                    m.put(k, value(p));
                }
                return m;
            }
            case START_ARRAY -> {
                List<Object> l = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    l.add(value(p));
                }
                return l;
            }
            case VALUE_STRING -> {
                return p.getText();
            }
            case VALUE_NUMBER_INT -> {
                return p.getLongValue();
            }
            case VALUE_NUMBER_FLOAT -> {
                return p.getDoubleValue();
            }
            case VALUE_TRUE -> {
                return Boolean.TRUE;
            }
            case VALUE_FALSE -> {
                return Boolean.FALSE;
            }
            case VALUE_NULL -> {
                return null;
            }
            default -> throw new IOException("unexpected " + t);
        }
    }

    /** An {@code npy} field, read in place (the array lives as long as the sample's bytes). */
    public static NpyArray npy(TarSample s, String field) throws CorruptShardException {
        MemorySegment b = s.field(field);
        return Npy.of(b, s.url() + ":" + s.key() + "." + field);
    }

    private static CorruptShardException bad(TarSample s, String field, String what) {
        return new CorruptShardException(s.url(), -1, "sample '" + s.key() + "': field '" + field + "' " + what);
    }
}
