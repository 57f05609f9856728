package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code stoker cat|bench arrays} and {@code stoker inspect} of tensor files. */
class ArraysCommandsTest {
    private static final Path TORCH = Path.of("../../shared/physics-data/torch-save").toAbsolutePath().normalize();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private record Run(int rc, List<String> out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(rc, out.toString().lines().toList(), err.toString());
    }

    @Test
    void catPrintsRawArraysWithARaggedFieldAsEachSamplesValues() throws Exception {
        ByteBuffer x = ByteBuffer.allocate(4 * 3 * 2).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 6; i++) {
            x.putFloat(i);
        }
        Files.write(dir.resolve("x.npy"), x.array());
        Files.write(dir.resolve("l.npy"), ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putInt(2).putInt(0).putInt(1).array());
        Files.writeString(dir.resolve("memmap_properties.json"),
                "{\"x\": {\"shape\": [3, 2], \"dtype\": \"float32\"}, \"l\": {\"shape\": [3], \"dtype\": \"int32\"}}");
        Run r = run("cat", "arrays", "--files", "x={\"path\": \"" + dir.resolve("x.npy") + "\", \"lengths\": \"" + dir.resolve("l.npy")
                + "\"}", "--files", "l=" + dir.resolve("l.npy"), "--properties", dir.resolve("memmap_properties.json").toString());
        assertEquals(0, r.rc(), r.err());
        assertEquals(3, r.out().size());
        JsonNode first = JSON.readTree(r.out().get(0));
        assertEquals("[0.0,1.0]", first.get("x").toString());
        assertEquals(2, first.get("l").asInt());
        assertEquals("[]", JSON.readTree(r.out().get(1)).get("x").toString());
        assertEquals("[4.0]", JSON.readTree(r.out().get(2)).get("x").toString());
    }

    @Test
    void inspectListsATorchSaveFilesTensors() throws Exception {
        assumeTrue(Files.isDirectory(TORCH), "no ../shared/physics-data/torch-save");
        Run r = run("inspect", "--json", TORCH.resolve("dict_of_tensors.pt").toString());
        assertEquals(0, r.rc(), r.err());
        JsonNode j = JSON.readTree(r.out().get(0));
        assertEquals("torch", j.get("format").asText());
        assertEquals("x", j.get("tensors").get(0).get("name").asText());
        assertEquals("float32", j.get("tensors").get(0).get("dtype").asText());
        assertEquals("[3,4]", j.get("tensors").get(0).get("shape").toString());
        assertEquals("uint8", j.get("tensors").get(1).get("dtype").asText());
    }

    @Test
    void badDataIsOneLineAndExitOneABadSpecExitTwo() throws Exception {
        assumeTrue(Files.isDirectory(TORCH), "no ../shared/physics-data/torch-save");
        Path counter = TORCH.resolve("counter_global.pt");
        Run r = run("bench", "arrays", counter.toString(), "--steps", "1");
        assertEquals(1, r.rc(), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().startsWith("stoker: " + counter + ": refuses global 'collections.Counter'"), r.err());
        Files.write(dir.resolve("x.npy"), new byte[64]);
        r = run("bench", "arrays", "--files", "x=" + dir.resolve("x.npy"), "--steps", "1");
        assertEquals(1, r.rc(), r.err());
        assertTrue(r.err().contains("x.npy: no .npy header"), r.err());
        r = run("bench", "arrays", TORCH.resolve("dict_of_tensors.pt").toString(), "--files", "x=" + dir.resolve("x.npy"));
        assertEquals(2, r.rc(), r.err());
        assertTrue(r.err().contains("one of the two"), r.err());
    }
}
