package dev.stoker.sources;

import dev.stoker.formats.tfrecord.TfRecordFile;
import java.io.IOException;
import java.util.List;
import java.util.Locale;

/**
 * TFRecord files as they are (local paths, or http(s):// and s3:// URLs read through
 * {@code cache}), one after the other, their records decoded as {@code tf.train.Example}s
 * (each feature a field), {@code SequenceExample}s, or kept raw ({@link TfRecordFile}).
 *
 * @param compression auto (by name, then by content), none, gzip or zlib
 * @param decode      example, sequence_example or raw
 * @param fields      the features to batch (empty: all; dotted names for a sequence's parts)
 * @param image       the feature of encoded images (JPEG, PNG) to decode, crop and flip by {@code images}
 *                    (whose {@code label} is the feature of integer labels); null: the features themselves
 */
public record TfRecord(List<String> paths, String compression, String decode, List<String> fields, String image, Images images,
                       RemoteCache cache) implements SourceSpec {
    public TfRecord {
        paths = paths == null ? List.of() : List.copyOf(paths);
        fields = fields == null ? List.of() : List.copyOf(fields);
        SpecException.oneOf("compression", compression, "auto", "none", "gzip", "zlib");
        RecordFormats.decode(decode);
        images = images == null ? Images.DEFAULT : images;
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /** The files at {@code paths}, their records read as Examples. */
    public static TfRecord of(List<String> paths) {
        return new TfRecord(paths, "auto", "example", List.of(), null, Images.DEFAULT, RemoteCache.DEFAULT);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        TfRecordFile.Compression c = TfRecordFile.Compression.valueOf(compression.toUpperCase(Locale.ROOT));
        return RecordFormats.open(kind(), paths, cache, loader, fields, image, images, p -> TfRecordFile.open(p, c, RecordFormats.decode(decode)));
    }
}
