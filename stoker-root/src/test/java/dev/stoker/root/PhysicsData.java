package dev.stoker.root;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/** The real ROOT files in {@code ../shared/physics-data} beside the repository; tests skip without them. */
final class PhysicsData {
    private PhysicsData() {
    }

    /** {@code ../shared/physics-data/<folder>}, found from the working directory up; the test is skipped when absent. */
    static Path folder(String folder) {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path d = p.resolveSibling("shared").resolve("physics-data").resolve(folder);
            if (Files.isDirectory(p.resolve("stoker-core")) && Files.isDirectory(d)) {
                return d;
            }
        }
        assumeTrue(false, "../shared/physics-data/" + folder + " is absent");
        return null;
    }

    static Path root(String file) {
        return folder("root").resolve(file);
    }
}
