package dev.stoker;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Where a loader stands: everything a new loader needs to continue exactly where this one
 * stopped. A few numbers, serialisable as JSON with {@link #toJson()} and {@link #fromJson}.
 *
 * <p>The {@link #position()} is one of two kinds: {@link Indexed} for a dataset read by index,
 * {@link Streamed} for a {@link StreamingDataset}. {@code delivered} counts the batches delivered
 * in this epoch.
 *
 * @param sampler  the sampler's id; a resumed loader must use the same one
 * @param size     positions in an epoch's order (samples, or a stream's shards); a resumed loader
 *                 must have the same
 * @param data     the fingerprint of the data the state was saved from ({@link Dataset#fingerprint()};
 *                 0 when the dataset gives none): a resumed loader's data must have the same,
 *                 wherever its bytes live
 */
public record LoaderState(String sampler, long size, long seed, long epoch, int worldSize, int rank, int batchSize,
                          Position position, long delivered, long data) {
    static final int VERSION = 1;
    private static final JsonFactory JSON = new JsonFactory();

    public LoaderState {
        java.util.Objects.requireNonNull(sampler, "sampler");
        java.util.Objects.requireNonNull(position, "position");
    }

    /** Where in the epoch: by index or in a stream. */
    public sealed interface Position permits Indexed, Streamed {
    }

    /**
     * A position in an epoch read by index.
     *
     * @param segmentStart the epoch position where the current split among ranks began (0, or
     *                     where an elastic resume re-split the rest of the epoch)
     * @param rankOffset   the samples each rank has consumed from {@code segmentStart}
     * @param done         batches, numbered from {@code rankOffset} in units of the batch size,
     *                     that an unordered loader delivered ahead of the others (ascending)
     */
    public record Indexed(long segmentStart, long rankOffset, long[] done) implements Position {
        public static final Indexed START = new Indexed(0, 0, new long[0]);

        public Indexed {
            done = done.clone();
        }

        @Override
        public long[] done() {
            return done.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Indexed i && i.segmentStart == segmentStart && i.rankOffset == rankOffset
                    && Arrays.equals(i.done, done);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(segmentStart) * 31 * 31 + Long.hashCode(rankOffset) * 31 + Arrays.hashCode(done);
        }

        @Override
        public String toString() {
            return "Indexed[segmentStart=" + segmentStart + ", rankOffset=" + rankOffset + ", done=" + Arrays.toString(done) + "]";
        }
    }

    /**
     * A position in this rank's stream of shards.
     *
     * @param shards       this rank's shards finished
     * @param samples      the samples taken from the next one
     * @param blockEmitted with a shuffle window, {@code (shards, samples)} is where the current
     *                     block starts, and this many of its samples went out
     */
    public record Streamed(long shards, long samples, long blockEmitted) implements Position {
        public static final Streamed START = new Streamed(0, 0, 0);
    }

    /**
     * {@link #position()} as {@link Indexed}: a stream's at a shard boundary reads as one (NOTE
     * [State JSON]); any other stream position is refused.
     */
    Indexed indexed() {
        return switch (position) {
            case Indexed i -> i;
            case Streamed s when s.samples() == 0 && s.blockEmitted() == 0 -> new Indexed(0, s.shards(), new long[0]);
            case Streamed s -> throw new ResumeException("cannot resume: the state is a streaming dataset's (sample "
                    + s.samples() + " of shard " + s.shards() + "), this loader reads by index");
        };
    }

    /** {@link #position()} as {@link Streamed}, the same way round. */
    Streamed streamed() {
        return switch (position) {
            case Streamed s -> s;
            case Indexed i when i.segmentStart() == 0 && i.done.length == 0 -> new Streamed(i.rankOffset(), 0, 0);
            case Indexed i -> throw new ResumeException("cannot resume: the state is of a dataset read by index ("
                    + i.rankOffset() + " samples a rank from " + i.segmentStart() + "), this loader streams");
        };
    }

    /** This state, saved from data of fingerprint {@code data}. */
    LoaderState withData(long data) {
        return new LoaderState(sampler, size, seed, epoch, worldSize, rank, batchSize, position, delivered, data);
    }

    // NOTE [State JSON]: the JSON keeps version 1's flat keys, so that states saved before the
    // position had kinds still load: a stream's shards are "rankOffset", its samples
    // "sampleInShard". "position" says the kind; a state without it is a stream's when it has
    // samples or block progress, and otherwise reads as either kind (the numbers are the same).

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
            long[] done = new long[0];
            switch (position) {
                case Indexed i -> {
                    g.writeStringField("position", "indexed");
                    g.writeNumberField("segmentStart", i.segmentStart());
                    g.writeNumberField("rankOffset", i.rankOffset());
                    g.writeNumberField("sampleInShard", 0);
                    g.writeNumberField("blockEmitted", 0);
                    done = i.done;
                }
                case Streamed s -> {
                    g.writeStringField("position", "streamed");
                    g.writeNumberField("segmentStart", 0);
                    g.writeNumberField("rankOffset", s.shards());
                    g.writeNumberField("sampleInShard", s.samples());
                    g.writeNumberField("blockEmitted", s.blockEmitted());
                }
            }
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
     * Writes {@link #toJson()} (and a newline) to {@code file}, whole or not at all: into a hidden
     * temporary file beside it, renamed into place, so that no reader sees half a state.
     *
     * @throws NoSuchFileException when {@code file}'s folder does not exist, naming it
     */
    public void write(Path file) throws IOException {
        Path abs = file.toAbsolutePath();
        if (!Files.isDirectory(abs.getParent())) {
            throw new NoSuchFileException(file + ": cannot write: no such directory " + abs.getParent());
        }
        Path tmp = Files.createTempFile(abs.getParent(), "." + abs.getFileName(), ".tmp");
        try {
            Files.writeString(tmp, toJson() + "\n");
            Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /**
     * Reads a state {@link #write} wrote.
     *
     * @throws IllegalArgumentException naming the file and what is missing or malformed
     * @throws IOException              as reading the file throws it
     */
    public static LoaderState read(Path file) throws IOException {
        String json = Files.readString(file);
        try {
            return fromJson(json);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads a state written by {@link #toJson()}.
     *
     * @throws IllegalArgumentException naming what is missing or malformed
     */
    public static LoaderState fromJson(String json) {
        String sampler = null;
        String kind = null;
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
                    case "position" -> kind = p.getText();
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
        boolean streamed = kind == null ? v[9] > 0 || v[10] > 0 : switch (kind) {
            case "streamed" -> true;
            case "indexed" -> false;
            default -> throw new IllegalArgumentException("loader state: 'position' must be indexed or streamed, got '"
                    + kind + "'");
        };
        if (streamed && (v[6] != 0 || d.length > 0) || !streamed && (v[9] != 0 || v[10] != 0)) {
            throw new IllegalArgumentException("loader state: a " + (streamed ? "streamed" : "indexed")
                    + " position with another kind's numbers (segmentStart " + v[6] + ", done " + done + ", sampleInShard "
                    + v[9] + ", blockEmitted " + v[10] + ")");
        }
        Position position = streamed ? new Streamed(v[7], v[9], v[10]) : new Indexed(v[6], v[7], d);
        return new LoaderState(sampler, v[0], v[1], v[2], Math.toIntExact(v[3]), Math.toIntExact(v[4]),
                Math.toIntExact(v[5]), position, v[8], data[0]);
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
