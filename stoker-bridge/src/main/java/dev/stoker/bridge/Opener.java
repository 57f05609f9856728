package dev.stoker.bridge;

import java.io.IOException;
import java.util.List;

/**
 * Resolves a client's source, as its OPEN message names it, and serves it: the host of a
 * {@link BridgeServer} says what sources there are (the CLI: {@code stoker bench}'s).
 *
 * <p>A bad request (an unknown source or option, a bad value) is an {@link IllegalArgumentException};
 * data that cannot be read, an {@link IOException}; both reach the client with their messages.
 */
@FunctionalInterface
public interface Opener {
    /** Opens the source {@code args} describe and calls {@code serve} with its recipe; returns when serving has ended. */
    void open(List<String> args, Serve serve) throws Exception;

    /**
     * A message as the client, and the server's stderr, may show it: the host hides what must
     * never be printed (the CLI: a password in a URL). Every message a session sends or prints
     * goes through it. The default shows it as it is.
     */
    default String redact(String message) {
        return message;
    }

    /** The session's side: serves a recipe until the client is done. */
    @FunctionalInterface
    interface Serve {
        void serve(Recipe recipe) throws IOException;
    }
}
