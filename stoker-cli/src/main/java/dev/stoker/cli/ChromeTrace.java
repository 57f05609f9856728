package dev.stoker.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.stoker.Tracer;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Collects the loader's spans and writes them in Chrome's trace-event format (opens in Perfetto
 * or chrome://tracing): one row per thread, a complete event per batch filled (with its stage
 * times as arguments) and per consumer wait. Keeps at most {@code limit} spans.
 */
final class ChromeTrace implements Tracer {
    private final List<Tracer.Span> spans = new ArrayList<>();
    private final int limit;
    private final long origin = System.nanoTime();
    private long dropped;

    ChromeTrace(int limit) {
        this.limit = limit;
    }

    @Override
    public synchronized void span(Tracer.Span span) {
        if (spans.size() < limit) {
            spans.add(span);
        } else {
            dropped++;
        }
    }

    synchronized void write(Path file) throws IOException {
        dev.stoker.storage.io.PendingFile.write(file, this::writeTo);
    }

    private void writeTo(OutputStream out) throws IOException {
        Map<String, Integer> tids = new HashMap<>();
        try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
            g.writeStartObject();
            g.writeArrayFieldStart("traceEvents");
            for (Tracer.Span s : spans) {
                int tid = tids.computeIfAbsent(s.thread(), t -> tids.size() + 1);
                g.writeStartObject();
                g.writeStringField("name", s.what());
                g.writeStringField("cat", s.what().startsWith("wait") ? "consumer" : "worker");
                g.writeStringField("ph", "X");
                g.writeNumberField("ts", (s.start() - origin) / 1e3);
                g.writeNumberField("dur", Math.max(0, s.end() - s.start()) / 1e3);
                g.writeNumberField("pid", 1);
                g.writeNumberField("tid", tid);
                if (s.fetch() + s.transform() + s.collate() > 0) {
                    g.writeObjectFieldStart("args");
                    g.writeNumberField("fetch_us", s.fetch() / 1e3);
                    g.writeNumberField("transform_us", s.transform() / 1e3);
                    g.writeNumberField("collate_us", s.collate() / 1e3);
                    g.writeEndObject();
                }
                g.writeEndObject();
            }
            for (Map.Entry<String, Integer> e : tids.entrySet()) {
                g.writeStartObject();
                g.writeStringField("name", "thread_name");
                g.writeStringField("ph", "M");
                g.writeNumberField("pid", 1);
                g.writeNumberField("tid", e.getValue());
                g.writeObjectFieldStart("args");
                g.writeStringField("name", e.getKey());
                g.writeEndObject();
                g.writeEndObject();
            }
            g.writeEndArray();
            if (dropped > 0) {
                g.writeNumberField("droppedSpans", dropped);
            }
            g.writeEndObject();
        }
    }
}
