package dev.stoker.bridge;

import static dev.stoker.bridge.Protocol.*;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.stoker.Batch;
import dev.stoker.Batches;
import dev.stoker.Field;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.LoaderException;
import dev.stoker.LoaderState;
import dev.stoker.LoaderStats;
import dev.stoker.sources.LoaderSpec;
import dev.stoker.sources.Recipe;
import dev.stoker.sources.SpecException;
import dev.stoker.sources.Specs;
import java.io.EOFException;
import java.io.IOException;
import java.io.StringWriter;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.List;
import jdk.net.ExtendedSocketOptions;

/**
 * One client of a {@link BridgeServer}: its loader, its ring and its socket (docs/design, "The
 * Python bridge"). Messages are framed as {@link Protocol} says.
 *
 * <p>NOTE [Bridge flow]: the session runs up to {@code ahead} notices ahead of what the client
 * has taken. For each batch it writes the slot's header and queues READY; while the next batch is
 * made already ({@link Batches#nextReady}) it goes on, so that a run of ready batches is one write
 * and one wake-up of the client, and the queue goes out before the session waits for anything (a
 * worker, the client) and before any other message. When it does wait for the workers, it is woken
 * for a run of batches ({@link #run}, LoaderBuilder.wakeRun), not for each: two wake-ups a batch
 * (the session's, then the client's) cost more than the client's loop itself. The client reports
 * what it has taken, and the slots it gives back, in the ring, not in messages
 * ({@link Protocol#RING_TAKEN_AT} and the given-back queue): a store or two a batch, which the
 * session reads before each batch and each message. Only when the session must wait for the
 * client (as far ahead as allowed, or no slot left) does it say so in the ring
 * ({@link Protocol#RING_WAITS_AT}: a notice to be taken, a run's worth, or a slot given back); the
 * client sends LOOK when its report ends that wait. The two sides may write their words at the
 * same moment and each miss the other's, so the session sleeps at most {@link #WAIT_LOOK_MILLIS}
 * before it reads the report again. The session reads the socket only when it has a message
 * buffered, cannot go on, or every {@link #LOOK_NANOS} while it runs ahead: no batch costs a
 * message from the client, nor a round trip. Every READY and END carries a counter; the session
 * can give the loader's state after each (at a batch it keeps the pass's mark, {@link
 * Batches#mark}, and the state only when asked), so that a client that has consumed up to counter
 * {@code c} gets the state at {@code c} (STATE), and a pass that starts with batches the client
 * never consumed rebuilds the loader from that state instead of skipping them (PASS).
 *
 * <p>NOTE [Batches the user owns]: a slot the client has taken is the user's until the client
 * frees it, which it does when the last array or tensor viewing the batch is gone (or the user
 * releases it): not when the loop asks for the next batch, nor when a new pass starts. So the
 * loader is built with {@code holds} as large as the ring's bound allows ({@link ShmRing}: NOTE
 * [A ring that grows]), and its buffers are made as batches are held. A new pass (or a loaded
 * state, or another epoch) while the client still holds batches closes the loader and builds
 * another from the same position: the slots the client holds stay out of the new loader's pool
 * until they are freed. When the user holds so much that the ring is at its bound, the session
 * stops producing and waits for frees; the client says so.
 */
final class Session {
    private static final JsonFactory JSON = new JsonFactory();
    private static final java.lang.management.ThreadMXBean CPU = java.lang.management.ManagementFactory.getThreadMXBean();
    /** How often a session that is running ahead looks at the socket for a request (NOTE [Bridge flow]). */
    private static final long LOOK_NANOS = 2_000_000;
    /** The longest a session waiting for the client's report sleeps before it reads the report again. */
    private static final long WAIT_LOOK_MILLIS = 10;

    private final SocketChannel channel;
    private final Wire wire;
    private final Path shmDir;
    private final String ringName;
    private final ByteBuffer out = ByteBuffer.allocateDirect(4 << 10).order(ByteOrder.LITTLE_ENDIAN);

