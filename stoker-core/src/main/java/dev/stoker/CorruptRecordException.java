package dev.stoker;

/**
 * One malformed record of a shard that its reader has already moved past (a JSON line that is
 * not JSON): reading the shard can go on with the next record. A {@link StreamingDataset}'s
 * reader throws it from {@code next()}, and the loader applies its {@link ErrorPolicy}: under
 * {@link ErrorPolicy#FAIL} the pass fails naming the shard and the record; under
 * {@link ErrorPolicy#SKIP_SAMPLE} the record is left out and counted in
 * {@link LoaderStats#skipped()}; under {@link ErrorPolicy#SKIP_SHARD} the rest of the shard goes
 * too. Any other exception from a reader ends its shard.
 */
public class CorruptRecordException extends CorruptShardException {

    /** {@code offset} is a byte offset, or -1 when the record's bytes are not at one place (compressed). */
    public CorruptRecordException(String resource, long offset, String what) {
        super(resource, offset, what);
    }
}
