package dev.stoker.bridge;

import static dev.stoker.bridge.Protocol.ERROR;
import static dev.stoker.bridge.Protocol.MAX_MESSAGE;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.stoker.storage.Locations;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * A session's socket, framed as {@link Protocol} says: messages read into a buffer and taken
 * whole, frames written whole (gathering writes, waiting in a selector when the client has not
 * read yet). The channel is non-blocking, so a session running ahead can look for requests
 * without stopping. A broken socket is {@link Session.ClientGone}; a malformed frame a
 * {@link Session.ProtocolException}.
 */
final class Wire {
    private static final JsonFactory JSON = new JsonFactory();
    private final SocketChannel channel;
    private final ByteBuffer in = ByteBuffer.allocateDirect(64 << 10).order(ByteOrder.LITTLE_ENDIAN);
    /** Small messages kept to go out together ({@link #queue}); every other write sends them first. */
    private final ByteBuffer queued = ByteBuffer.allocateDirect(4 << 10).order(ByteOrder.LITTLE_ENDIAN);
    private volatile Selector selector;
    private SelectionKey key;

    Wire(SocketChannel channel) {
        this.channel = channel;
        in.limit(0);
    }

    /** Wakes a session waiting in the selector (another thread closed the socket). */
    void wakeup() {
        Selector sel = selector;
        if (sel != null) {
            sel.wakeup();
        }
    }

    void close() throws IOException {
        if (selector != null) {
            selector.close();
        }
    }

    /** Reads until a whole message is buffered; returns its type. */
    int nextMessage() throws IOException {
        int type;
        while ((type = buffered()) < 0) {
            if (!readMore(true)) {
                throw new Session.ClientGone("the client went away");
            }
        }
        return type;
    }

    /** The type of the next message when the whole of it is buffered, else -1. */
    int buffered() throws Session.ProtocolException {
        if (in.remaining() < 8) {
            return -1;
        }
        int length = in.getInt(in.position() + 4);
        if (length < 0 || length > MAX_MESSAGE) {
            throw new Session.ProtocolException("a message of " + length + " bytes from the client");
        }
        return in.remaining() >= 8 + length ? in.getInt(in.position()) : -1;
    }

    /** The payload of the buffered message, as a view; {@link #consume()} moves past it. */
    ByteBuffer payload() {
        int length = in.getInt(in.position() + 4);
        return in.slice(in.position() + 8, length).order(ByteOrder.LITTLE_ENDIAN);
    }

    void consume() {
        int length = in.getInt(in.position() + 4);
        in.position(in.position() + 8 + length);
    }

    /**
     * Reads what the socket has; with {@code block}, waits for at least one byte. False at the end
     * of the stream. The channel is non-blocking, so a session running ahead can look for requests
     * without stopping; it waits in a selector.
     */
    boolean readMore(boolean block) throws IOException {
        return readMore(block, 0);
    }

    /**
     * As {@link #readMore(boolean)} with {@code block}, but waits at most {@code millis} (0: no
     * bound): true also when that passed with nothing read.
     */
    boolean readMore(boolean block, long millis) throws IOException {
        if (block) {
            flush(); // the client may be waiting for them
        }
        in.compact();
        if (!in.hasRemaining()) {
            in.flip();
            throw new Session.ProtocolException("a message larger than the session's buffer");
        }
        int n;
        try {
            while ((n = channel.read(in)) == 0 && block) {
                if (await(SelectionKey.OP_READ, millis) == 0 && millis > 0) {
                    break;
                }
            }
        } catch (Session.ClientGone e) {
            throw e;
        } catch (IOException e) {
            throw new Session.ClientGone(Session.message(e)); // reset or broken: the client is gone
        } finally {
            in.flip();
        }
        return n >= 0;
    }

    /** Waits until the channel is ready for {@code op}, or {@code millis} passed (0: no bound); the keys selected. */
    private int await(int op, long millis) throws IOException {
        if (selector == null) {
            selector = Selector.open();
            key = channel.register(selector, op);
        }
        key.interestOps(op);
        int n = selector.select(millis);
        selector.selectedKeys().clear();
        return n;
    }

    void send(int type, ByteBuffer payload) throws IOException {
        payload.flip();
        writeFully(frame(type, payload.remaining()), payload);
    }

    /**
     * A small message kept to go out with the next ones (NOTE [Bridge flow]: a run of notices is
     * one write and one wake-up of the client); false when it did not fit, and then it is sent now.
     */
    boolean queue(int type, ByteBuffer payload) throws IOException {
        payload.flip();
        if (queued.remaining() < 8 + payload.remaining()) {
            flush();
            if (queued.remaining() < 8 + payload.remaining()) {
                writeFully(frame(type, payload.remaining()), payload);
                return false;
            }
        }
        queued.putInt(type).putInt(payload.remaining()).put(payload);
        return true;
    }

    /** Sends the queued messages. */
    void flush() throws IOException {
        if (queued.position() > 0) {
            queued.flip();
            try {
                write(queued);
            } finally {
                queued.clear();
            }
        }
    }

    private final ByteBuffer head = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN);

    ByteBuffer frame(int type, int length) {
        head.clear();
        head.putInt(type).putInt(length).flip();
        return head;
    }

    void writeFully(ByteBuffer... parts) throws IOException {
        flush(); // in the order they were made
        write(parts);
    }

    private void write(ByteBuffer... parts) throws IOException {
        long left = 0;
        for (ByteBuffer p : parts) {
            left += p.remaining();
        }
        try {
            while (left > 0) {
                long n = channel.write(parts);
                left -= n;
                if (n == 0) {
                    await(SelectionKey.OP_WRITE, 0); // the client has not read yet: wait for room
                }
            }
        } catch (IOException e) {
            throw new Session.ClientGone(Session.message(e));
        }
    }

    /** An ERROR message; {@code fatal}: the session ends after it, so the client raises it whatever it waits for. */
    void sendError(String kind, String message, String resource, long index, boolean fatal) throws IOException {
        send(ERROR, object(g -> {
            g.writeStringField("kind", kind);
            g.writeStringField("message", message == null ? kind + " error" : Locations.redact(message));
            if (resource != null) {
                g.writeStringField("resource", Locations.redact(resource));
            }
            if (index >= 0) {
                g.writeNumberField("index", index);
            }
            g.writeBooleanField("fatal", fatal);
        }));
    }

    /** The fields a message's JSON object holds. */
    @FunctionalInterface
    interface Fields {
        void write(JsonGenerator g) throws IOException;
    }

    /** A message payload: one JSON object (a payload to be flipped by {@link #send}). */
    static ByteBuffer object(Fields fields) throws IOException {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(w)) {
            g.writeStartObject();
            fields.write(g);
            g.writeEndObject();
        }
        return utf8(w.toString());
    }

    static ByteBuffer utf8(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(bytes.length).put(bytes);
    }
}