    /** Notices the session may send ahead of what the client has taken. */
    private int ahead;
    /** The ring's bound in bytes (0: half of the free shared memory). */
    private long ringBytes;
    /** The seed of the last loader built, which a rebuild keeps even when the build between failed. */
    private long builtSeed;
    /** Batches of the current loader the client may hold: as many as the ring's bound leaves. */
    private int holds;
    private String initialState;
    /** The client's source and loader, as JSON (Specs). */
    private String sourceJson;
    private String loaderJson;

    // the serving state (the session thread alone)
    /** The user this server serves (NOTE [Who may connect] in BridgeServer). */
    private final UserPrincipal serves;
    private Recipe recipe;
    private LoaderSpec spec;
    private ShmRing ring;
    private Loader loader;
    private Batches pass;
    private Batch[] outstanding;
    /** The counter of the notice that published each slot. */
    private long[] publishedAt;
    private int taken;
    private long counter;
    /** The last notice the client says it has taken. */
    private long reported;
    /**
     * The loader's state at each of the last notices (NOTE [Bridge flow]): at a batch, the pass's
     * mark, which costs nothing to keep, and the state only when asked; else the state itself.
     */
    private LoaderState[] states;
    private Batches[] markedPasses;
    private long[] marks;
    private long[] stateCounters;
    private boolean bye;
    private int initialSlots;
    /** Batches sent in this session, whichever loader made them. */
    private long published;
    private long publishNanos;
    private long spilledBytes;
    /** Waits for the client's report so far (RING_WAITS_AT tells one from the next). */
    private long waits;
    /** Of those, the ones the session slept in, and the sleeps that ended at their time bound. */
    private long clientWaits;
    private long clientWaitTimeouts;
    /** When the session last read the socket while it had batches to send (LOOK_NANOS). */
    private long looked;

    Session(SocketChannel channel, Path shmDir, String ringName, UserPrincipal serves) {
        this.serves = serves;
        this.channel = channel;
        this.wire = new Wire(channel);
        this.shmDir = shmDir;
        this.ringName = ringName;
    }

    /** Ends the session from another thread: closes the socket and wakes the session if it waits. */
    void stop() {
        try {
            channel.close();
        } catch (IOException e) {
            // closing
        }
        wire.wakeup();
    }

    /** Serves the client until it says goodbye or goes away; errors it should know of are sent to it. */
    void run() throws IOException {
        channel.configureBlocking(false);
        UserPrincipal peer = channel.getOption(ExtendedSocketOptions.SO_PEERCRED).user();
        if (!peer.equals(serves)) {
            System.err.println("stoker serve: refused a client of user " + peer.getName() + " (this server serves "
                    + serves.getName() + " only)");
            wire.sendError("permission", "this stoker server serves user " + serves.getName() + " only, not " + peer.getName()
                    + ": start a server of your own (stoker.Loader does when no server= is given)", null, -1, true);
            return;
        }
        int type = wire.nextMessage();
        if (type != OPEN) {
            throw new ProtocolException("the client's first message was " + type + ", not OPEN");
        }
        readOpen(wire.payload());
        wire.consume();
        if (ahead < 0 || ahead > 64) {
            wire.sendError("usage", "ahead must be in [1, 64] (0: chosen by the batch's size), got " + ahead, null, -1, true);
            return;
        }
        if (ringBytes < 0) {
            wire.sendError("usage", "ring_bytes must be positive (0: half of the free shared memory), got " + ringBytes, null, -1, true);
            return;
        }
        try {
            LoaderSpec loaderSpec = loaderJson == null ? LoaderSpec.DEFAULT : Specs.loader(loaderJson);
            if (sourceJson == null) {
                throw new SpecException("source", "is missing from OPEN");
            }
            try (Recipe r = Specs.open(Specs.source(sourceJson), loaderSpec)) {
                serve(r, loaderSpec);
            }
        } catch (LoaderException e) {
            wire.sendError("data", e.getMessage(), e.source(), e.index(), true);
        } catch (IllegalArgumentException e) {
            wire.sendError("usage", e.getMessage(), null, -1, true);
        } catch (ShmRing.NoRoomException e) {
            wire.sendError("resource", e.getMessage(), null, -1, true);
        } catch (ClientGone e) {
            throw e; // no one to tell
        } catch (ProtocolException e) {
            wire.sendError("protocol", e.getMessage(), null, -1, true);
            throw e;
        } catch (Exception e) {
            sendFailure(e, true);
        }
    }

