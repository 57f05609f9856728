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
 */
public record LoaderState(String sampler, long size, long seed, long epoch, int worldSize, int rank,
                          int batchSize, long segmentStart, long rankOffset, long sampleInShard, long blockEmitted,
                          long[] done, long delivered) {
    static final int VERSION = 1;
    private static final JsonFactory JSON = new JsonFactory();

    public LoaderState {
        done = done.clone();
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
        return new LoaderState(sampler, v[0], v[1], v[2], Math.toIntExact(v[3]), Math.toIntExact(v[4]),
                Math.toIntExact(v[5]), v[6], v[7], v[9], v[10], done.stream().mapToLong(Long::longValue).toArray(), v[8]);
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
