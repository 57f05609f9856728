package dev.stoker.sources;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Loader;
import dev.stoker.Sampler;
import dev.stoker.formats.io.Magic;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.npy.NpyArray;
import dev.stoker.formats.tensors.TensorFile;
import dev.stoker.formats.tokens.Megatron;
import dev.stoker.formats.tokens.PackedSequences;
import dev.stoker.formats.tokens.TokenFile;
import dev.stoker.formats.tokens.TokenWindows;
import dev.stoker.sources.Schema.Choices;
import dev.stoker.sources.Schema.Min;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Windows of {@code seqLen + 1} tokens from token files, as {@code x} and {@code y} shifted by one:
 * raw {@code .bin} files of {@code dtype}, {@code .npy} arrays, a one-dimensional integer tensor of a
 * {@code torch.save} archive ({@code .pt}) or a safetensors file, or Megatron {@code .bin/.idx}
 * pairs, whose documents are packed (with {@code separator} between them when it is not -1).
 * Several files are concatenated, or mixed in the proportions {@code weights}. Local paths, or
 * http(s):// and s3:// URLs read through {@code cache}. A file is read as raw tokens only when its
 * first bytes show no other format: a {@code .npy} array, a {@code torch.save} archive or a
 * safetensors file under another name is read as one, a Megatron {@code .idx} as its pair, and
 * any other zip archive, an HDF5, Parquet, ROOT, SQLite or Arrow file, a compressed file, an HTML
 * page or text is refused, naming what it is.
 *
 * @param windows {@code disjoint}: non-overlapping windows, each token once per epoch;
 *                {@code random}: windows at random offsets with replacement (nanoGPT's get_batch),
 *                as many per epoch as disjoint windows would give; {@code offset}: window
 *                {@code i} of the disjoint ones shifted by a random offset below
 *                {@code seq_len} each epoch ({@link Sampler#offsets}), in the loader's order
 * @param outDtype {@code x} and {@code y} as {@code int64} or {@code int32}
 * @param raw      every file read as raw tokens of {@code dtype}, as it is, whatever its name and first bytes
 */
public record Tokens(List<String> paths, @Min(1) int seqLen, @Choices({"uint16", "uint32", "int32", "int64", "uint8"}) String dtype,
                     @Choices({"int64", "int32"}) String outDtype, Windows windows, @Min(0) List<Double> weights,
                     @Min(-1) long separator, boolean raw, RemoteCache cache) implements SourceSpec {
    /** Which windows of {@code seq_len} tokens an epoch takes ({@code windows}). */
    public enum Windows implements Specs.Word {
        /** Non-overlapping windows, each token once an epoch. */
        DISJOINT,
        /** Windows at random offsets, with replacement (nanoGPT's {@code get_batch}). */
        RANDOM,
        /** Each disjoint window shifted by a random offset below {@code seq_len} each epoch. */
        OFFSET;

        /** The windows named {@code word} ({@code disjoint}, ...). */
        public static Windows of(String word) {
            return Specs.Word.of(Windows.class, "windows", word);
        }
    }

    public Tokens {
        paths = paths == null ? List.of() : List.copyOf(paths);
        SpecException.atLeast("seq_len", seqLen, 1);
        tokenType(dtype);
        outType(outDtype);
        windows = windows == null ? Windows.DISJOINT : windows;
        if (weights != null) {
            weights = List.copyOf(weights);
            for (double w : weights) {
                if (!(w >= 0)) {
                    throw new SpecException("weights", "must be numbers >= 0, got " + weights);
                }
            }
        }
        if (separator < -1) {
            throw new SpecException("separator", "must be a token id, or -1 for none, got " + separator);
        }
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /** Disjoint windows of 1024 tokens from uint16 files, concatenated, as int64. */
    public static Tokens of(List<String> paths) {
        return new Tokens(paths, 1024, "uint16", "int64", Windows.DISJOINT, null, -1, false, RemoteCache.DEFAULT);
    }

    /** The same with windows of {@code seqLen} tokens. */
    public Tokens withSeqLen(int seqLen) {
        return new Tokens(paths, seqLen, dtype, outDtype, windows, weights, separator, raw, cache);
    }

    /** The token type {@code name} gives a raw file ({@code uint16} or {@code u2}, ...). */
    public static DType tokenType(String name) {
        return switch (name == null ? "" : name) {
            case "uint16", "u2" -> DType.UINT16;
            case "uint32", "u4" -> DType.UINT32;
            case "int32", "i4" -> DType.INT32;
            case "int64", "i8" -> DType.INT64;
            case "uint8", "u1" -> DType.UINT8;
            default -> throw new SpecException("dtype", "must be uint16, uint32, int32, int64 or uint8; got '" + name + "'");
        };
    }

    static DType outType(String name) {
        return switch (name == null ? "" : name) {
            case "int64" -> DType.INT64;
            case "int32" -> DType.INT32;
            default -> throw new SpecException("out_dtype", "must be int64 or int32; got '" + name + "'");
        };
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        if (paths.isEmpty()) {
            throw new SpecException("paths", "needs at least one token file");
        }
        if (weights != null && weights.size() != paths.size()) {
            throw new SpecException("weights", "needs one weight per path: " + weights.size() + " for " + paths.size());
        }
        boolean random = windows != Windows.DISJOINT; // a window at every token, the sampler choosing
        DType out = outType(outDtype);
        return Recipe.open(kind(), r -> {
            List<DirectDataset> datasets = new ArrayList<>();
            List<Path> local = r.hold(new LocalCopies(paths, cache)).paths(!raw); // raw: no index asked for
            for (int i = 0; i < local.size(); i++) {
                try {
                    datasets.add(windows(r, local.get(i), random, out));
                } catch (IOException e) {
                    throw named(e, local.get(i), paths.get(i));
                }
            }
            DirectDataset data;
            if (weights != null) {
                long total = datasets.stream().mapToLong(DirectDataset::size).sum();
                data = DirectDataset.mix(total, weights.stream().mapToDouble(Double::doubleValue).toArray(), datasets);
            } else {
                data = datasets.size() == 1 ? datasets.get(0) : DirectDataset.concat(datasets);
            }
            if (windows == Windows.RANDOM) {
                r.sampler(Sampler.random(Math.max(1, data.size() / seqLen))); // as many draws as disjoint windows
            } else if (windows == Windows.OFFSET) {
                r.sampler(Sampler.offsets(seqLen, loader.order() != LoaderSpec.Order.SEQUENTIAL));
            }
            r.tokensPerSample(seqLen).base(() -> Loader.builder(data));
        });
    }

    /**
     * The same error naming the file as it was given: a URL's, not its local copy's folder (a
     * Megatron pair's other file is beside it in both).
     */
    private static IOException named(IOException e, Path local, String location) {
        String m = e.getMessage();
        String folder = local.getParent() == null ? null : local.getParent() + java.io.File.separator;
        String name = local.getFileName().toString();
        if (m == null || local.toString().equals(location) || folder == null || !m.contains(folder) || !location.endsWith(name)) {
            return e;
        }
        return new IOException(m.replace(folder, location.substring(0, location.length() - name.length())), e);
    }

    /**
     * Whether {@code p} is a file of tensors, read as its tensor: a {@code torch.save} archive
     * (BabyLlama's {@code torch.save(tensor, "tokenized.pt")}) or a safetensors file, by name or
     * by its first bytes. A zip archive that is no {@code torch.save} is refused here; the other
     * formats a file's first bytes show are refused by {@link TokenFile#open} (NOTE [Raw or not]).
     */
    private static boolean tensors(Path p, String name) throws IOException {
        if (!Files.isRegularFile(p)) {
            return false; // TokenFile.open names what it is
        }
        Magic m = Magic.of(Magic.head(p));
        if (m == Magic.ZIP && !TensorFile.isTorchSave(p)) {
            throw new CorruptShardException(name, 0, "a zip archive, not tokens (no torch.save data.pkl in it); a raw token "
                    + "file that only begins like one is read as it is with --raw (Python: raw=True)");
        }
        return m == Magic.ZIP || m == Magic.TORCH_LEGACY || name.endsWith(".safetensors") || TensorFile.looksLikeSafeTensors(p);
    }

    /** The one tensor a token file of tensors holds. */
    private static NpyArray tensor(TensorFile f) throws CorruptShardException {
        if (f.arrays().size() != 1) {
            throw new CorruptShardException(f.name(), -1, "holds " + f.arrays().size() + " tensors " + f.arrays().keySet()
                    + ": a token file holds one tensor of token ids (the arrays source reads named tensors as fields)");
        }
        return f.arrays().values().iterator().next();
    }

    private static dev.stoker.formats.tokens.Tokens tokensOf(NpyArray a) throws IOException {
        try {
            return dev.stoker.formats.tokens.Tokens.of(a);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e); // an array that is no token ids: bad data, named
        }
    }

    /** One file's windows, or for Megatron data its documents packed. */
    private DirectDataset windows(Recipe r, Path p, boolean random, DType out) throws IOException {
        String name = p.toString();
        dev.stoker.formats.tokens.Tokens t;
        if (raw) {
            t = r.hold(TokenFile.open(p, tokenType(dtype), true));
        } else if (Megatron.exists(p) || name.endsWith(".idx")) { // an index without its .bin: the .bin named
            return new PackedSequences(r.hold(Megatron.open(p)), seqLen, separator, -1, out);
        } else if (!Files.exists(p)) {
            throw new NoSuchFileException(name);
        } else if (name.endsWith(".npy") || Npy.isNpy(p)) {
            t = tokensOf(r.hold(Npy.read(p)));
        } else if (tensors(p, name)) {
            t = tokensOf(tensor(r.hold(TensorFile.open(p))));
        } else {
            t = r.hold(TokenFile.open(p, tokenType(dtype))); // refuses a file that shows another format
        }
        return random ? TokenWindows.overlapping(t, seqLen, out) : TokenWindows.disjoint(t, seqLen, out);
    }
}
