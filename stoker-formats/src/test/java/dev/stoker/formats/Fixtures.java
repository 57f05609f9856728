package dev.stoker.formats;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Path;

/** The committed fixtures (made by make_fixtures.py with numpy) and what they hold. */
public final class Fixtures {
    private Fixtures() {
    }

    public static Path dir() {
        try {
            return Path.of(Fixtures.class.getResource("/fixtures/expected.json").toURI()).getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    public static Path npy(String name) {
        return dir().resolve("npy").resolve(name);
    }

    public static JsonNode expected() {
        try {
            return new ObjectMapper().readTree(dir().resolve("expected.json").toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** True when /usr/bin/python3 with numpy is here (for tests that let numpy read what Stoker wrote). */
    public static boolean numpyAvailable() {
        try {
            Process p = new ProcessBuilder("/usr/bin/python3", "-c", "import numpy").redirectErrorStream(true).start();
            return p.waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** Runs a Python snippet; returns its stdout, failing the test on a non-zero exit. */
    public static String python(String code, String... args) throws IOException, InterruptedException {
        String[] cmd = new String[args.length + 3];
        cmd[0] = "/usr/bin/python3";
        cmd[1] = "-c";
        cmd[2] = code;
        System.arraycopy(args, 0, cmd, 3, args.length);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new AssertionError("python failed: " + out);
        }
        return out;
    }
}
