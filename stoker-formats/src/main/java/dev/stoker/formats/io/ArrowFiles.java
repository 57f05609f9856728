package dev.stoker.formats.io;

import dev.stoker.CorruptShardException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The Arrow files a path names: a Hugging Face {@code save_to_disk} folder's, any folder's, or one file. */
public final class ArrowFiles {
    private ArrowFiles() {
    }

    /**
     * The Arrow files of {@code path}, in row order: a {@code save_to_disk} folder's data files in
     * its {@code state.json}'s order, the {@code .arrow} files of any other folder by name, or the
     * file itself. A {@code DatasetDict} folder is refused naming its splits; a dataset whose rows
     * are remapped by an indices file is refused.
     */
    public static List<Path> of(Path path) throws IOException {
        if (!java.nio.file.Files.isDirectory(path)) {
            return List.of(path);
        }
        Path dict = path.resolve("dataset_dict.json");
        if (java.nio.file.Files.isRegularFile(dict)) {
            throw new CorruptShardException(dict.toString(), -1, "a DatasetDict folder: give one split's folder ("
                    + String.join(", ", new com.fasterxml.jackson.databind.ObjectMapper().readTree(dict.toFile()).path("splits")
                    .valueStream().map(n -> n.asText()).toList()) + ")");
        }
        Path state = path.resolve("state.json");
        if (java.nio.file.Files.isRegularFile(state)) {
            com.fasterxml.jackson.databind.JsonNode s;
            try {
                s = new com.fasterxml.jackson.databind.ObjectMapper().readTree(state.toFile());
            } catch (IOException e) {
                throw new CorruptShardException(state.toString(), -1, "not JSON: " + e.getMessage().lines().findFirst().orElse(""));
            }
            if (s.path("_indices_data_files").isArray() && !s.path("_indices_data_files").isEmpty()) {
                throw new CorruptShardException(state.toString(), -1, "rows remapped by an indices file (_indices_data_files), "
                        + "which Stoker does not apply: save the dataset again with a current datasets (flatten_indices)");
            }
            if (!s.path("_data_files").isArray() || s.path("_data_files").isEmpty()) {
                throw new CorruptShardException(state.toString(), -1, "expected _data_files, a list of {\"filename\": ...}");
            }
            List<Path> out = new ArrayList<>();
            for (var f : s.get("_data_files")) {
                String file = f.path("filename").asText("");
                Path p = path.resolve(file).normalize();
                if (file.isEmpty() || !p.startsWith(path.normalize())) {
                    throw new CorruptShardException(state.toString(), -1, "a data file '" + file + "' outside the folder");
                }
                out.add(p);
            }
            return out;
        }
        try (var files = java.nio.file.Files.list(path)) {
            List<Path> out = files.filter(p -> p.getFileName().toString().endsWith(".arrow")).sorted().toList();
            if (out.isEmpty()) {
                throw new java.nio.file.NoSuchFileException(path.toString(), null, "no state.json and no .arrow files");
            }
            return out;
        }
    }
}
