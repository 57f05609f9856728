package dev.stoker.sources;

import dev.stoker.formats.tfrecord.TfRecordFile;
import dev.stoker.sources.Schema.Choices;
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
public record TfRecord(List<String> paths, @Choices({"auto", "none", "gzip", "zlib"}) String compression, Decode decode,
                       List<String> fields, String image, Images images, RemoteCache cache) implements SourceSpec {
    /** What a record is ({@code decode}): a {@code tf.train.Example}, a {@code SequenceExample}, or its bytes. */
    public enum Decode implements Specs.Word {
        /** {@code tf.train.Example}: each feature a field. */
        EXAMPLE,
        /** {@code tf.train.SequenceExample}: its context's and feature lists' features as dotted fields. */
        SEQUENCE_EXAMPLE,
        /** The record's bytes, as the field {@code record}. */
        RAW;

        /** The decoding named {@code word} ({@code example}, ...). */
        public static Decode of(String word) {
            return Specs.Word.of(Decode.class, "decode", word);
        }
    }

    public TfRecord {
        paths = paths == null ? List.of() : List.copyOf(paths);
        fields = fields == null ? List.of() : List.copyOf(fields);
        SpecException.oneOf("compression", compression, "auto", "none", "gzip", "zlib");
        decode = decode == null ? Decode.EXAMPLE : decode;
        images = images == null ? Images.DEFAULT : images;
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /** The files at {@code paths}, their records read as Examples. */
    public static TfRecord of(List<String> paths) {
        return new TfRecord(paths, "auto", Decode.EXAMPLE, List.of(), null, Images.DEFAULT, RemoteCache.DEFAULT);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        TfRecordFile.Compression c = TfRecordFile.Compression.valueOf(compression.toUpperCase(Locale.ROOT));
        return RecordFormats.open(kind(), paths, cache, loader, fields, image, images, p -> TfRecordFile.open(p, c, RecordFormats.decode(decode)));
    }
}