    /** An exception's message for the client: its own, or its kind when it has none. */
    static String message(Throwable t) {
        String m = t.getMessage();
        return m != null ? m : t.getClass().getSimpleName();
    }

    /**
     * A failure the client is told of: bad data ({@code DataError} in Python) when it is an I/O
     * error, also one wrapped on its way (an {@code UncheckedIOException}, or a wrapper whose
     * message is only its cause's), in the data's own words, no class name; else internal.
     */
    private void sendFailure(Exception e, boolean fatal) throws IOException {
        Throwable t = e;
        while (t.getCause() != null && (t instanceof java.io.UncheckedIOException
                || java.util.Objects.equals(t.getMessage(), t.getCause().toString()))) {
            t = t.getCause();
        }
        wire.sendError(t instanceof IOException ? "data" : "internal", message(t), null, -1, fatal);
    }

    /** The client broke the protocol: the session ends, and says why. */
    static final class ProtocolException extends IOException {
        ProtocolException(String message) {
            super(message);
        }
    }

    /** The client's socket ended or broke: the session ends quietly. */
    static final class ClientGone extends EOFException {
        ClientGone(String message) {
            super(message);
        }
    }

    /** Serves the client's source, opened as {@code recipe}, with the loader {@code spec} describes. */
    private void serve(Recipe recipe, LoaderSpec spec) throws IOException {
        this.recipe = recipe;
        this.spec = spec;
        LoaderBuilder first = recipe.builder(spec);
        if (ahead == 0) {
            ahead = defaultAhead(Batch.bytesFor(first.schema(), spec.batchSize()));
        }
        int others = first.wakeRun(run(ahead)).buffers() - 1; // the loader's buffers besides the batches the client holds
        this.ring = ShmRing.create(shmDir, ringName, first.schema(), spec.batchSize(), others + ahead,
                ringBytes > 0 ? ringBytes : ShmRing.defaultBound(shmDir));
        this.initialSlots = ring.made();
        try {
            this.outstanding = new Batch[ring.slots()];
            this.publishedAt = new long[ring.slots()];
            this.states = new LoaderState[2 * ahead + 4];
            this.markedPasses = new Batches[states.length];
            this.marks = new long[states.length];
            this.stateCounters = new long[states.length];
            LoaderBuilder b = builder();
            spec.start(b, initialState != null ? LoaderState.fromJsonStates(initialState) : null);
            loader = b.build();
            builtSeed = loader.state().seed();
            remember();
            wire.send(HELLO, hello());
            int type = wire.nextMessage();
            if (type != MAPPED) {
                throw new ProtocolException("the client did not map the ring (message " + type + ")");
            }
            wire.consume();
            ring.unlink(); // both sides have it mapped: nothing is left behind, however either ends
            loop();
        } finally {
            if (loader != null) {
                loader.close();
            }
            ring.close();
            wire.close();
        }
    }

    /**
     * Notices the session sends ahead when the client did not say: as many as fit 4 MiB, between 2
     * and 32. Every slot in flight (published, not yet given back) is memory the workers write
     * again later: a W1 batch of 512 KiB costs a worker 70 µs when 8 run ahead and 100 µs when 32
     * do (40 slots in turn, past the caches). The client's report costs no message (NOTE [Bridge
     * flow]), so running less far ahead costs the session only the waits of a slower client.
     */
    static int defaultAhead(long batchBytes) {
        return (int) Math.clamp((4L << 20) / Math.max(1, batchBytes), 2, 32);
    }

    /**
     * The batches a run of notices holds when the session waits for the workers: half of what it
     * may send ahead, at most 8 (NOTE [Bridge flow]).
     */
    static int run(int ahead) {
        return Math.clamp(ahead / 2, 1, 8);
    }

