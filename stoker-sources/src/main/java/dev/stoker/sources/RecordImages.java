package dev.stoker.sources;

import dev.stoker.CorruptRecordException;
import dev.stoker.Dataset;
import dev.stoker.formats.records.Numbers;
import dev.stoker.formats.records.RecordSource;
import dev.stoker.formats.records.Tensor;
import dev.stoker.formats.tar.TarSample;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A record format's images as the image pipeline takes samples: the encoded image of field
 * {@code image} (bytes; a list of one, as a {@code tf.train.Example}'s {@code bytes_list}; or a
 * Hugging Face {@code Image} struct's {@code bytes}) as the sample's image, and the integer of
 * field {@code label} (null: none) as its {@code cls}.
 */
final class RecordImages implements Dataset<TarSample> {
    private final RecordSource records;
    private final String[] image;
    private final String[] label;

    RecordImages(RecordSource records, String image, String label) {
        this.records = records;
        this.image = image.split("\\.", -1);
        this.label = label == null ? null : label.split("\\.", -1);
    }

    @Override
    public long size() {
        return records.size();
    }

    @Override
    public String name() {
        return records.name();
    }

    @Override
    public long fingerprint() {
        return records.fingerprint();
    }

    @Override
    public long shardsLeftOut() {
        return records.shardsLeftOut();
    }

    @Override
    public TarSample get(long index) throws IOException {
        Map<String, Object> r = records.get(index);
        Map<String, MemorySegment> fields = new LinkedHashMap<>();
        Object img = RecordSource.lookup(r, image);
        if (img instanceof Map<?, ?> m && m.containsKey("bytes")) { // a Hugging Face Image: {bytes, path}
            img = m.get("bytes");
        }
        if (img instanceof List<?> l && l.size() == 1) {
            img = l.get(0);
        }
        if (!(img instanceof byte[] b)) {
            throw new CorruptRecordException(records.where(index), -1, "field '" + String.join(".", image) + "' holds "
                    + (img == null ? "nothing" : "a " + img.getClass().getSimpleName()) + ", not an encoded image's bytes");
        }
        fields.put("jpg", MemorySegment.ofArray(b)); // decoded by its bytes: JPEG, PNG, or what ImageIO reads
        if (label != null) {
            String cls = integer(RecordSource.lookup(r, label), index);
            fields.put("cls", MemorySegment.ofArray(cls.getBytes(StandardCharsets.US_ASCII)));
        }
        return new TarSample(Long.toString(index), records.where(index), fields);
    }

    private String integer(Object v, long index) throws CorruptRecordException {
        if (v instanceof Numbers n && n.size() == 1) {
            v = n.dtype().byteSize() == 8 ? (Object) ByteBuffer.wrap(n.data()).order(ByteOrder.LITTLE_ENDIAN).getLong() : v;
        }
        if (v instanceof Tensor t && t.shape().length == 0) {
            ByteBuffer b = ByteBuffer.wrap(t.data()).order(ByteOrder.LITTLE_ENDIAN);
            v = switch (t.dtype()) {
                case INT8 -> (long) b.get();
                case UINT8 -> (long) (b.get() & 0xFF);
                case INT16 -> (long) b.getShort();
                case UINT16 -> (long) (b.getShort() & 0xFFFF);
                case INT32 -> (long) b.getInt();
                case UINT32 -> b.getInt() & 0xFFFFFFFFL;
                case INT64 -> b.getLong();
                default -> v;
            };
        }
        if (v instanceof Long || v instanceof Integer || v instanceof BigInteger) {
            return v.toString();
        }
        throw new CorruptRecordException(records.where(index), -1, "field '" + String.join(".", label) + "' holds "
                + (v == null ? "nothing" : v.toString()) + ", not one integer label");
    }
}
