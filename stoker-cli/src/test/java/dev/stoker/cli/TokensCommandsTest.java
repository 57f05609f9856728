package dev.stoker.cli;

import static dev.stoker.cli.MainTest.field;
import static dev.stoker.cli.MainTest.stoker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** inspect and bench tokens, on the formats module's numpy-made fixtures and on generated files. */
class TokensCommandsTest {
    @TempDir
    Path tmp;

    /** A committed fixture of the format modules: {@code hdf5/...} are stoker-hdf5's, the rest stoker-formats'. */
    static Path fixture(String rel) {
        String module = rel.startsWith("hdf5/") ? "stoker-hdf5" : "stoker-formats";
        return root().resolve(module + "/src/test/resources/fixtures").resolve(rel);
    }

    /** The repository's root (this class lives in stoker-cli/target/test-classes). */
    static Path root() {
        try {
            Path here = Path.of(TokensCommandsTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return here.getParent().getParent().getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    Path tokens(int n) throws IOException {
        Path p = tmp.resolve("train.bin");
        ByteBuffer b = ByteBuffer.allocate(2 * n).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
            b.putShort((short) (i % 50_000));
        }
        Files.write(p, b.array());
        return p;
    }

    @Test
    void inspectNpyGivesTheFieldsOfTheContract() {
        MainTest.Outcome o = stoker("inspect", "--json", fixture("npy/fortran_i4.npy").toString(),
                fixture("npy/i2_be.npy").toString(), fixture("npy/scalar_f8.npy").toString());
        assertEquals(0, o.code(), o.err());
        List<String> lines = o.out().lines().toList();
        assertEquals(3, lines.size());
        assertEquals("npy", field(lines.get(0), "format"));
        assertEquals("<i4", field(lines.get(0), "dtype"));
        assertTrue(lines.get(0).contains("\"shape\":[2,3,4]") && lines.get(0).contains("\"fortranOrder\":true"), lines.get(0));
        assertTrue(lines.get(0).contains("\"first\":[-7,-4,-1,2,5,8,11,14]"), "C order, as numpy flattens: " + lines.get(0));
        assertEquals(">i2", field(lines.get(1), "dtype"));
        assertTrue(lines.get(2).contains("\"shape\":[]") && lines.get(2).contains("\"first\":[3.25]"), lines.get(2));
    }

    @Test
    void inspectTokensAndMegatron() throws IOException {
        Path bin = tokens(1000);
        MainTest.Outcome o = stoker("inspect", "--json", bin.toString(), fixture("megatron/docs.idx").toString());
        assertEquals(0, o.code(), o.err());
        List<String> lines = o.out().lines().toList();
        assertEquals("tokens", field(lines.get(0), "format"));
        assertEquals("<u2", field(lines.get(0), "dtype"));
        assertEquals("1000", field(lines.get(0), "tokens"));
        assertTrue(lines.get(0).contains("\"first\":[0,1,2,3,4,5,6,7]"), lines.get(0));
        assertEquals("megatron", field(lines.get(1), "format"));
        assertEquals("6", field(lines.get(1), "sequences"));
        assertEquals("6", field(lines.get(1), "documents"));
        assertEquals("62", field(lines.get(1), "tokens"));
    }

    @Test
    void inspectRefusesWhatItCannotReadWithOneLine() throws IOException {
        MainTest.Outcome o = stoker("inspect", fixture("npy/structured.npy").toString());
        assertEquals(1, o.code());
        assertTrue(o.err().startsWith("stoker: " + fixture("npy/structured.npy") + ": structured dtypes are not supported"), o.err());
        Path odd = tmp.resolve("odd.bin");
        Files.write(odd, new byte[7]);
        o = stoker("inspect", odd.toString());
        assertEquals(1, o.code());
        assertTrue(o.err().contains("not a multiple of 2"), o.err());
        assertEquals(1, stoker("inspect", tmp.resolve("missing.npy").toString()).code());
    }

    @Test
    void benchTokensReportsTokensPerSecondAndTheSameDigestsForAnyWorkerCount() throws IOException {
        Path bin = tokens(100_000);
        MainTest.Outcome o = stoker("bench", "tokens", bin.toString(), "--seq-len", "128", "--batch", "8",
                "--workers", "0,2", "--json", "--digest");
        assertEquals(0, o.code(), o.err());
        List<String> lines = o.out().lines().toList();
        assertEquals(field(lines.get(0), "digest"), field(lines.get(1), "digest"));
        assertEquals((100_000 - 1) / 128, Long.parseLong(field(lines.get(0), "samples")));
        assertTrue(Double.parseDouble(field(lines.get(0), "tokensPerSec")) > 0);
        for (String line : lines) {
            double after = Double.parseDouble(field(line, "samplesPerSecAfterFirst"));
            assertEquals(128 * after, Double.parseDouble(field(line, "tokensPerSecAfterFirst")), 1e-6 * after, line);
        }
    }

    @Test
    void benchTokensPacksMegatronDocumentsAndMixesFiles() throws IOException {
        MainTest.Outcome o = stoker("bench", "tokens", fixture("megatron/docs").toString(), "--seq-len", "8",
                "--batch", "2", "--separator", "50256", "--json", "--digest");
        assertEquals(0, o.code(), o.err());
        assertEquals("8", field(o.out().strip(), "samples"), "(62 tokens + 6 separators - 1) / 8");
        Path a = tokens(10_000);
        o = stoker("bench", "tokens", a.toString(), fixture("npy/tokens_u2.npy").toString(), "--seq-len", "16",
                "--weights", "0.5,0.5", "--json", "--digest");
        assertEquals(0, o.code(), o.err());
        assertEquals(2, stoker("bench", "tokens", a.toString(), "--weights", "1,2").code());
    }

    @Test
    void benchTokensRefusesAFileOfAnotherFormatNamingWhatItIsInOneLine() throws IOException {
        java.io.ByteArrayOutputStream zip = new java.io.ByteArrayOutputStream();
        try (var z = new java.util.zip.ZipOutputStream(zip)) {
            z.putNextEntry(new java.util.zip.ZipEntry("archive/data.pkl"));
            z.write(new byte[4096]);
        }
        java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
        try (var out = new java.util.zip.GZIPOutputStream(gz)) {
            out.write(new byte[100_000]);
        }
        Path pt = Files.write(tmp.resolve("model.pt"), java.util.Arrays.copyOf(zip.toByteArray(), zip.size() + zip.size() % 2));
        Path html = Files.writeString(tmp.resolve("train.bin"), "<!DOCTYPE html>\n<html><head><title>404 Not Found</title>"
                + "</head><body><h1>Not Found</h1></body></html>\n".repeat(20));
        Path gzipped = Files.write(tmp.resolve("val.bin"), java.util.Arrays.copyOf(gz.toByteArray(), gz.size() + gz.size() % 2));
        Path idx = Files.copy(fixture("megatron/docs.idx"), tmp.resolve("docs.idx"));
        java.io.ByteArrayOutputStream other = new java.io.ByteArrayOutputStream();
        try (var z = new java.util.zip.ZipOutputStream(other)) {
            z.putNextEntry(new java.util.zip.ZipEntry("notes.txt"));
            z.write(new byte[4096]);
        }
        Path zipped = Files.write(tmp.resolve("data.bin"), java.util.Arrays.copyOf(other.toByteArray(), other.size() + other.size() % 2));
        String[][] cases = {{pt.toString(), pt + ": entry 'archive/data.pkl' is compressed"},
            {zipped.toString(), zipped + ": a zip archive, not tokens"}, {html.toString(), html + ": an HTML page"},
            {gzipped.toString(), gzipped + ": gzip-compressed"},
            {idx.toString(), tmp.resolve("docs.bin") + ": no such file: the data of the Megatron index " + idx}};
        for (String[] c : cases) {
            MainTest.Outcome o = stoker("bench", "tokens", c[0], "--seq-len", "4", "--batch", "2");
            assertEquals(1, o.code(), c[0] + ": " + o.err());
            assertTrue(o.err().startsWith("stoker: " + c[1]), o.err());
            assertEquals(1, o.err().strip().lines().count(), o.err());
        }
        assertTrue(stoker("bench", "tokens", zipped.toString()).err().contains("--raw"), "how to read it as raw tokens all the same");
    }

    @Test
    void aServedPageInPlaceOfATokenFileIsRefusedNamingItsUrl() throws IOException {
        Path served = Files.createDirectories(tmp.resolve("served"));
        Files.writeString(served.resolve("train.bin"), "<html><body>Sign in to continue</body></html>\n".repeat(40));
        MainTest.Outcome o = TarCommandsTest.overHttp(served, url -> stoker("bench", "tokens", url + "train.bin",
                "--seq-len", "8", "--cache-dir", tmp.resolve("cache").toString()));
        assertEquals(1, o.code(), o.err());
        assertTrue(o.err().startsWith("stoker: http://") && o.err().contains("/train.bin: an HTML page"), o.err());
    }

    @Test
    void benchTokensReadsANumpyArrayByItsMagicWhateverItsName() throws IOException {
        Path renamed = Files.copy(fixture("npy/tokens_u2.npy"), tmp.resolve("tokens.bin"));
        MainTest.Outcome asNpy = stoker("bench", "tokens", fixture("npy/tokens_u2.npy").toString(), "--seq-len", "8", "--json", "--digest");
        MainTest.Outcome asBin = stoker("bench", "tokens", renamed.toString(), "--seq-len", "8", "--json", "--digest");
        assertEquals(0, asBin.code(), asBin.err());
        assertEquals(field(asNpy.out().strip(), "samples"), field(asBin.out().strip(), "samples"));
        assertEquals(field(asNpy.out().strip(), "digest"), field(asBin.out().strip(), "digest"));
    }

    @Test
    void benchTokensWithRawReadsAFileAsItIsWhateverItsFirstBytes() throws IOException {
        Path page = Files.writeString(tmp.resolve("page.bin"), "<html>" + "x".repeat(2000));
        assertEquals(1, stoker("bench", "tokens", page.toString(), "--seq-len", "8").code());
        MainTest.Outcome o = stoker("bench", "tokens", page.toString(), "--seq-len", "8", "--raw", "--json");
        assertEquals(0, o.code(), o.err());
        assertEquals(String.valueOf((1003 - 1) / 8), field(o.out().strip(), "samples"));
    }

    @Test
    void inspectAndBenchHdf5() {
        MainTest.Outcome o = stoker("inspect", "--json", fixture("hdf5/latest.h5").toString());
        assertEquals(0, o.code(), o.err());
        assertEquals("hdf5", field(o.out().strip(), "format"));
        assertTrue(o.out().contains("{\"path\":\"/x\",\"dtype\":\"<f4\",\"shape\":[100,8]}"), o.out());
        assertTrue(o.out().contains("{\"path\":\"/group/u\",\"dtype\":\"<f8\",\"shape\":[100]}"), o.out());
        MainTest.Outcome b = stoker("bench", "hdf5", fixture("hdf5/default.h5").toString(), "--dataset", "/x", "--dataset", "/y",
                "--batch", "10", "--workers", "0,2", "--json", "--digest");
        assertEquals(0, b.code(), b.err());
        var lines = b.out().lines().toList();
        assertEquals("100", field(lines.get(0), "samples"));
        assertEquals(field(lines.get(0), "digest"), field(lines.get(1), "digest"));
        assertEquals(2, stoker("bench", "hdf5", fixture("hdf5/default.h5").toString(), "--dataset", "/nope").code());
    }

    @Test
    void anInputThatGivesNoSampleADirectoryForAFileAndAnOversizedConfigurationAreOneLineErrors() throws IOException {
        Path small = tokens(100);
        Path blank = Files.writeString(tmp.resolve("blank.jsonl"), "\n  \n");
        Path binaryState = Files.write(tmp.resolve("state.bin"), new byte[] {0, (byte) 0xFF, (byte) 0xFE, 'x'});
        java.io.ByteArrayOutputStream z = new java.io.ByteArrayOutputStream();
        try (var out = new com.github.luben.zstd.ZstdOutputStream(z)) {
            out.write("{\"text\": \"a line of text to compress\"}\n".repeat(2000).getBytes());
        }
        Path cutZst = Files.write(tmp.resolve("cut.jsonl.zst"), java.util.Arrays.copyOf(z.toByteArray(), z.size() / 2));
        String[][] cases = {
            {"bench", "synthetic", "--samples", "10", "--resume", binaryState.toString()},
            {"bench", "jsonl", cutZst.toString(), "--seq-len", "16"},
            {"bench", "tokens", small.toString(), "--seq-len", "1024"},
            {"bench", "jsonl", blank.toString(), "--seq-len", "16"},
            {"bench", "tokens", tmp.toString(), "--seq-len", "16"},
            {"bench", "tokens", small.toString(), "--seq-len", "4", "--batch", "2147483647"},
            {"bench", "tokens", small.toString(), "--seq-len", "4", "--batch", "8", "--memory-limit", "1000"},
        };
        String[] says = {
            binaryState + ": loader state: not text",
            cutZst + ": reading sample 0 of the shard (epoch 0, rank 0): the zstd data is cut short",
            "tokens: nothing to deliver: the input gives no sample",
            "jsonl: nothing to deliver: the input gives no sample",
            tmp + ": not a regular file",
            "need 274,877,906,944 bytes, more than the memory limit of",
            "need 1,024 bytes, more than the memory limit of 1,000 bytes (as set)",
        };
        for (int i = 0; i < cases.length; i++) {
            MainTest.Outcome o = stoker(cases[i]);
            assertTrue(o.code() == 1 || o.code() == 2, String.join(" ", cases[i]) + ": exit " + o.code());
            assertTrue(o.err().startsWith("stoker: ") && o.err().contains(says[i]), String.join(" ", cases[i]) + ": " + o.err());
            assertTrue(!o.err().contains("Exception") && !o.err().contains("\tat "), o.err());
        }
        assertEquals(0, stoker("bench", "tokens", small.toString(), "--seq-len", "4", "--batch", "8", "--memory-limit", "100000").code());
    }

    @Test
    void aStateFromOtherDataOrOutOfRangeIsRefusedAndTheSameDataElsewhereResumes() throws IOException {
        Path a = tokens(20_000);
        Path b = tmp.resolve("other.bin");
        byte[] other = Files.readAllBytes(a);
        other[10] ^= 1; // the same size, one token different
        Files.write(b, other);
        Path copy = Files.copy(a, tmp.resolve("copy.bin")); // the same data at another place (a staged copy)
        Path state = tmp.resolve("state.json");
        String[] opts = {"--seq-len", "16", "--batch", "8", "--seed", "2"};
        MainTest.Outcome saved = stoker(TarCommandsTest.concat(new String[] {"bench", "tokens", a.toString(), "--stop-after", "3",
                "--save-state", state.toString()}, opts));
        assertEquals(0, saved.code(), saved.err());
        MainTest.Outcome there = stoker(TarCommandsTest.concat(new String[] {"bench", "tokens", copy.toString(), "--resume",
                state.toString()}, opts));
        assertEquals(0, there.code(), there.err());
        MainTest.Outcome refused = stoker(TarCommandsTest.concat(new String[] {"bench", "tokens", b.toString(), "--resume",
                state.toString()}, opts));
        assertTrue(refused.code() != 0 && refused.err().contains("the state was saved from other data"), refused.err());
        String json = Files.readString(state);
        String[][] broken = {
            {"\"rankOffset\":", "\"rankOffset\":99999999,\"x\":"},
            {"\"done\":[]", "\"done\":[3,3]"},
            {"\"done\":[]", "\"done\":[-1]"},
            {"\"rank\":0", "\"rank\":5"},
        };
        for (String[] edit : broken) {
            assertTrue(json.contains(edit[0]), json);
            Path bad = Files.writeString(tmp.resolve("bad.json"), json.replaceFirst(java.util.regex.Pattern.quote(edit[0]),
                    java.util.regex.Matcher.quoteReplacement(edit[1])));
            MainTest.Outcome o = stoker(TarCommandsTest.concat(new String[] {"bench", "tokens", a.toString(), "--resume", bad.toString()}, opts));
            assertTrue(o.code() != 0 && o.err().startsWith("stoker: ") && o.err().lines().count() <= 2, edit[1] + ": " + o.err());
            assertTrue(o.err().contains("past the end") || o.err().contains("out of range") || o.err().contains("'done'"),
                    edit[1] + ": " + o.err());
        }
    }

    @Test
    void aNumberAgainstAStringColumnIsRefusedUnlessQuoted() {
        Path file = root().resolve("stoker-parquet/src/test/resources/parquet/rows-zstd.parquet");
        MainTest.Outcome bare = stoker("bench", "parquet", file.toString(), "--columns", "id", "--where", "label >= 5");
        assertEquals(2, bare.code(), bare.err());
        assertTrue(bare.err().contains("column label holds strings") && bare.err().contains("quote it ('5')"), bare.err());
        assertEquals(0, stoker("bench", "parquet", file.toString(), "--columns", "id", "--where", "label >= '5'").code());
        assertEquals(0, stoker("bench", "parquet", file.toString(), "--columns", "id", "--where", "label == class3").code());
    }

    @Test
    void inspectAndBenchParquet() {
        Path file = root().resolve("stoker-parquet/src/test/resources/parquet/rows-zstd.parquet");
        MainTest.Outcome o = stoker("inspect", "--json", file.toString());
        assertEquals(0, o.code(), o.err());
        assertEquals("parquet", field(o.out().strip(), "format"));
        assertEquals("10000", field(o.out().strip(), "rows"));
        assertEquals("5", field(o.out().strip(), "rowGroups"));
        assertTrue(o.out().contains("{\"name\":\"label\",\"type\":\"string\"}"), o.out());
        MainTest.Outcome b = stoker("bench", "parquet", file.toString(), "--columns", "id,x,label", "--where", "k >= 15000",
                "--batch", "100", "--workers", "0,2", "--json", "--digest");
        assertEquals(0, b.code(), b.err());
        var lines = b.out().lines().toList();
        assertEquals("4833", field(lines.get(0), "samples"));
        assertEquals(field(lines.get(0), "digest"), field(lines.get(1), "digest"));
        MainTest.Outcome bad = stoker("bench", "parquet", file.toString(), "--columns", "nope");
        assertEquals(2, bad.code());
        assertTrue(bad.err().contains("no column 'nope'"), bad.err());
    }

    @Test
    void inspectOfAParquetUrlReadsItsFooterWhereItLivesAndFetchesNothingIntoTheCache() throws IOException {
        Path file = root().resolve("stoker-parquet/src/test/resources/parquet/rows-zstd.parquet");
        Path served = java.nio.file.Files.createDirectories(tmp.resolve("served"));
        java.nio.file.Files.copy(file, served.resolve("rows.parquet"));
        Path cache = tmp.resolve("cache");
        MainTest.Outcome here = stoker("inspect", "--json", served.resolve("rows.parquet").toString());
        MainTest.Outcome there = TarCommandsTest.overHttp(served, url -> stoker("inspect", "--json", url + "rows.parquet",
                "--cache-dir", cache.toString()));
        assertEquals(0, there.code(), there.err());
        String local = here.out().strip();
        String remote = there.out().strip();
        assertEquals(local.substring(local.indexOf("\"format\"")), remote.substring(remote.indexOf("\"format\"")));
        assertTrue(field(remote, "path").startsWith("http://127.0.0.1:"), remote);
        try (var left = java.nio.file.Files.exists(cache) ? java.nio.file.Files.walk(cache) : java.util.stream.Stream.<Path>empty()) {
            assertEquals(List.of(), left.filter(java.nio.file.Files::isRegularFile).toList(), "nothing fetched whole");
        }
    }

    @Test
    void tokenFilesNpyMegatronAndJsonLinesOverHttpGiveTheLocalBatches() throws IOException {
        Path served = java.nio.file.Files.createDirectories(tmp.resolve("served"));
        java.nio.file.Files.copy(tokens(5_000), served.resolve("train.bin"));
        java.nio.file.Files.copy(fixture("npy/tokens_u2.npy"), served.resolve("tokens_u2.npy"));
        java.nio.file.Files.copy(fixture("megatron/docs.bin"), served.resolve("docs.bin"));
        java.nio.file.Files.copy(fixture("megatron/docs.idx"), served.resolve("docs.idx"));
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            lines.append("{\"text\": \"line ").append(i).append(" of the served file\"}\n");
        }
        java.nio.file.Files.writeString(served.resolve("docs.jsonl"), lines);
        String cache = tmp.resolve("cache").toString();
        String[][] runs = {{"tokens", "train.bin", "--seq-len", "16", "--batch", "4"},
                {"tokens", "tokens_u2.npy", "--seq-len", "4", "--batch", "2"},
                {"tokens", "docs.idx", "--seq-len", "8", "--batch", "2", "--separator", "50256"},
                {"jsonl", "docs.jsonl", "--seq-len", "32", "--batch", "4"}};
        for (String[] r : runs) {
            String[] rest = java.util.Arrays.copyOfRange(r, 2, r.length);
            MainTest.Outcome here = stoker(TarCommandsTest.concat(new String[] {"bench", r[0], served.resolve(r[1]).toString(),
                    "--json", "--digest", "--seed", "4"}, rest));
            MainTest.Outcome there = TarCommandsTest.overHttp(served, url -> stoker(TarCommandsTest.concat(new String[] {"bench",
                    r[0], url + r[1], "--json", "--digest", "--seed", "4", "--cache-dir", cache}, rest)));
            assertEquals(0, here.code(), here.err());
            assertEquals(0, there.code(), there.err());
            assertEquals(field(here.out().strip(), "digest"), field(there.out().strip(), "digest"), String.join(" ", r));
            assertEquals(field(here.out().strip(), "samples"), field(there.out().strip(), "samples"));
        }
        try (var left = java.nio.file.Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            assertTrue(left.noneMatch(p -> p.getFileName().toString().startsWith("stoker-remote-")), "the links' folders are gone");
        }
    }
}
