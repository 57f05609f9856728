package dev.stoker.cli;

import static dev.stoker.cli.MainTest.stoker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.storage.testing.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Files read from a URL: what the server says is taken at its word, and errors name the URL. */
@Timeout(120)
class RemoteFilesTest {
    @TempDir
    Path tmp;

    private Path megatronPair() throws Exception {
        Path served = Files.createDirectories(tmp.resolve("served"));
        Files.copy(TokensCommandsTest.fixture("megatron/docs.idx"), served.resolve("docs.idx"));
        Files.copy(TokensCommandsTest.fixture("megatron/docs.bin"), served.resolve("docs.bin"));
        return served;
    }

    @ParameterizedTest(name = "HTTP {0}")
    @ValueSource(ints = {500, 403})
    void aRemoteMegatronBinWhoseIndexCannotBeFetchedFailsNamingTheIndexAndTheStatus(int status) throws Exception {
        try (TestServer s = new TestServer(megatronPair())) {
            s.status.put("docs.idx", status);
            MainTest.Outcome o = stoker("bench", "tokens", s.url("docs.bin"), "--seq-len", "8", "--batch", "4",
                    "--cache-dir", tmp.resolve("cache").toString());
            String err = o.err().strip();
            assertEquals(1, o.code(), "not read as raw tokens: " + o.out() + err);
            assertEquals(1, err.lines().count(), err);
            assertTrue(err.startsWith("stoker: " + s.url("docs.idx") + ": HTTP " + status), err);
        }
    }

    @Test
    void aRemoteBinReadWithRawAsksForNoIndex() throws Exception {
        Path served = Files.createDirectories(tmp.resolve("served"));
        Files.write(served.resolve("t.bin"), new byte[2 * 90]); // 90 uint16 tokens
        try (TestServer s = new TestServer(served)) {
            s.status.put("t.idx", 403); // a bucket that answers 403 for a key it has not, to a caller that cannot list it
            MainTest.Outcome refused = stoker("bench", "tokens", s.url("t.bin"), "--seq-len", "8", "--batch", "4",
                    "--cache-dir", tmp.resolve("cache").toString());
            assertEquals(1, refused.code(), refused.out());
            assertTrue(refused.err().contains("--raw"), "the error says how to read it as it is: " + refused.err());
            MainTest.Outcome raw = stoker("bench", "tokens", s.url("t.bin"), "--raw", "--seq-len", "8", "--batch", "4", "--json",
                    "--cache-dir", tmp.resolve("cache").toString());
            assertEquals(0, raw.code(), raw.err());
            assertEquals("11", MainTest.field(raw.out().strip(), "samples"), "90 tokens: (90 - 1) / 8 windows of 8 + 1");
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tokens bad.npy", "jsonl bad.jsonl"}) // found as the file opens, and as a sample is read
    void anErrorInARemoteFileNamesItsUrlNotItsLocalCopy(String source) throws Exception {
        Path served = Files.createDirectories(tmp.resolve("served"));
        Files.writeString(served.resolve("bad.npy"), "<html>not an array</html>");
        Files.writeString(served.resolve("bad.jsonl"), "{\"text\": \"a\"}\n{bad\n");
        try (TestServer s = new TestServer(served)) {
            String url = s.url(source.split(" ")[1]);
            MainTest.Outcome o = stoker("bench", source.split(" ")[0], url, "--seq-len", "8", "--batch", "1",
                    "--cache-dir", tmp.resolve("cache").toString());
            String err = o.err().strip();
            assertEquals(1, o.code(), err);
            assertTrue(err.startsWith("stoker: " + url + ": "), err);
            assertTrue(!err.contains("stoker-remote-") && !err.contains(tmp.resolve("cache").toString()), err);
        }
    }

    @Test
    void remoteArraysAreFetchedThroughTheCacheAndTheirErrorsNameTheUrl() throws Exception {
        Path served = Files.createDirectories(tmp.resolve("served"));
        float[] v = new float[10 * 3];
        dev.stoker.formats.npy.Npy.write(served.resolve("x.npy"), dev.stoker.DType.FLOAT32, new long[] {10, 3},
                java.lang.foreign.MemorySegment.ofArray(v));
        Files.write(served.resolve("raw.npy"), new byte[40]);
        try (TestServer s = new TestServer(served)) {
            MainTest.Outcome o = stoker("bench", "arrays", "--files", "x=" + s.url("x.npy"), "--batch", "4", "--json",
                    "--cache-dir", tmp.resolve("cache").toString());
            assertEquals(0, o.code(), o.err());
            assertEquals("10", MainTest.field(o.out().strip(), "samples"));
            o = stoker("bench", "arrays", "--files", "r=" + s.url("raw.npy"), "--batch", "4",
                    "--cache-dir", tmp.resolve("cache").toString());
            String err = o.err().strip();
            assertEquals(1, o.code(), err);
            assertTrue(err.startsWith("stoker: " + s.url("raw.npy") + ": no .npy header"), err);
        }
    }

    @Test
    void aRemoteIndexThatAnswers503ForAMomentIsAskedAgain() throws Exception {
        Path served = megatronPair();
        MainTest.Outcome local = stoker("bench", "tokens", served.resolve("docs.bin").toString(), "--seq-len", "8",
                "--batch", "4", "--json");
        try (TestServer s = new TestServer(served)) {
            s.failNext.put("docs.idx", new java.util.concurrent.atomic.AtomicInteger(2));
            MainTest.Outcome o = stoker("bench", "tokens", s.url("docs.bin"), "--seq-len", "8", "--batch", "4", "--json",
                    "--cache-dir", tmp.resolve("cache").toString());
            assertEquals(0, o.code(), o.err());
            assertEquals(MainTest.field(local.out().strip(), "samples"), MainTest.field(o.out().strip(), "samples"),
                    "read with its index, as the local pair");
        }
    }

    @Test
    void aRemoteBinWhoseIndexIsNotFoundIsReadAsRawTokens() throws Exception {
        Path served = megatronPair();
        Files.delete(served.resolve("docs.idx"));
        try (TestServer s = new TestServer(served)) {
            MainTest.Outcome o = stoker("bench", "tokens", s.url("docs.bin"), "--seq-len", "8", "--batch", "4",
                    "--cache-dir", tmp.resolve("cache").toString());
            assertEquals(0, o.code(), "a 404 says there is no index: " + o.err());
        }
    }
}
