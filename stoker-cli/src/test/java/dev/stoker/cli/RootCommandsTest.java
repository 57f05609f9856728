package dev.stoker.cli;

import static dev.stoker.cli.MainTest.stoker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@code stoker inspect}, {@code cat} and {@code bench} over the real ROOT files in ../shared/physics-data. */
class RootCommandsTest {
    static String file(String name) {
        Path d = TokensCommandsTest.root().resolveSibling("shared").resolve("physics-data").resolve("root");
        assumeTrue(Files.isDirectory(d), "../shared/physics-data is absent");
        return d.resolve(name).toString();
    }

    @Test
    void inspectListsTreesBranchesBasketsAndWhatIsNotRead() throws Exception {
        MainTest.Outcome o = stoker("inspect", "--json", file("uproot-sample-6.20.04-lz4.root"));
        assertEquals(0, o.code(), o.err());
        JsonNode j = new ObjectMapper().readTree(o.out());
        assertEquals("root", j.get("format").asText());
        assertEquals("lz4 level 4", j.get("compression").asText());
        assertEquals("6.20/04", j.get("rootVersion").asText());
        JsonNode tree = j.get("trees").get(0);
        assertEquals("sample", tree.get("name").asText());
        assertEquals(30, tree.get("entries").asLong());
        JsonNode ai4 = null;
        for (JsonNode b : tree.get("branches")) {
            if (b.get("name").asText().equals("Ai4")) {
                ai4 = b;
            }
        }
        assertEquals("int32_t[]", ai4.get("type").asText());
        assertTrue(ai4.get("ragged").asBoolean());
        assertEquals(18, ai4.get("baskets").asLong());
        assertEquals("char*", tree.get("notRead").get("str").asText());
    }

    @Test
    void catPrintsEventsWithJaggedBranchesAsLists() throws Exception {
        MainTest.Outcome o = stoker("cat", "root", file("uproot-HZZ.root"), "--tree", "events", "--branches", "NJet,Jet_Px",
                "--skip", "1", "--limit", "1");
        assertEquals(0, o.code(), o.err());
        JsonNode j = new ObjectMapper().readTree(o.out().strip());
        assertEquals(1, j.get("NJet").asInt());
        assertEquals(1, j.get("Jet_Px").size());
        assertEquals(-38.874714, j.get("Jet_Px").get(0).asDouble(), 1e-5);
    }

    @Test
    void aSelectedStringBranchIsAnErrorNamingIt() {
        MainTest.Outcome o = stoker("bench", "root", file("uproot-Zmumu.root"), "--tree", "events", "--branches", "Type");
        assertEquals(2, o.code());
        assertTrue(o.err().contains("branch 'Type' is char*, which Stoker does not read; leave it out of branches="), o.err());
    }

    @Test
    void benchReadsSeveralFilesAsOne() {
        MainTest.Outcome o = stoker("bench", "root", file("uproot-HZZ.root"), file("uproot-HZZ-zstd.root"), "--tree", "events",
                "--batch", "64", "--json");
        assertEquals(0, o.code(), o.err());
        assertTrue(o.out().contains("\"samples\":4842") || o.out().contains("4842"), o.out());
    }
}
