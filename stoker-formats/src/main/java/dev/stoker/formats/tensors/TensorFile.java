package dev.stoker.formats.tensors;

import dev.stoker.CorruptShardException;
import dev.stoker.formats.io.Magic;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.npy.NpyArray;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The named tensors of one file: a {@code torch.save} archive ({@link TorchSave}), a safetensors
 * file ({@link SafeTensors}) or a numpy {@code .npz}, each tensor an {@link NpyArray} (dtype, byte
 * order, shape, data in C order) read in place where the format allows. {@link #close()} releases
 * them all; idempotent.
 */
public final class TensorFile implements AutoCloseable {
    private final String name;
    private final String format;
    private final Map<String, NpyArray> arrays;
    private final List<AutoCloseable> owners;
    private final boolean single;
    private boolean closed;

    TensorFile(String name, String format, Map<String, NpyArray> arrays, boolean single, List<AutoCloseable> owners) {
        this.name = name;
        this.format = format;
        this.arrays = Collections.unmodifiableMap(new LinkedHashMap<>(arrays));
        this.single = single;
        this.owners = owners;
    }

    /**
     * Opens {@code path} as what it is: a zip archive holding a {@code data.pkl} as a
     * {@code torch.save} archive, any other zip as an {@code .npz}, a file named
     * {@code .safetensors} or shaped like one ({@link SafeTensors#looksLike}) as safetensors.
     * Anything else is refused, naming what it is.
     */
    public static TensorFile open(Path path) throws IOException {
        if (!Files.exists(path)) {
            throw new NoSuchFileException(path.toString());
        }
        byte[] head = Magic.head(path);
        Magic m = Magic.of(head);
        String n = String.valueOf(path.getFileName());
        if (m == Magic.ZIP) {
            return TorchSave.isTorchSave(path) ? TorchSave.open(path) : npz(path);
        }
        if (m == Magic.TORCH_LEGACY) {
            return TorchSave.open(path); // refused, saying how to save it again
        }
        if (n.endsWith(".safetensors") || SafeTensors.looksLike(path)) {
            return SafeTensors.open(path);
        }
        throw new CorruptShardException(path.toString(), 0, (m != null ? m.description() : "not a file of named tensors")
                + "; expected a torch.save archive (.pt), a safetensors file or an .npz");
    }

    /** Whether {@code path} is a {@code torch.save} archive, by its bytes ({@link TorchSave#isTorchSave}). */
    public static boolean isTorchSave(Path path) throws IOException {
        return TorchSave.isTorchSave(path);
    }

    /** Whether {@code path}'s bytes are shaped like a safetensors file's, whatever its name ({@link SafeTensors#looksLike}). */
    public static boolean looksLikeSafeTensors(Path path) throws IOException {
        return SafeTensors.looksLike(path);
    }

    /** The arrays of an {@code .npz}, read into memory ({@link Npy#readNpz}). */
    static TensorFile npz(Path path) throws IOException {
        Map<String, NpyArray> arrays = Npy.readNpz(path);
        return new TensorFile(path.toString(), "npz", arrays, false, List.of(() -> Npy.closeAll(arrays)));
    }

    /** The file, for errors. */
    public String name() {
        return name;
    }

    /** {@code torch}, {@code safetensors} or {@code npz}. */
    public String format() {
        return format;
    }

    /**
     * The tensors by name, in the file's order: a dict's keys (nested dicts joined with dots, a
     * list's items by their index), {@code ""} for a file that holds one tensor alone.
     */
    public Map<String, NpyArray> arrays() {
        return arrays;
    }

    /** Whether the file holds one tensor alone ({@code torch.save(tensor, f)}), not a dict of them. */
    public boolean single() {
        return single;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = owners.size() - 1; i >= 0; i--) {
            try {
                owners.get(i).close();
            } catch (Exception e) {
                throw new IllegalStateException(name + ": " + e.getMessage(), e);
            }
        }
    }
}
