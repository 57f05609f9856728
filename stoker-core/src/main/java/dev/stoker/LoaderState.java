package dev.stoker;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a loader stands: everything a new loader needs to continue exactly where this one
 * stopped. A few numbers, serialisable as JSON with {@link #toJson()} and {@link #fromJson}.
 *
 * <p>{@code segmentStart} is the epoch position where the current split among ranks began (0,
 * or where an elastic resume re-split the rest of the epoch); {@code rankOffset} counts the
 * samples each rank has consumed from it; {@code done} lists batches, numbered from
 * {@code rankOffset} in units of {@code batchSize}, that an unordered loader delivered ahead of
 * the others; {@code delivered} counts the batches delivered in this epoch. For a
 * {@link StreamingDataset} positions are shards: {@code rankOffset} counts this rank's shards
 * finished and {@code sampleInShard} the samples taken from the next one; with a shuffle window
 * they give the start of the current block, of which {@code blockEmitted} samples went out.
 *
 * @param sampler      the sampler's id; a resumed loader must use the same one
 * @param size         positions in an epoch's order; a resumed loader must have the same
 * @param data         the fingerprint of the data the state was saved from ({@link Dataset#fingerprint()};
 *                     0 when the dataset gives none): a resumed loader's data must have the same,
 *                     wherever its bytes live
 */
public record LoaderState(String sampler, long size, long seed, long epoch, int worldSize, int rank,
                          int batchSize, long segmentStart, long rankOffset, long sampleInShard, long blockEmitted,
                          long[] done, long delivered, long data) {
    static final int VERSION = 1;
    private static final JsonFactory JSON = new JsonFactory();

    public LoaderState {
        done = done.clone();
    }

    /** A state with no data fingerprint. */
    public LoaderState(String sampler, long size, long seed, long epoch, int worldSize, int rank, int batchSize,
                       long segmentStart, long rankOffset, long sampleInShard, long blockEmitted, long[] done, long delivered) {
        this(sampler, size, seed, epoch, worldSize, rank, batchSize, segmentStart, rankOffset, sampleInShard, blockEmitted,
                done, delivered, 0);
    }

    /** This state, saved from data of fingerprint {@code data}. */
    LoaderState withData(long data) {
        return new LoaderState(sampler, size, seed, epoch, worldSize, rank, batchSize, segmentStart, rankOffset,
                sampleInShard, blockEmitted, done, delivered, data);
    }

    @Override
    public long[] done() {
        return done.clone();
    }

    public String toJson() {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberField("version", VERSION);
            g.writeStringField("sampler", sampler);
            g.writeNumberField("size", size);
            g.writeNumberField("seed", seed);
            g.writeNumberField("epoch", epoch);
            g.writeNumberField("worldSize", worldSize);
            g.writeNumberField("rank", rank);
            g.writeNumberField("batchSize", batchSize);
            g.writeNumberField("segmentStart", segmentStart);
            g.writeNumberField("rankOffset", rankOffset);
            g.writeNumberField("sampleInShard", sampleInShard);
            g.writeNumberField("blockEmitted", blockEmitted);
            g.writeArrayFieldStart("done");
            for (long d : done) {
                g.writeNumber(d);
            }
            g.writeEndArray();
            g.writeNumberField("delivered", delivered);
            if (data != 0) {
                g.writeStringField("data", Long.toHexString(data));
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /**
     * Reads a state written by {@link #toJson()}.
     *
     * @throws IllegalArgumentException naming what is missing or malformed
     */
    public static LoaderState fromJson(String json) {
        String sampler = null;
        long version = -1;
        long[] data = {0};
        long[] v = new long[11];
        boolean[] seen = new boolean[11];
        List<Long> done = new ArrayList<>();
        String[] names = {"size", "seed", "epoch", "worldSize", "rank", "batchSize", "segmentStart", "rankOffset", "delivered",
            "sampleInShard", "blockEmitted"};
        try (JsonParser p = JSON.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalArgumentException("loader state: expected a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                switch (name) {
                    case "version" -> version = p.getLongValue();
                    case "sampler" -> sampler = p.getText();
                    case "data" -> {
                        try {
                            data[0] = Long.parseUnsignedLong(p.getText(), 16);
                        } catch (NumberFormatException e) {
                            throw new IllegalArgumentException("loader state: 'data' must be a hexadecimal fingerprint, got '"
                                    + p.getText() + "'");
                        }
                    }
                    case "done" -> {
                        if (t != JsonToken.START_ARRAY) {
                            throw new IllegalArgumentException("loader state: 'done' must be an array");
                        }
                        while (p.nextToken() != JsonToken.END_ARRAY) {
                            done.add(p.getLongValue());
                        }
                    }
                    default -> {
                        int i = List.of(names).indexOf(name);
                        if (i < 0) {
                            p.skipChildren();
                        } else {
                            if (t != JsonToken.VALUE_NUMBER_INT) {
                                throw new IllegalArgumentException("loader state: '" + name + "' must be an integer");
                            }
                            v[i] = p.getLongValue();
                            seen[i] = true;
                        }
                    }
                }
            }
        } catch (IOException e) {
            String where = "";
            String what = e.getMessage();
            if (e instanceof com.fasterxml.jackson.core.JsonProcessingException jpe) {
                what = jpe.getOriginalMessage();
                if (jpe.getLocation() != null) {
                    where = " at line " + jpe.getLocation().getLineNr() + " column " + jpe.getLocation().getColumnNr();
                }
            }
            throw new IllegalArgumentException("loader state: malformed JSON" + where + ": "
                    + String.valueOf(what).lines().findFirst().orElse(""), e);
        }
        if (version != VERSION) {
            throw new IllegalArgumentException("loader state: version " + version + " is not supported (expected " + VERSION + ")");
        }
        if (sampler == null) {
            throw new IllegalArgumentException("loader state: missing 'sampler'");
        }
        for (int i = 0; i < names.length; i++) {
            if (!seen[i]) {
                throw new IllegalArgumentException("loader state: missing '" + names[i] + "'");
            }
        }
        long[] d = done.stream().mapToLong(Long::longValue).toArray();
        for (int i = 0; i < d.length; i++) {
            if (d[i] < 0 || i > 0 && d[i] <= d[i - 1]) {
                throw new IllegalArgumentException("loader state: 'done' must list distinct batch numbers >= 0 in order, got "
                        + done);
            }
        }
        if (v[0] < 0 || v[6] < 0 || v[6] > v[0] || v[7] < 0 || v[8] < 0 || v[9] < 0 || v[10] < 0 || v[3] < 1
                || v[4] < 0 || v[4] >= v[3] || v[5] < 1) {
            throw new IllegalArgumentException("loader state: out of range (size " + v[0] + ", segmentStart " + v[6]
                    + ", rankOffset " + v[7] + ", worldSize " + v[3] + ", rank " + v[4] + ", batchSize " + v[5] + ")");
        }
        return new LoaderState(sampler, v[0], v[1], v[2], Math.toIntExact(v[3]), Math.toIntExact(v[4]),
                Math.toIntExact(v[5]), v[6], v[7], v[9], v[10], d, v[8], data[0]);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LoaderState s && toJson().equals(s.toJson());
    }

    @Override
    public int hashCode() {
        return toJson().hashCode();
    }

    @Override
    public String toString() {
        return toJson();
    }
}
