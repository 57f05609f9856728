package dev.stoker.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.stoker.formats.io.Compression;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a JSON lines file holds (plain, gzip or zstd): lines, bytes (uncompressed), how many lines
 * have each top-level key, and the malformed lines with their numbers and what is wrong.
 */
public final class JsonlSummary {
    public long lines;
    public long bytes;
    public final Map<String, Long> keys = new TreeMap<>();
    public final List<String> errors = new ArrayList<>();
    public long errorCount;
    private static final JsonFactory JSON = new JsonFactory();

    public static JsonlSummary of(Path path) throws IOException {
        JsonlSummary s = new JsonlSummary();
        try (InputStream raw = Files.newInputStream(path);
             BufferedReader r = new BufferedReader(new InputStreamReader(Compression.decompress(raw, path.toString()),
                     StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPLACE)), 1 << 16)) {
            long n = 0;
            for (String line; (line = r.readLine()) != null; ) {
                n++;
                s.bytes += line.getBytes(StandardCharsets.UTF_8).length + 1;
                if (line.isBlank()) {
                    continue;
                }
                s.lines++;
                s.line(line, n);
            }
        }
        return s;
    }

    private void line(String line, long n) {
        if (line.indexOf('\uFFFD') >= 0) {
            error(n, "invalid UTF-8");
            return;
        }
        try (JsonParser p = JSON.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                error(n, "not a JSON object");
                return;
            }
            List<String> seen = new ArrayList<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                seen.add(p.currentName());
                p.nextToken();
                p.skipChildren();
            }
            if (p.nextToken() != null) {
                error(n, "trailing characters after the object");
                return;
            }
            for (String k : seen) {
                keys.merge(k, 1L, Long::sum);
            }
        } catch (JsonProcessingException e) {
            error(n, "malformed JSON: " + String.valueOf(e.getOriginalMessage()).lines().findFirst().orElse(""));
        } catch (IOException e) {
            error(n, "malformed JSON: " + e.getMessage());
        }
    }

    private void error(long line, String what) {
        errorCount++;
        if (errors.size() < 20) {
            errors.add("line " + line + ": " + what);
        }
    }
}
