package dev.stoker.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The docs' Java code blocks (README.md's and every page's under docs/), taken from the files
 * themselves, compiled and run: a change to the docs that no longer compiles or works fails here,
 * and so does a Java block no test here runs (a block fenced {@code ```java sketch} is an
 * illustration with gaps, shown as Java and not run). Each block becomes the body of a method of
 * a class that imports {@code dev.stoker.*}, {@code java.nio.file.*} and {@code java.lang.foreign.*}
 * (a block imports anything else itself, as its readers must); {@code train(batch)} records what
 * it saw.
 */
class DocsTest {
    @TempDir
    Path tmp;

    @Test
    void theLibraryExampleRunsAndResumesEachSampleOnce() throws Exception {
        Object example = run(block("README.md", 0), "");
        int batches = (int) example.getClass().getField("batches").get(example);
        Set<?> trained = (Set<?>) example.getClass().getField("trained").get(example);
        // ten batches of 256 for rank 0 of 2, then the rest of its 5,000 positions: every record of
        // its share seen once
        assertEquals(20, batches);
        assertEquals(5000, trained.size());
    }

    @Test
    void theTokenExampleRunsOnATokenFile() throws Exception {
        Path tokens = tmp.resolve("train.bin");
        ByteBuffer b = ByteBuffer.allocate(2 * 50_000).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 50_000; i++) {
            b.putShort((short) (i % 50_000));
        }
        Files.write(tokens, b.array());
        String block = block("docs/java.md", 0);
        assertTrue(block.contains("Path.of(\"train.bin\")"), block);
        run(block.replace("Path.of(\"train.bin\")", "Path.of(\"" + tokens + "\")"), "");
    }

    @Test
    void theStreamingTokenExampleRunsOnJsonLines() throws Exception {
        Path jsonl = tmp.resolve("train.jsonl");
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 2000; i++) {
            text.append("{\"text\": \"document ").append(i).append(" of the example, with some words to tokenize\"}\n");
        }
        Files.writeString(jsonl, text);
        String block = block("docs/java.md", 1);
        assertTrue(block.contains("Path.of(\"train.jsonl\")"), block);
        Object example = run(block.replace("Path.of(\"train.jsonl\")", "Path.of(\"" + jsonl + "\")")
                .replace("MemorySegment tokens = b.data(\"tokens\");", "MemorySegment tokens = b.data(\"tokens\"); batches++;"), "");
        assertEquals(1, example.getClass().getField("batches").get(example), "2,000 documents of about 14 ids each are "
                + "fewer than 32 windows of 1,024: one short batch");
    }

    @Test
    void theImageExampleCompiles() throws Exception {
        compile(block("docs/java.md", 2), ""); // it needs shards of images to run; W2's are not here
    }

    /** Every Java block of the docs is one of those above (docs/djl.md's: stoker-djl's DocsTest): a new one needs a test of its own. */
    @Test
    void everyJavaBlockOfTheDocsIsRunHere() throws IOException {
        assertEquals(1, blocks("README.md").size(), "README.md's Java blocks");
        assertEquals(3, blocks("docs/java.md").size(), "docs/java.md's Java blocks");
        Path docs = doc("docs");
        try (var pages = Files.walk(docs)) {
            for (Path page : pages.filter(p -> p.toString().endsWith(".md")).toList()) {
                String name = docs.relativize(page).toString();
                if (name.equals("djl.md")) {
                    assertEquals(1, blocks(page).size(), page + "'s Java blocks (stoker-djl's DocsTest runs its one)");
                } else if (!name.equals("java.md")) {
                    assertEquals(0, blocks(page).size(), page + " has Java blocks no test runs");
                }
            }
        }
    }

    /** The {@code n}th ```java block of a page of the docs (a path from the repository's root). */
    private static String block(String page, int n) throws IOException {
        List<String> blocks = blocks(page);
        assertTrue(blocks.size() > n, page + " has " + blocks.size() + " java blocks");
        return blocks.get(n);
    }

    private static List<String> blocks(String page) throws IOException {
        return blocks(doc(page));
    }

    private static List<String> blocks(Path page) throws IOException {
        List<String> blocks = new ArrayList<>();
        StringBuilder current = null;
        for (String line : Files.readAllLines(page)) {
            if (current == null && line.strip().equals("```java")) {
                current = new StringBuilder();
            } else if (current != null && line.strip().equals("```")) {
                blocks.add(current.toString());
                current = null;
            } else if (current != null) {
                current.append(line).append('\n');
            }
        }
        return blocks;
    }

    private static Path doc(String path) {
        Path p = Path.of(path).toAbsolutePath();
        return Files.exists(p) ? p : Path.of("..", path).toAbsolutePath(); // the module's folder, or the root
    }

    /** Compiles the block as a class and runs it; returns the instance. */
    private Object run(String block, String more) throws Exception {
        Path classes = compile(block, more);
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
            Object example = loader.loadClass("readme.Example").getConstructor().newInstance();
            example.getClass().getMethod("run").invoke(example);
            return example;
        }
    }

    private Path compile(String block, String more) throws IOException {
        StringBuilder imports = new StringBuilder();
        StringBuilder body = new StringBuilder();
        for (String line : block.split("\n")) {
            (line.startsWith("import ") ? imports : body).append(line).append('\n');
        }
        String source = """
                package readme;

                import dev.stoker.*;
                import java.lang.foreign.*;
                import java.nio.charset.StandardCharsets;
                import java.nio.file.*;
                %s
                public class Example {
                    public final java.util.Set<String> trained = new java.util.HashSet<>();
                    public int batches;

                    void train(Batch batch) {
                        for (int r = 0; r < batch.size(); r++) {
                            trained.add(new String(batch.bytes(0, r).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8));
                        }
                        batches++;
                    }
                    %s
                    public void run() throws Exception {
                %s
                    }
                }
                """.formatted(imports, more, body);
        Path src = Files.createDirectories(tmp.resolve("src/readme")).resolve("Example.java");
        Files.writeString(src, source);
        Path classes = Files.createDirectories(tmp.resolve("classes"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        java.io.StringWriter errors = new java.io.StringWriter();
        int rc = javac.run(null, null, new java.io.PrintStream(new java.io.OutputStream() {
            @Override
            public void write(int c) {
                errors.write(c);
            }
        }, true), "-proc:none", "-cp", System.getProperty("java.class.path"), "-d", classes.toString(), src.toString());
        assertEquals(0, rc, "the docs' block does not compile:\n" + errors + "\n" + source);
        return classes;
    }
}
