package dev.stoker.cli;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * The warnings Stoker's libraries log ({@link System.Logger}, which the JDK sends to
 * {@code java.util.logging}) during one command, kept for the CLI to report in its own words
 * instead of the logging system's two lines (a timestamp and class, then {@code WARNING: ...}).
 * While it is open it replaces the root logger's handlers; {@link #close} puts them back. Each
 * distinct message is kept once, in order.
 */
final class Warnings extends Handler implements AutoCloseable {
    private final Logger root = Logger.getLogger("");
    private final Handler[] before;
    private final Set<String> messages = new LinkedHashSet<>();
    private final SimpleFormatter formatter = new SimpleFormatter();

    Warnings() {
        before = root.getHandlers();
        for (Handler h : before) {
            root.removeHandler(h);
        }
        root.addHandler(this);
    }

    @Override
    public void publish(LogRecord r) {
        if (r.getLevel().intValue() < Level.WARNING.intValue()) {
            return;
        }
        String m = formatter.formatMessage(r);
        if (r.getThrown() != null) {
            m += " (" + Main.message(r.getThrown()) + ")";
        }
        synchronized (messages) {
            messages.add(m.replace('\n', ' '));
        }
    }

    /** The warnings so far, each once, in the order first logged. */
    List<String> messages() {
        synchronized (messages) {
            return new ArrayList<>(messages);
        }
    }

    @Override
    public void flush() {
    }

    /** Puts the root logger's own handlers back. Idempotent. */
    @Override
    public void close() {
        root.removeHandler(this);
        for (Handler h : before) {
            root.removeHandler(h);
            root.addHandler(h);
        }
    }
}
