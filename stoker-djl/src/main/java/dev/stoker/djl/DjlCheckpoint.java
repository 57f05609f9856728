package dev.stoker.djl;

import ai.djl.MalformedModelException;
import ai.djl.Model;
import ai.djl.util.Utils;
import dev.stoker.LoaderState;
import dev.stoker.storage.io.PendingFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * A DJL checkpoint with the loader's position beside it: {@code NAME-NNNN.params}, as
 * {@link Model#save} names it, and {@code NAME-NNNN.stoker.json}, the {@link LoaderState} after the
 * last batch trained on.
 *
 * <pre>{@code
 * // every N steps, after trainer.step() and batch.close():
 * DjlCheckpoint.save(model, data, dir);
 * // a new process:
 * Optional<LoaderState> at = DjlCheckpoint.restore(model, dir);   // loads the newest parameters
 * LoaderBuilder b = ...same options...;
 * at.ifPresent(b::resume);
 * StokerDataset data = StokerDataset.builder(b).build();          // continues after that batch
 * }</pre>
 *
 * <p>The parameters are what {@link Model#save} writes; an optimizer's own state (momentum, Adam's
 * moments) is not in them, as DJL keeps it nowhere on disk.
 */
public final class DjlCheckpoint {
    private DjlCheckpoint() {
    }

    // NOTE [Checkpoint order]: Model.load takes the newest NAME-NNNN.params, so each of those must
    // have its loader state beside it and be whole. The state is written first (atomically), then
    // the parameters into a hidden file moved into place: a crash in between leaves an older
    // checkpoint newest, or a state with no parameters, which nothing reads.

    /**
     * Saves the model's parameters and the dataset's loader state as the next checkpoint (DJL's
     * numbering: the model's {@code Epoch} property, else one past the newest in {@code dir}).
     *
     * @return the parameters file written
     */
    public static Path save(Model model, StokerDataset data, Path dir) throws IOException {
        Files.createDirectories(dir);
        String name = model.getName();
        String epochProperty = model.getProperty("Epoch");
        int n = epochProperty != null ? Integer.parseInt(epochProperty) : Utils.getCurrentEpoch(dir, name) + 1;
        Path params = dir.resolve(String.format(Locale.ROOT, "%s-%04d.params", name, n));
        data.saveState(stateFile(params));
        Path staging = Files.createTempDirectory(dir, ".checkpoint-");
        try {
            model.setProperty("Epoch", Integer.toString(n));
            try {
                model.save(staging, name);
            } finally {
                if (epochProperty == null) {
                    model.getProperties().remove("Epoch");
                }
            }
            PendingFile.publish(staging.resolve(params.getFileName()), params); // flushed to disk, then renamed
        } finally {
            try (var left = Files.list(staging)) {
                for (Path p : left.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(staging);
        }
        return params;
    }

    /**
     * Loads the newest checkpoint's parameters into {@code model} and returns the loader state
     * saved with them, or nothing when {@code dir} holds no checkpoint of the model.
     *
     * @throws IOException when the newest parameters have no state beside them (they were not
     *                     saved by {@link #save}), naming both files
     */
    public static Optional<LoaderState> restore(Model model, Path dir) throws IOException, MalformedModelException {
        String name = model.getName();
        int n = Files.isDirectory(dir) ? Utils.getCurrentEpoch(dir, name) : -1;
        if (n < 0) {
            return Optional.empty();
        }
        Path params = dir.resolve(String.format(Locale.ROOT, "%s-%04d.params", name, n));
        Path state = stateFile(params);
        if (!Files.exists(state)) {
            throw new IOException(params + " has no loader state beside it (" + state.getFileName()
                    + "): it was not saved by DjlCheckpoint.save");
        }
        model.load(dir, name, java.util.Map.of("epoch", Integer.toString(n)));
        return Optional.of(LoaderState.read(state));
    }

    /** The loader state's file beside a parameters file: {@code NAME-NNNN.stoker.json}. */
    public static Path stateFile(Path params) {
        String f = params.getFileName().toString();
        if (!f.endsWith(".params")) {
            throw new IllegalArgumentException("not a DJL parameters file (NAME-NNNN.params): " + params);
        }
        return params.resolveSibling(f.substring(0, f.length() - ".params".length()) + ".stoker.json");
    }
}
