package dev.stoker.sources;

import dev.stoker.Collator;
import dev.stoker.CorruptRecordException;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.formats.image.ImagePipeline;
import dev.stoker.formats.tar.TarSample;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The "none" transform's collator: each of {@code names} (sorted) a variable-length field of
 * the member's bytes, and with {@code keys} the sample's key. A sample without one of them
 * is bad data; so is one with others, unless the names were {@code chosen}.
 */
final class TarMembers implements Collator<TarSample> {
    private final String[] names;
    private final boolean chosen;
    private final boolean keys;
    private final Schema schema;

    TarMembers(List<String> names, boolean chosen, boolean keys) {
        this.names = new TreeSet<>(names).toArray(String[]::new);
        this.chosen = chosen;
        this.keys = keys;
        List<Field> fields = new ArrayList<>();
        for (String n : this.names) {
            if (n.isEmpty() || n.equals(ImagePipeline.KEY_FIELD)) {
                throw new SpecException("members", "'" + n + "' is not a member name");
            }
            fields.add(Field.bytes(n, 32 * 1024));
        }
        if (keys) {
            fields.add(Field.bytes(ImagePipeline.KEY_FIELD, 64));
        }
        this.schema = Schema.of(fields.toArray(Field[]::new));
    }

    @Override
    public Schema schema() {
        return schema;
    }

    @Override
    public void write(TarSample s, Row row) throws CorruptRecordException {
        Map<String, MemorySegment> fields = s.fields();
        if (!chosen && fields.size() != names.length) {
            throw differs(s);
        }
        for (int i = 0; i < names.length; i++) {
            MemorySegment f = fields.get(names[i]);
            if (f == null) {
                throw differs(s);
            }
            row.append(i, f, 0, f.byteSize());
        }
        if (keys) {
            row.append(names.length, s.key().getBytes(StandardCharsets.UTF_8));
        }
    }

    private CorruptRecordException differs(TarSample s) {
        return new CorruptRecordException(s.url(), -1, "sample '" + s.key() + "' has members "
                + new TreeSet<>(s.fields().keySet()) + ", not " + Arrays.toString(names)
                + (chosen ? "" : " as the first sample (the option members chooses which to take)"));
    }
}