    /**
     * A builder of the session's loader on the ring, holding as many batches as the ring's bound
     * leaves beside the loader's other buffers and the slots the client holds of closed loaders;
     * when that is none, waits for the client to free some (NOTE [Batches the user owns]).
     */
    private LoaderBuilder builder() throws IOException {
        LoaderBuilder b = recipe.builder(spec).wakeRun(run(ahead));
        int others = b.buffers() - 1;
        int room;
        while ((room = ring.slots() - others - ring.orphans()) < 1) {
            int type = wire.buffered();
            if (type >= 0) {
                if (type != LOOK) {
                    throw new ProtocolException("the client sent message " + type + " while the server waited for slots it holds");
                }
                wire.consume();
            }
            if (!awaitClient(WAITS_FOR_SLOT, () -> ring.slots() - others - ring.orphans() >= 1)) {
                throw new ClientGone("the client went away");
            }
        }
        holds = Math.min(room, ShmRing.MAX_SLOTS);
        return b.holds(holds).allocator(ring);
    }

    private void loop() throws IOException {
        looked = System.nanoTime();
        while (!bye && step()) {
            // a turn a batch or a message
        }
    }

    /**
     * One turn of the session's loop: a message, or a batch, or a wait. A method of its own, as
     * the loop runs once a session: the JIT compiles a method when it is called often, and a loop
     * only after tens of thousands of turns (an OSR compilation), which are W1's first ten epochs
     * interpreted. False when the client went away.
     */
    private boolean step() throws IOException {
        if (handleBuffered()) {
            return true;
        }
        drain();
        if (canProduce()) {
            long now = System.nanoTime();
            if (now - looked >= LOOK_NANOS) { // a request waits a few ms at most, not behind the run-ahead
                looked = now;
                if (!wire.readMore(false)) {
                    return false;
                }
                if (handleBuffered()) {
                    return true;
                }
            }
            produce();
            return true;
        }
        if (pass == null) {
            if (!wire.readMore(true)) {
                return false; // the client went away
            }
        } else if (!awaitClient(taken >= holds ? WAITS_FOR_SLOT : counter - ahead + run(ahead), this::canProduce)) {
            return false;
        }
        looked = System.nanoTime();
        return true;
    }

    private boolean canProduce() {
        return pass != null && taken < holds && counter - reported < ahead;
    }

    /**
     * The client's report in the ring (NOTE [Bridge flow]): the slots it gave back, and the last
     * notice its loop has taken.
     */
    private void drain() throws ProtocolException {
        int slot;
        while ((slot = ring.nextGivenBack()) >= 0) {
            free(slot);
        }
        long took = ring.clientTaken();
        if (took > counter) {
            throw new ProtocolException("the client says it took notice " + took + " of " + counter);
        }
        reported = Math.max(reported, took);
    }

    /**
     * Waits for the client's report to let the session go on ({@code goOn}), or for a message: says
     * in the ring what for ({@code n}: a notice taken, or {@link Protocol#WAITS_FOR_SLOT}), reads the
     * report once more, and sleeps until the client sends LOOK or a request. The client may have
     * made its report just as the word was written, unseen by both sides: the sleep is bounded by
     * {@link #WAIT_LOOK_MILLIS}, after which the session reads the report again. False when the
     * client went away.
     */
    private boolean awaitClient(long n, java.util.function.BooleanSupplier goOn) throws IOException {
        waits++;
        ring.waits((waits & 0x7FFF) << 48 | n);
        try {
            drain();
            if (goOn.getAsBoolean() || wire.buffered() >= 0) {
                return true;
            }
            clientWaits++;
            if (!wire.readMore(true, WAIT_LOOK_MILLIS)) {
                return false;
            }
            if (wire.buffered() < 0) {
                clientWaitTimeouts++; // the report came without its LOOK, or not at all yet
            }
            return true;
        } finally {
            ring.waits(0);
        }
    }

