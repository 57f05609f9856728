package dev.stoker;

import java.lang.foreign.MemorySegment;

/**
 * Writes one sample into its row of a batch. The loader calls it once per sample, with the row
 * where the sample belongs; the batch is written once, in place. For a {@link DirectDataset} it
 * runs on the workers; for a {@link StreamingDataset}, whose batch rows are known only in stream
 * order, on the consumer's thread, so there it should only copy (costly work goes in the
 * {@link Transform}, which runs on the workers).
 */
public interface Collator<T> {

    /** The fields this collator writes. */
    Schema schema();

    void write(T sample, Row row) throws Exception;

    /** Variable-length byte arrays as field {@code name}. */
    static Collator<byte[]> bytes(String name, long bytesHint) {
        Schema schema = Schema.of(Field.bytes(name, bytesHint));
        return new Collator<>() {
            @Override
            public Schema schema() {
                return schema;
            }

            @Override
            public void write(byte[] sample, Row row) {
                row.append(0, sample);
            }
        };
    }

    /** Fixed-size samples (any {@link MemorySegment} of exactly {@code field.sampleBytes()} bytes). */
    static Collator<MemorySegment> tensor(Field field) {
        Schema schema = Schema.of(field);
        long n = field.sampleBytes();
        return new Collator<>() {
            @Override
            public Schema schema() {
                return schema;
            }

            @Override
            public void write(MemorySegment sample, Row row) {
                if (sample.byteSize() != n) {
                    throw new IllegalArgumentException("field '" + field.name() + "' expects " + n
                            + " bytes per sample, got " + sample.byteSize());
                }
                row.copy(0, sample, 0, n);
            }
        };
    }

    /** Scalar longs as an int64 field. */
    static Collator<Long> int64(String name) {
        return int64(name, Long::longValue);
    }

    /** One long of each sample, as {@code value} tells it, as an int64 field. */
    static <T> Collator<T> int64(String name, java.util.function.ToLongFunction<? super T> value) {
        Schema schema = Schema.of(Field.scalar(name, DType.INT64));
        return new Collator<>() {
            @Override
            public Schema schema() {
                return schema;
            }

            @Override
            public void write(T sample, Row row) {
                row.putLong(0, 0, value.applyAsLong(sample));
            }
        };
    }
}
