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
 * @param allRanks the state holds where every rank of its run stood: a one-rank run's, or the
 *                 {@link #merge} of every rank's states of a dataset read by index; only such a
 *                 state resumes another rank, or another world size, mid-epoch (NOTE [Elastic])
 */
public record LoaderState(String sampler, long size, long seed, long epoch, int worldSize, int rank, int batchSize,
                          Position position, long delivered, long data, boolean allRanks) {
    static final int VERSION = 1;
    private static final JsonFactory JSON = new JsonFactory();

    public LoaderState {
        java.util.Objects.requireNonNull(sampler, "sampler");
        java.util.Objects.requireNonNull(position, "position");
        allRanks |= worldSize == 1;
    }

    /** One rank's state ({@link #allRanks} only when it is a one-rank run's). */
    public LoaderState(String sampler, long size, long seed, long epoch, int worldSize, int rank, int batchSize,
                       Position position, long delivered, long data) {
        this(sampler, size, seed, epoch, worldSize, rank, batchSize, position, delivered, data, false);
    }

    /** Where in the epoch: by index or in a stream. */
    public sealed interface Position permits Indexed, Streamed, Streams {
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
     * @param shardCheck   the content check of the shard resumed into ({@link StreamingDataset#shardCheck}),
     *                     taken when the position lies inside it; 0: none (at a shard boundary, or
     *                     a dataset that gives none). NOTE [Shard check]
     */
    public record Streamed(long shards, long samples, long blockEmitted, long shardCheck) implements Position {
        public static final Streamed START = new Streamed(0, 0, 0);

        public Streamed {
            if (shards < 0 || samples < 0 || blockEmitted < 0) {
                throw new IllegalArgumentException("a stream position is never negative, got shard " + shards
                        + ", sample " + samples + ", block emitted " + blockEmitted);
            }
        }

        /** A position with no shard check. */
        public Streamed(long shards, long samples, long blockEmitted) {
            this(shards, samples, blockEmitted, 0);
        }

        /** Whether resuming here skips samples of a shard (so that the shard must be the one the state saw). */
        boolean insideShard() {
            return samples > 0 || blockEmitted > 0;
        }
    }

    /**
     * A streaming dataset's epoch split into {@code count} streams, and where each stream in
     * {@code at} stands (NOTE [Elastic streams]). A rank's own state holds its streams; the
     * {@link #merge} of every rank's states holds them all, and resumes at any world size up to
     * {@code count}.
     */
    public record Streams(int count, Tail tail, java.util.SortedMap<Integer, Streamed> at) implements Position {
        public Streams {
            java.util.Objects.requireNonNull(tail, "tail");
            if (count < 1) {
                throw new IllegalArgumentException("a stream-split epoch has at least one stream, got " + count);
            }
            at = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(at));
            if (!at.isEmpty() && (at.firstKey() < 0 || at.lastKey() >= count)) {
                throw new IllegalArgumentException("streams " + at.keySet() + " are not all in [0, " + count + ")");
            }
        }

        /** An epoch's start: {@code count} streams split with {@code tail}, those of {@code rank} of {@code worldSize} at their start. */
        static Streams start(int count, Tail tail, int rank, int worldSize) {
            java.util.TreeMap<Integer, Streamed> at = new java.util.TreeMap<>();
            for (int c = rank; c < count; c += worldSize) {
                at.put(c, Streamed.START);
            }
            return new Streams(count, tail, at);
        }

        /** The same split with only the streams {@code rank} of {@code worldSize} reads. */
        Streams of(int rank, int worldSize) {
            java.util.TreeMap<Integer, Streamed> own = new java.util.TreeMap<>();
            for (int c = rank; c < count; c += worldSize) {
                if (at.containsKey(c)) {
                    own.put(c, at.get(c));
                }
            }
            return new Streams(count, tail, own);
        }
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
            case Streams s -> throw new ResumeException("cannot resume: the state is a streaming dataset's (" + s.count()
                    + " streams), this loader reads by index");
        };
    }

    /**
     * The states of every rank of one run, taken at one point of an epoch, as one state: for a
     * streaming dataset, every stream's position, so that a run of any world size (up to the
     * streams' count) resumes from it (NOTE [Elastic streams]); for a dataset read by index,
     * where ranks move in lockstep, their common position.
     *
     * @throws IllegalArgumentException when the states are not of one run at one point: naming
     *                                  what differs
     */
    public static LoaderState merge(java.util.Collection<LoaderState> states) {
        if (states.isEmpty()) {
            throw new IllegalArgumentException("loader states: nothing to merge");
        }
        LoaderState first = states.iterator().next();
        if (states.size() == 1) {
            return first;
        }
        long epoch = Long.MAX_VALUE;
        for (LoaderState s : states) {
            if (!s.sampler.equals(first.sampler) || s.size != first.size || s.seed != first.seed
                    || s.batchSize != first.batchSize || s.data != first.data || s.worldSize != first.worldSize
                    || s.position instanceof Indexed != first.position instanceof Indexed) {
                throw new IllegalArgumentException("loader states: not of one run (rank " + first.rank + ": "
                        + first.describe() + "; rank " + s.rank + ": " + s.describe() + ")");
            }
            epoch = Math.min(epoch, s.epoch);
        }
        java.util.TreeMap<Integer, Streamed> at = new java.util.TreeMap<>();
        java.util.List<LoaderState> finished = new java.util.ArrayList<>();
        LoaderState in = null;
        int count = 0;
        Tail tail = Tail.PAD;
        long delivered = 0;
        for (LoaderState s : states) {
            if (s.epoch != epoch) {
                // a rank that finished the epoch (its share was smaller) is at the next one's start
                if (s.epoch != epoch + 1 || s.delivered != 0 || s.position instanceof Indexed) {
                    throw new IllegalArgumentException("loader states: not of one point of the run (rank " + s.rank
                            + " delivered " + s.delivered + " batches of epoch " + s.epoch + ", another rank is in epoch "
                            + epoch + ")");
                }
                finished.add(s);
                continue;
            }
            in = s;
            delivered = Math.max(delivered, s.delivered);
            if (first.position instanceof Indexed i) {
                if (!(s.position instanceof Indexed j) || j.segmentStart() != i.segmentStart()
                        || j.rankOffset() != i.rankOffset() || j.done.length > 0 || i.done.length > 0) {
                    throw new IllegalArgumentException("loader states: ranks of a dataset read by index move in lockstep,"
                            + " but rank " + first.rank + " is at " + first.position + " and rank " + s.rank + " at "
                            + s.position);
                }
                continue;
            }
            Streams own = s.streams(Tail.PAD);
            if (count != 0 && (own.count() != count || own.tail() != tail)) {
                throw new IllegalArgumentException("loader states: rank " + s.rank + "'s epoch is split into " + own.count()
                        + " streams (" + own.tail() + "), another rank's into " + count + " (" + tail + ")");
            }
            count = own.count();
            tail = own.tail();
            for (var e : own.at().entrySet()) {
                Streamed before = at.putIfAbsent(e.getKey(), e.getValue());
                if (before != null && !before.equals(e.getValue())) {
                    throw new IllegalArgumentException("loader states: stream " + e.getKey() + " is at " + before
                            + " in one state and at " + e.getValue() + " in another (states of different points?)");
                }
            }
        }
        for (LoaderState s : finished) { // every stream it read is done ("size" shards is past any stream's end)
            for (int c = s.rank; c < count; c += s.worldSize) {
                at.put(c, new Streamed(s.size, 0, 0));
            }
        }
        if (in.position instanceof Indexed) {
            java.util.List<Integer> missing = new java.util.ArrayList<>();
            for (int r = 0; r < first.worldSize; r++) {
                final int rank = r;
                if (states.stream().noneMatch(s -> s.rank == rank)) {
                    missing.add(r);
                }
            }
            if (!missing.isEmpty()) {
                throw new IllegalArgumentException("loader states: a dataset read by index resumes from every rank's state,"
                        + " and ranks " + missing + " of " + first.worldSize + " are missing");
            }
            return new LoaderState(first.sampler, first.size, first.seed, epoch, first.worldSize, 0, first.batchSize,
                    in.position, delivered, first.data, true);
        }
        return new LoaderState(first.sampler, first.size, first.seed, epoch, first.worldSize, 0, first.batchSize,
                new Streams(count, tail, at), delivered, first.data);
    }

    private String describe() {
        return "sampler " + sampler + ", " + size + " positions, seed " + seed + ", epoch " + epoch + ", world size "
                + worldSize + ", batch size " + batchSize + ", data " + Long.toHexString(data);
    }

    /**
     * {@link #position()} as {@link Streams}, the same way round: a {@link Streamed} position (or
     * an indexed one at a shard boundary) is stream {@code rank} of {@code worldSize}, one stream
     * a rank split with {@code tail} (the loader's), the split of a run that did not set its streams.
     */
    Streams streams(Tail tail) {
        if (position instanceof Streams s) {
            return s;
        }
        Streamed one = switch (position) {
            case Streamed s -> s;
            case Indexed i when i.segmentStart() == 0 && i.done.length == 0 -> new Streamed(i.rankOffset(), 0, 0);
            case Indexed i -> throw new ResumeException("cannot resume: the state is of a dataset read by index ("
                    + i.rankOffset() + " samples a rank from " + i.segmentStart() + "), this loader streams");
            case Streams s -> throw new AssertionError();
        };
        return new Streams(worldSize, tail, new java.util.TreeMap<>(java.util.Map.of(rank, one)));
    }

    /** This state, saved from data of fingerprint {@code data}. */
    LoaderState withData(long data) {
        return new LoaderState(sampler, size, seed, epoch, worldSize, rank, batchSize, position, delivered, data, allRanks);
    }

    // NOTE [State JSON]: the JSON keeps version 1's flat keys, so that states saved before the
    // position had kinds still load: a stream's shards are "rankOffset", its samples
    // "sampleInShard". "position" says the kind; a state without it is a stream's when it has
    // samples or block progress, and otherwise reads as either kind (the numbers are the same).
    // A "streams" position (NOTE [Elastic streams]) keeps those numbers at 0, its count in
    // "streams", how the shards were split in "tail" and each stream it knows in "at" as
    // [stream, shards, samples, blockEmitted], with a fifth number, the shard check, when it has one
    // (a "streamed" position keeps it in "shardCheck", in hexadecimal).

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
                    if (s.shardCheck() != 0) {
                        g.writeStringField("shardCheck", Long.toHexString(s.shardCheck()));
                    }
                }
                case Streams s -> {
                    g.writeStringField("position", "streams");
                    g.writeNumberField("segmentStart", 0);
                    g.writeNumberField("rankOffset", 0);
                    g.writeNumberField("sampleInShard", 0);
                    g.writeNumberField("blockEmitted", 0);
                    g.writeNumberField("streams", s.count());
                    g.writeStringField("tail", s.tail().name().toLowerCase(java.util.Locale.ROOT));
                    g.writeArrayFieldStart("at");
                    for (var e : s.at().entrySet()) {
                        Streamed at = e.getValue();
                        g.writeArray(new long[] {e.getKey(), at.shards(), at.samples(), at.blockEmitted(), at.shardCheck()},
                                0, at.shardCheck() == 0 ? 4 : 5);
                    }
                    g.writeEndArray();
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
            if (allRanks && worldSize > 1) {
                g.writeBooleanField("allRanks", true);
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /**
     * Writes {@link #toJson()} (and a newline) to {@code file}, whole or not at all: into a hidden
     * temporary file beside it, flushed to disk and renamed into place, so that no reader sees
     * half a state ({@link dev.stoker.storage.io.PendingFile}).
     *
     * @throws NoSuchFileException when {@code file}'s folder does not exist, naming it
     * @throws java.nio.file.FileSystemException when {@code file} is not a regular file (a device,
     *                                           a FIFO, a folder), naming it
     */
    public void write(Path file) throws IOException {
        byte[] json = (toJson() + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        dev.stoker.storage.io.PendingFile.write(file, out -> out.write(json));
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
     * A state's JSON ({@link #fromJson}), or a JSON array of the states of every rank of a run,
     * {@link #merge}d (what a streaming dataset resumed at another world size takes).
     *
     * @throws IllegalArgumentException naming what is malformed, or why the states do not merge
     */
    public static LoaderState fromJsonStates(String json) {
        String t = json.strip();
        if (!t.startsWith("[")) {
            return fromJson(json);
        }
        List<LoaderState> states = new ArrayList<>();
        try (JsonParser p = JSON.createParser(t)) {
            p.nextToken();
            while (p.nextToken() == JsonToken.START_OBJECT) {
                int from = (int) p.currentTokenLocation().getCharOffset();
                p.skipChildren();
                int to = (int) p.currentTokenLocation().getCharOffset() + 1;
                try {
                    states.add(fromJson(t.substring(from, to)));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("loader states: state " + states.size() + ": " + e.getMessage(), e);
                }
            }
            if (p.currentToken() != JsonToken.END_ARRAY || p.nextToken() != null) {
                throw new IllegalArgumentException("loader states: expected a JSON array of states, found "
                        + p.currentToken() + " after state " + states.size());
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("loader states: malformed JSON: " + e.getMessage().lines().findFirst().orElse(""), e);
        }
        return merge(states);
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
        long[] shardCheck = {0};
        boolean[] allRanks = {false};
        long[] v = new long[11];
        boolean[] seen = new boolean[11];
        List<Long> done = new ArrayList<>();
        long streamCount = -1;
        String tailName = null;
        java.util.TreeMap<Integer, Streamed> at = new java.util.TreeMap<>();
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
                    case "shardCheck" -> {
                        try {
                            shardCheck[0] = Long.parseUnsignedLong(p.getText(), 16);
                        } catch (NumberFormatException e) {
                            throw new IllegalArgumentException("loader state: 'shardCheck' must be hexadecimal, got '"
                                    + p.getText() + "'");
                        }
                    }
                    case "tail" -> tailName = p.getText();
                    case "allRanks" -> {
                        if (!t.isBoolean()) {
                            throw new IllegalArgumentException("loader state: 'allRanks' must be true or false");
                        }
                        allRanks[0] = p.getBooleanValue();
                    }
                    case "streams" -> {
                        if (t != JsonToken.VALUE_NUMBER_INT) {
                            throw new IllegalArgumentException("loader state: 'streams' must be an integer");
                        }
                        streamCount = p.getLongValue();
                    }
                    case "at" -> {
                        if (t != JsonToken.START_ARRAY) {
                            throw new IllegalArgumentException("loader state: 'at' must be an array");
                        }
                        while (p.nextToken() != JsonToken.END_ARRAY) {
                            long[] e = new long[5];
                            int n = 0;
                            if (p.currentToken() == JsonToken.START_ARRAY) {
                                while (p.nextToken() == JsonToken.VALUE_NUMBER_INT && n < 5) {
                                    e[n++] = p.getLongValue();
                                }
                            }
                            if (n < 4 || p.currentToken() != JsonToken.END_ARRAY || e[0] < 0 || e[0] > Integer.MAX_VALUE
                                    || e[1] < 0 || e[2] < 0 || e[3] < 0) {
                                throw new IllegalArgumentException("loader state: each of 'at' must be [stream, shards, "
                                        + "samples, blockEmitted], integers >= 0, and optionally the shard check (entry "
                                        + at.size() + ")");
                            }
                            if (at.put((int) e[0], new Streamed(e[1], e[2], e[3], e[4])) != null) {
                                throw new IllegalArgumentException("loader state: stream " + e[0] + " is twice in 'at'");
                            }
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
        if ("streams".equals(kind)) {
            if (streamCount < 1 || streamCount > Integer.MAX_VALUE || !at.isEmpty() && at.lastKey() >= streamCount) {
                throw new IllegalArgumentException("loader state: a 'streams' position needs 'streams' >= 1 and 'at' "
                        + "entries of streams below it (streams " + streamCount + ", at " + at.keySet() + ")");
            }
            if (v[6] != 0 || v[7] != 0 || v[9] != 0 || v[10] != 0 || d.length > 0) {
                throw new IllegalArgumentException("loader state: a 'streams' position keeps its streams in 'at', and"
                        + " another kind's numbers at 0 (segmentStart " + v[6] + ", rankOffset " + v[7] + ", sampleInShard "
                        + v[9] + ", blockEmitted " + v[10] + ", done " + done + ")");
            }
            Tail tail;
            try {
                tail = Tail.valueOf(String.valueOf(tailName).toUpperCase(java.util.Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("loader state: a 'streams' position's 'tail' must be pad, drop or none, got "
                        + (tailName == null ? "none" : "'" + tailName + "'"));
            }
            return new LoaderState(sampler, v[0], v[1], v[2], Math.toIntExact(v[3]), Math.toIntExact(v[4]),
                    Math.toIntExact(v[5]), new Streams((int) streamCount, tail, at), v[8], data[0]);
        }
        if (streamCount >= 0 || !at.isEmpty() || tailName != null) {
            throw new IllegalArgumentException("loader state: 'streams' and 'at' belong to a 'streams' position, not to "
                    + (kind == null ? "one without a kind" : "a '" + kind + "' one"));
        }
        boolean streamed = kind == null ? v[9] > 0 || v[10] > 0 : switch (kind) {
            case "streamed" -> true;
            case "indexed" -> false;
            default -> throw new IllegalArgumentException("loader state: 'position' must be indexed, streamed or streams,"
                    + " got '" + kind + "'");
        };
        if (streamed && (v[6] != 0 || d.length > 0) || !streamed && (v[9] != 0 || v[10] != 0 || shardCheck[0] != 0)) {
            throw new IllegalArgumentException("loader state: a " + (streamed ? "streamed" : "indexed")
                    + " position with another kind's numbers (segmentStart " + v[6] + ", done " + done + ", sampleInShard "
                    + v[9] + ", blockEmitted " + v[10] + ")");
        }
        Position position = streamed ? new Streamed(v[7], v[9], v[10], shardCheck[0]) : new Indexed(v[6], v[7], d);
        if (allRanks[0] && (streamed || v[4] != 0 || d.length > 0)) {
            throw new IllegalArgumentException("loader state: 'allRanks' is a merge's of a dataset read by index (rank 0,"
                    + " nothing delivered out of order), not of " + (streamed ? "a stream" : "rank " + v[4] + ", done " + done));
        }
        return new LoaderState(sampler, v[0], v[1], v[2], Math.toIntExact(v[3]), Math.toIntExact(v[4]),
                Math.toIntExact(v[5]), position, v[8], data[0], allRanks[0]);
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
