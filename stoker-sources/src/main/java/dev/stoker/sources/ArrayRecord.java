package dev.stoker.sources;

import dev.stoker.formats.riegeli.ArrayRecordFile;
import java.io.IOException;
import java.util.List;

/**
 * ArrayRecord files (Grain's format) as they are (local paths, or http(s):// and s3:// URLs read
 * through {@code cache}), one after the other, read by index ({@link ArrayRecordFile}).
 *
 * @param decode raw (each record's bytes, the field {@code record}), example or sequence_example
 *               (records that are {@code tf.train.Example}s)
 * @param fields the fields to batch (empty: all)
 * @param image  the field of encoded images (JPEG, PNG) to decode, crop and flip by {@code images}
 *               (its {@code label} the field of integer labels); null: the records' own fields
 */
public record ArrayRecord(List<String> paths, TfRecord.Decode decode, List<String> fields, String image, Images images, RemoteCache cache)
        implements SourceSpec {
    public ArrayRecord {
        paths = paths == null ? List.of() : List.copyOf(paths);
        fields = fields == null ? List.of() : List.copyOf(fields);
        decode = decode == null ? TfRecord.Decode.RAW : decode;
        images = images == null ? Images.DEFAULT : images;
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /** The files at {@code paths}, each record's bytes as it is. */
    public static ArrayRecord of(List<String> paths) {
        return new ArrayRecord(paths, TfRecord.Decode.RAW, List.of(), null, Images.DEFAULT, RemoteCache.DEFAULT);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        return RecordFormats.open(kind(), paths, cache, loader, fields, image, images, p -> ArrayRecordFile.open(p, RecordFormats.decode(decode)));
    }
}