    /** Delivers the pass's next batch to the client, or its end, or its error. */
    private void produce() throws IOException {
        Batch b;
        try {
            if (!pass.nextReady()) {
                wire.flush(); // the notices kept go out before the session waits for a worker
            }
            if (!pass.hasNext()) {
                pass = null;
                counter++;
                remember();
                out.clear();
                out.putLong(counter).putLong(loader.batches());
                wire.send(END, out);
                return;
            }
            b = pass.next();
        } catch (LoaderException e) {
            pass = null;
            wire.sendError("data", e.getMessage(), e.source(), e.index(), false);
            return;
        } catch (RuntimeException e) {
            pass = null;
            sendFailure(e, false);
            return;
        }
        boolean timed = (counter & 15) == 0; // NOTE [Bridge flow]: one batch in 16 is timed, in CPU time
        long t0 = timed ? CPU.getCurrentThreadCpuTime() : 0;
        int slot = ring.slotOf(b);
        outstanding[slot] = b;
        taken++;
        counter++;
        publishedAt[slot] = counter;
        published++;
        rememberBatch();
        long spill = ring.publish(b, slot, counter);
        out.clear();
        out.putInt(slot).putInt(0).putLong(counter).putLong(spill);
        if (spill == 0) {
            wire.queue(READY, out); // sent with the run of batches ready after it (NOTE [Bridge flow])
        } else {
            sendSpilled(b, out, spill);
        }
        if (timed) {
            publishNanos += 16 * (CPU.getCurrentThreadCpuTime() - t0);
        }
    }

    /** Handles one message already read, if a whole one is buffered, after the report the client made before it. */
    private boolean handleBuffered() throws IOException {
        int type = wire.buffered();
        if (type < 0) {
            return false;
        }
        drain();
        ByteBuffer p = wire.payload();
        switch (type) {
            case LOOK -> {
                // the report is read (drain)
            }
            case PASS -> {
                long consumed = p.getLong();
                long epoch = p.getLong();
                wire.consume();
                startPass(consumed, epoch);
                return true;
            }
            case STATE -> {
                long consumed = p.getLong();
                wire.consume();
                wire.send(STATE_IS, Wire.utf8(stateAt(consumed).toJson()));
                return true;
            }
            case LOAD -> {
                long consumed = p.getLong();
                String state = StandardCharsets.UTF_8.decode(p).toString();
                wire.consume();
                LoaderState previous = stateAt(consumed);
                reclaim(consumed);
                try {
                    rebuild(LoaderState.fromJsonStates(state), -1);
                } catch (IllegalArgumentException e) {
                    rebuild(previous, -1); // where the client stood
                    wire.sendError("state", e.getMessage(), null, -1, false);
                    return true;
                }
                pass = null;
                reported = counter;
                wire.send(STARTED, started());
                return true;
            }
            case STATS -> {
                wire.consume();
                wire.send(STATS_ARE, stats());
                return true;
            }
            case BYE -> bye = true;
            default -> throw new ProtocolException("unknown message type " + type + " from the client");
        }
        wire.consume();
        return true;
    }

    /**
     * A new pass, after the batch with counter {@code consumed}. A pass that ran ahead of what the
     * client consumed is rebuilt from the state at that point; {@code epoch >= 0} asks for that
     * epoch from its start; -1 goes on from where the loader stands.
     */
    private void startPass(long consumed, long epoch) throws IOException {
        LoaderState at = stateAt(consumed);
        boolean held = reclaim(consumed);
        if (epoch >= 0 && (epoch != at.epoch() || at.delivered() != 0)) {
            rebuild(null, epoch);
        } else if (consumed != counter || held) {
            rebuild(at, -1); // NOTE [Batches the user owns]: a new pass of this loader would take back what the client holds
        }
        pass = loader.iterator();
        reported = counter; // the client counts from the STARTED it is sent now
        wire.send(STARTED, started());
    }

    /** A slot the client gives back: its batch goes back to the loader's pool, or, of a closed loader, the slot to the ring. */
    private void free(int slot) throws ProtocolException {
        Batch b = slot >= 0 && slot < outstanding.length ? outstanding[slot] : null;
        if (!ring.clientFree(slot)) {
            throw new ProtocolException("the client freed slot " + slot + ", which it does not hold");
        }
        if (b != null) {
            outstanding[slot] = null;
            taken--;
            b.close();
        }
    }

