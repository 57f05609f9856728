package dev.stoker.formats.tfrecord;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Records as TensorFlow's protocol buffers ({@code tf.train.Example}, {@code SequenceExample})
 * or as raw bytes: how TFRecord and ArrayRecord files' records become named fields.
 */
public final class Examples {
    /** How a record's bytes become fields. */
    public enum Decode {
        /** {@code tf.train.Example}: feature name -> list of values. */
        EXAMPLE,
        /** {@code tf.train.SequenceExample}: {@code context} and {@code feature_lists}. */
        SEQUENCE_EXAMPLE,
        /** The record's bytes, as the one field {@code record}. */
        RAW
    }

    private Examples() {
    }

    /** The record's fields; IllegalArgumentException when it is not the message {@code decode} says. */
    public static Map<String, Object> decode(Decode decode, byte[] record) {
        return switch (decode) {
            case EXAMPLE -> Proto.example(record);
            case SEQUENCE_EXAMPLE -> Proto.sequenceExample(record);
            case RAW -> {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("record", record);
                yield m;
            }
        };
    }

    /** What {@code decode} expects, for errors. */
    public static String what(Decode decode) {
        return switch (decode) {
            case EXAMPLE -> "tf.train.Example";
            case SEQUENCE_EXAMPLE -> "tf.train.SequenceExample";
            case RAW -> "record";
        };
    }
}
