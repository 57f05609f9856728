package dev.stoker.formats.tokens;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.io.MappedFile;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A Megatron-LM indexed dataset: {@code PREFIX.bin} holds the tokens of every sequence back to
 * back; {@code PREFIX.idx} describes them:
 *
 * <pre>
 *   magic            9 bytes  "MMIDIDX\0\0"
 *   version          uint64   1
 *   dtype code       uint8    1 uint8, 2 int8, 3 int16, 4 int32, 5 int64, 6 float64, 7 float32, 8 uint16
 *   sequence count   uint64   S
 *   document count   uint64   D + 1 (the document index holds the boundaries)
 *   sequence lengths int32[S] tokens per sequence
 *   pointers         int64[S] byte offset of each sequence in the .bin
 *   document index   int64[D + 1]  sequences [doc[d], doc[d+1]) form document d; starts at 0, ends at S
 * </pre>
 * All little-endian. Both files are mapped; {@link #close()} unmaps them.
 */
public final class Megatron implements Tokens, AutoCloseable {
    static final byte[] MAGIC = {'M', 'M', 'I', 'D', 'I', 'D', 'X', 0, 0};
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path prefix;
    private final MappedFile idx;
    private final MappedFile bin;
    private final DType dtype;
    private final long sequences;
    private final long documents;
    private final long lengthsAt;
    private final long pointersAt;
    private final long docsAt;
    private final long tokens;

    private Megatron(Path prefix, MappedFile idx, MappedFile bin, DType dtype, long sequences, long documents,
                     long lengthsAt, long pointersAt, long docsAt, long tokens) {
        this.prefix = prefix;
        this.idx = idx;
        this.bin = bin;
        this.dtype = dtype;
        this.sequences = sequences;
        this.documents = documents;
        this.lengthsAt = lengthsAt;
        this.pointersAt = pointersAt;
        this.docsAt = docsAt;
        this.tokens = tokens;
    }

    /** {@code PREFIX} with or without {@code .bin}/{@code .idx}. */
    public static Path prefixOf(Path p) {
        String s = p.toString();
        return s.endsWith(".bin") || s.endsWith(".idx") ? Path.of(s.substring(0, s.length() - 4)) : p;
    }

    /** True when {@code PREFIX.idx} and {@code PREFIX.bin} both exist. */
    public static boolean exists(Path p) {
        Path prefix = prefixOf(p);
        return Files.isRegularFile(Path.of(prefix + ".idx")) && Files.isRegularFile(Path.of(prefix + ".bin"));
    }

    static DType dtypeOf(int code) {
        return switch (code) {
            case 1 -> DType.UINT8;
            case 2 -> DType.INT8;
            case 3 -> DType.INT16;
            case 4 -> DType.INT32;
            case 5 -> DType.INT64;
            case 6 -> DType.FLOAT64;
            case 7 -> DType.FLOAT32;
            case 8 -> DType.UINT16;
            default -> null;
        };
    }

    static int codeOf(DType d) {
        return switch (d) {
            case UINT8 -> 1;
            case INT8 -> 2;
            case INT16 -> 3;
            case INT32 -> 4;
            case INT64 -> 5;
            case FLOAT64 -> 6;
            case FLOAT32 -> 7;
            case UINT16 -> 8;
            default -> throw new IllegalArgumentException("Megatron datasets have no dtype code for " + d.label());
        };
    }

    /** The dataset of {@code path}: its prefix, or either file of the pair (the other must be there too). */
    public static Megatron open(Path path) throws IOException {
        Path prefix = prefixOf(path);
        Path idxPath = Path.of(prefix + ".idx");
        Path binPath = Path.of(prefix + ".bin");
        MappedFile idx = MappedFile.open(idxPath);
        MappedFile bin = null;
        try {
            if (!Files.exists(binPath)) {
                throw new java.nio.file.NoSuchFileException(binPath.toString(), null,
                        "no such file: the data of the Megatron index " + idxPath);
            }
            bin = MappedFile.open(binPath);
            return read(prefix, idx, bin);
        } catch (IOException | RuntimeException e) {
            idx.close();
            if (bin != null) {
                bin.close();
            }
            throw e;
        }
    }

    private static Megatron read(Path prefix, MappedFile idx, MappedFile bin) throws CorruptShardException {
        String name = idx.path().toString();
        MemorySegment s = idx.segment();
        if (s.byteSize() < 34) {
            throw new CorruptShardException(name, s.byteSize(), "truncated index: " + s.byteSize() + " bytes, the header needs 34");
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) != MAGIC[i]) {
                throw new CorruptShardException(name, 0, "not a Megatron index: expected the magic MMIDIDX\\0\\0");
            }
        }
        long version = s.get(I64, 9);
        if (version != 1) {
            throw new CorruptShardException(name, 9, "index version " + version + " is not supported (expected 1)");
        }
        int code = s.get(ValueLayout.JAVA_BYTE, 17) & 0xFF;
        DType dtype = dtypeOf(code);
        if (dtype == null) {
            throw new CorruptShardException(name, 17, "unknown dtype code " + code + " (expected 1..8)");
        }
        long seqs = s.get(I64, 18);
        long docs = s.get(I64, 26);
        long lengthsAt = 34;
        if (seqs < 0 || docs < 1 || seqs > (s.byteSize() - lengthsAt) / 12) {
            throw new CorruptShardException(name, 18, "counts do not fit the file: " + seqs + " sequences, " + docs
                    + " document boundaries in " + s.byteSize() + " bytes");
        }
        long pointersAt = lengthsAt + 4 * seqs;
        long docsAt = pointersAt + 8 * seqs;
        long end = docs > (s.byteSize() - docsAt) / 8 ? Long.MAX_VALUE : docsAt + 8 * docs;
        if (end > s.byteSize()) {
            throw new CorruptShardException(name, s.byteSize(), "truncated index: " + seqs + " sequences and " + docs
                    + " document boundaries need more than the file's " + s.byteSize() + " bytes");
        }
        // the sequences lie back to back from byte 0 and fill the .bin, as Megatron-LM writes them:
        // pointers that overlap, leave gaps or disagree with the lengths would be read as other tokens
        long size = dtype.byteSize();
        long total = 0;
        long expected = 0;
        for (long i = 0; i < seqs; i++) {
            int len = s.get(I32, lengthsAt + 4 * i);
            long ptr = s.get(I64, pointersAt + 8 * i);
            if (len < 0) {
                throw new CorruptShardException(name, lengthsAt + 4 * i, "sequence " + i + " has a negative length " + len);
            }
            if (ptr != expected) {
                throw new CorruptShardException(name, pointersAt + 8 * i, "sequence " + i + " starts at byte " + ptr
                        + ", expected " + expected + (i == 0 ? "" : " (where sequence " + (i - 1) + " ends)")
                        + ": pointers must run back to back from 0 with the sequences' lengths");
            }
            if (len * size > bin.size() - ptr) {
                throw new CorruptShardException(name, pointersAt + 8 * i, "sequence " + i + " (" + len + " tokens at byte "
                        + ptr + ") does not fit " + bin.path() + " (" + bin.size() + " bytes)");
            }
            expected = ptr + len * size;
            total += len;
        }
        if (expected != bin.size()) {
            throw new CorruptShardException(name, 18, "the " + seqs + " sequences end at byte " + expected + " but "
                    + bin.path() + " has " + bin.size() + " bytes: the index and the data do not belong together");
        }
        long prev = -1;
        for (long d = 0; d < docs; d++) {
            long v = s.get(I64, docsAt + 8 * d);
            if (v < prev || v > seqs || (d == 0 && v != 0)) {
                throw new CorruptShardException(name, docsAt + 8 * d, "document index entry " + d + " is " + v
                        + " (expected a non-decreasing list from 0 to " + seqs + ")");
            }
            prev = v;
        }
        if (prev != seqs && docs > 0) {
            throw new CorruptShardException(name, docsAt + 8 * (docs - 1), "document index ends at " + prev
                    + ", expected the sequence count " + seqs);
        }
        return new Megatron(prefix, idx, bin, dtype, seqs, docs - 1, lengthsAt, pointersAt, docsAt, total);
    }

    public Path prefix() {
        return prefix;
    }

    /** Number of sequences (for GPT data, usually one per document). */
    public long sequences() {
        return sequences;
    }

    /** Number of documents. */
    public long documents() {
        return documents;
    }

    /** Tokens in all sequences. */
    public long tokens() {
        return tokens;
    }

    public int sequenceLength(long i) {
        return idx.segment().get(I32, lengthsAt + 4 * i);
    }

    /** The token offset of sequence {@code i} in the {@code .bin}. */
    public long sequenceStart(long i) {
        return idx.segment().get(I64, pointersAt + 8 * i) / dtype.byteSize();
    }

    /** The first sequence of document {@code d}; {@code documentStart(documents())} is the sequence count. */
    public long documentStart(long d) {
        return idx.segment().get(I64, docsAt + 8 * d);
    }

    // Tokens: the whole .bin as one flat token array

    @Override
    public long length() {
        return bin.size() / dtype.byteSize();
    }

    @Override
    public DType dtype() {
        return dtype;
    }

    @Override
    public MemorySegment segment() {
        return bin.segment();
    }

    @Override
    public String name() {
        return bin.path().toString();
    }

    @Override
    public void close() {
        idx.close();
        bin.close();
    }
}