    /**
     * A new pass or state, after the notice {@code consumed}: the batches the client never took
     * go back; true when it still holds some of this loader's (NOTE [Batches the user owns]).
     */
    private boolean reclaim(long consumed) throws ProtocolException {
        reported = consumed;
        for (int i = 0; i < outstanding.length; i++) {
            if (outstanding[i] != null && publishedAt[i] > consumed) {
                free(i);
            }
        }
        pass = null;
        return taken > 0;
    }

    /**
     * A new loader on the same ring: from {@code state} (a seed the client set must be its seed),
     * or at the start of {@code epoch} with the seed of the loader it replaces (a state's, once
     * one was loaded).
     */
    private void rebuild(LoaderState state, long epoch) throws IOException {
        long seed = loader != null ? loader.state().seed() : builtSeed; // after a failed build: the last loader's
        if (loader != null) {
            loader.close(); // the slots the client holds stay its own (ShmRing.clientFree)
            loader = null;
        }
        java.util.Arrays.fill(outstanding, null);
        taken = 0;
        LoaderBuilder b = builder();
        if (state != null) {
            spec.start(b, state);
        } else {
            b.seed(seed).epoch(epoch >= 0 ? epoch : spec.firstEpoch());
        }
        loader = b.build();
        builtSeed = loader.state().seed();
        remember();
    }

    private void remember() {
        int i = (int) (counter % states.length);
        states[i] = loader.state();
        markedPasses[i] = null;
        stateCounters[i] = counter;
    }

    /** After a batch: the pass's mark, or its state when it keeps no marks (nothing allocated a batch). */
    private void rememberBatch() {
        long mark = pass.mark();
        if (mark < 0) {
            remember();
            return;
        }
        int i = (int) (counter % states.length);
        states[i] = null;
        markedPasses[i] = pass;
        marks[i] = mark;
        stateCounters[i] = counter;
    }

    private LoaderState stateAt(long consumed) throws IOException {
        int i = (int) Math.floorMod(consumed, (long) states.length);
        if (consumed > counter || stateCounters[i] != consumed || (states[i] == null && markedPasses[i] == null)) {
            throw new ProtocolException("the client asked for the state at notice " + consumed + ", which the server does not have");
        }
        return markedPasses[i] != null ? markedPasses[i].stateAfter(marks[i]) : states[i];
    }

    // ---- messages ------------------------------------------------------------------------------

    private void sendSpilled(Batch b, ByteBuffer notice, long spill) throws IOException {
        notice.flip();
        if (8 + notice.remaining() + spill > Integer.MAX_VALUE) {
            throw new IOException("a batch's variable-length columns outgrew their slot by " + spill + " bytes");
        }
        List<ByteBuffer> parts = new ArrayList<>();
        parts.add(wire.frame(READY, (int) (notice.remaining() + spill)));
        parts.add(notice);
        for (int i = 0; i < b.schema().size(); i++) {
            MemorySegment data = b.data(i);
            long bytes = b.byteSize(i);
            if (!ring.contains(data.address(), bytes)) { // in field order, as the slot's header says
                parts.add(data.asSlice(0, bytes).asByteBuffer());
            }
        }
        spilledBytes += spill;
        wire.writeFully(parts.toArray(ByteBuffer[]::new));
    }

    /** OPEN: the source and loader specs (kept as JSON, read by Specs), the ring's options, a state to resume. */
    private void readOpen(ByteBuffer p) throws IOException {
        byte[] bytes = new byte[p.remaining()];
        p.get(bytes);
        try (JsonParser j = JSON.createParser(bytes)) {
            if (j.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("OPEN is not a JSON object");
            }
            while (j.nextToken() == JsonToken.FIELD_NAME) {
                String name = j.currentName();
                JsonToken t = j.nextToken();
                switch (name) {
                    case "source" -> sourceJson = subtree(j);
                    case "loader" -> loaderJson = subtree(j);
                    case "ahead" -> ahead = j.getIntValue();
                    case "ringBytes" -> ringBytes = j.getLongValue();
                    case "state" -> initialState = t == JsonToken.VALUE_NULL ? null : j.getText();
                    default -> j.skipChildren();
                }
            }
        }
    }

