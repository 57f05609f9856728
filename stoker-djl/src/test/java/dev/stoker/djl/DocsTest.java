package dev.stoker.djl;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** docs/djl.md's example, taken from the page itself, compiled and run under a real Trainer. */
class DocsTest {
    @TempDir
    Path tmp;

    @Test
    void theDjlExampleTrains() throws Exception {
        Path root = Generated.images(tmp.resolve("images"), 3, 8, 40, 5);
        String source = """
                package readme;

                import ai.djl.*;
                import ai.djl.ndarray.types.Shape;
                import ai.djl.nn.*;
                import ai.djl.nn.core.Linear;
                import ai.djl.training.*;
                import ai.djl.training.loss.Loss;
                import dev.stoker.Loader;
                import dev.stoker.djl.StokerDataset;
                import dev.stoker.formats.image.*;
                import java.nio.file.Path;

                public class Example {
                    public static long run(Path root) throws Exception {
                        int epochs = 2;
                        try (Model model = Model.newInstance("docs")) {
                            model.setBlock(new SequentialBlock().add(Blocks.batchFlattenBlock())
                                    .add(Linear.builder().setUnits(3).build()));
                            try (Trainer trainer = model.newTrainer(new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                                    .addTrainingListeners(new ai.djl.training.listener.EpochTrainingListener()))) {
                                trainer.initialize(new Shape(64, 3, 224, 224));
                %s
                                return trainer.getTrainingResult().getEpoch();
                            }
                        }
                    }
                }
                """.formatted(block());
        Path src = Files.createDirectories(tmp.resolve("src/readme")).resolve("Example.java");
        Files.writeString(src, source);
        Path classes = Files.createDirectories(tmp.resolve("classes"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        java.io.StringWriter errors = new java.io.StringWriter();
        int rc = javac.run(null, new java.io.PrintStream(java.io.OutputStream.nullOutputStream()), new java.io.PrintStream(
                new java.io.OutputStream() {
                    @Override
                    public void write(int c) {
                        errors.write(c);
                    }
                }, true), "-proc:none", "-cp", System.getProperty("java.class.path"), "-d", classes.toString(), src.toString());
        assertEquals(0, rc, "docs/djl.md's block does not compile:\n" + errors + "\n" + source);
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
            Object epochs = loader.loadClass("readme.Example").getMethod("run", Path.class).invoke(null, root);
            assertEquals(2L, ((Number) epochs).longValue());
        }
    }

    /** The java block of docs/djl.md, under its heading. */
    private static String block() throws Exception {
        Path page = Files.exists(Path.of("docs", "djl.md")) ? Path.of("docs", "djl.md") : Path.of("..", "docs", "djl.md");
        List<String> lines = Files.readAllLines(page);
        int at = lines.indexOf("# DJL: `StokerDataset`");
        assertTrue(at >= 0, "docs/djl.md has no DJL heading");
        int from = at;
        while (!lines.get(from).strip().equals("```java")) {
            from++;
        }
        List<String> block = new ArrayList<>();
        for (int i = from + 1; !lines.get(i).strip().equals("```"); i++) {
            block.add(lines.get(i));
        }
        return String.join("\n", block);
    }
}
