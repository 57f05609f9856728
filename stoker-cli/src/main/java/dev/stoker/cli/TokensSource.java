package dev.stoker.cli;

import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.npy.NpyArray;
import dev.stoker.formats.tokens.Megatron;
import dev.stoker.formats.tokens.PackedSequences;
import dev.stoker.formats.tokens.TokenFile;
import dev.stoker.formats.tokens.TokenWindows;
import dev.stoker.formats.tokens.Tokens;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Opens token files for the CLI: raw .bin, .npy, or Megatron datasets (packed). */
final class TokensSource implements AutoCloseable {
    private final List<AutoCloseable> open = new ArrayList<>();
    final List<DirectDataset> datasets = new ArrayList<>();

    static DType tokenType(String name) {
        return switch (name) {
            case "uint16", "u2" -> DType.UINT16;
            case "uint32", "u4" -> DType.UINT32;
            case "int32", "i4" -> DType.INT32;
            case "int64", "i8" -> DType.INT64;
            case "uint8", "u1" -> DType.UINT8;
            default -> throw new Main.UsageException("--dtype must be uint16, uint32, int32, int64 or uint8; got '" + name + "'");
        };
    }

    static DType outType(String name) {
        return switch (name) {
            case "int64" -> DType.INT64;
            case "int32" -> DType.INT32;
            default -> throw new Main.UsageException("--out-dtype must be int64 or int32; got '" + name + "'");
        };
    }

    /** Windows ({@code random}: at every offset; {@code disjoint}) or, for Megatron data, packed documents. */
    TokensSource(List<Path> paths, DType raw, int seqLen, boolean random, DType out, long separator) throws IOException {
        if (seqLen < 1) {
            throw new Main.UsageException("--seq-len must be >= 1, got " + seqLen);
        }
        try {
            for (Path p : paths) {
                String name = p.toString();
                if (Megatron.exists(p)) {
                    Megatron m = Megatron.open(p);
                    open.add(m);
                    datasets.add(new PackedSequences(m, seqLen, separator, -1, out));
                    continue;
                }
                if (!Files.exists(p)) {
                    throw new NoSuchFileException(name);
                }
                Tokens t;
                if (name.endsWith(".npy")) {
                    NpyArray a = Npy.read(p);
                    open.add(a);
                    try {
                        t = Tokens.of(a);
                    } catch (IllegalArgumentException e) {
                        throw new Main.BadDataException(e.getMessage(), e);
                    }
                } else {
                    TokenFile f = TokenFile.open(p, raw);
                    open.add(f);
                    t = f;
                }
                datasets.add(random ? TokenWindows.overlapping(t, seqLen, out) : TokenWindows.disjoint(t, seqLen, out));
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    public void close() {
        for (AutoCloseable c : open) {
            try {
                c.close();
            } catch (Exception ignored) {
                // read-only mappings: nothing is lost when unmapping fails
            }
        }
        open.clear();
    }
}