    /** The JSON value the parser is at, as text. */
    private static String subtree(JsonParser j) throws IOException {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(w)) {
            g.copyCurrentStructure(j);
        }
        return w.toString();
    }

    private ByteBuffer hello() throws IOException {
        return Wire.object(g -> {
            g.writeNumberField("version", Protocol.VERSION);
            g.writeNumberField("pid", ProcessHandle.current().pid());
            g.writeStringField("ring", ring.path().toString());
            g.writeNumberField("ringBytes", ring.size());
            g.writeNumberField("slots", ring.slots());
            g.writeNumberField("slotBytes", ring.slotBytes());
            g.writeNumberField("slotHeader", ring.slotHeader());
            g.writeNumberField("ahead", ahead);
            g.writeArrayFieldStart("fields");
            for (Field f : loader.schema().fields()) {
                g.writeStartObject();
                g.writeStringField("name", f.name());
                g.writeStringField("dtype", f.isVariable() && !f.isRagged() ? "uint8" : f.dtype().label());
                g.writeArrayFieldStart("shape");
                for (long d : f.isVariable() ? new long[0] : f.shape()) {
                    g.writeNumber(d);
                }
                g.writeEndArray();
                g.writeBooleanField("variable", f.isVariable());
                g.writeBooleanField("ragged", f.isRagged());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeNumberField("tokensPerSample", recipe.tokensPerSample());
            startedFields(g);
        });
    }

    private ByteBuffer started() throws IOException {
        return Wire.object(this::startedFields);
    }

    private void startedFields(JsonGenerator g) throws IOException {
        g.writeNumberField("counter", counter);
        g.writeNumberField("epoch", loader.epoch());
        g.writeNumberField("batches", loader.batches());
        g.writeNumberField("epochBatches", loader.batchesPerEpoch());
        g.writeNumberField("batch", spec.batchSize());
        g.writeNumberField("workers", loader.workers());
        g.writeNumberField("prefetch", loader.prefetch());
        g.writeNumberField("holds", holds);
    }

    private ByteBuffer stats() throws IOException {
        LoaderStats s = loader.stats();
        return Wire.object(g -> {
            g.writeNumberField("batches", s.batches());
            g.writeNumberField("samples", s.samples());
            g.writeNumberField("bytes", s.bytes());
            g.writeNumberField("skipped", s.skipped());
            g.writeNumberField("skippedShards", s.skippedShards());
            g.writeNumberField("truncatedSamples", s.truncatedSamples());
            g.writeNumberField("droppedValues", s.droppedValues());
            g.writeNumberField("fetchSeconds", s.fetchNanos() / 1e9);
            g.writeNumberField("transformSeconds", s.transformNanos() / 1e9);
            g.writeNumberField("collateSeconds", s.collateNanos() / 1e9);
            g.writeNumberField("waitSeconds", s.waitNanos() / 1e9);
            g.writeNumberField("seconds", s.seconds());
            g.writeNumberField("samplesPerSec", s.samplesPerSecond());
            g.writeNumberField("workers", loader.workers());
            g.writeNumberField("prefetch", loader.prefetch());
            g.writeNumberField("publishCpuSeconds", publishNanos / 1e9); // over the session, its loaders all
            g.writeNumberField("publishedBatches", published);
            g.writeNumberField("spilledBytes", spilledBytes);
            g.writeNumberField("clientWaits", clientWaits);
            g.writeNumberField("clientWaitTimeouts", clientWaitTimeouts);
            g.writeNumberField("ringSlotsAtStart", initialSlots);
            g.writeNumberField("ringSlotsMade", ring.made());
            g.writeNumberField("ringSlots", ring.slots());
            g.writeNumberField("clientHeldSlots", ring.clientHeld());
            g.writeNumberField("sessionTaken", taken);
            g.writeNumberField("sessionHolds", holds);
            g.writeNumberField("sessionCounter", counter);
            g.writeNumberField("sessionReported", reported);
            g.writeBooleanField("sessionPassRunning", pass != null);
            for (var f : (recipe == null ? java.util.Map.<String, Double>of() : recipe.figures()).entrySet()) {
                g.writeNumberField(f.getKey(), f.getValue());
            }
        });
    }
}
