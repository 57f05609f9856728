package dev.stoker.formats.tokens;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.io.MappedFile;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * A raw token file as nanoGPT writes it ({@code np.memmap}, {@code arr.tofile()}): token ids
 * back to back, little-endian, no header. uint16 for vocabularies up to 65,536, else uint32.
 */
public final class TokenFile implements Tokens, AutoCloseable {
    private final MappedFile file;
    private final DType dtype;
    private final long length;

    private TokenFile(MappedFile file, DType dtype, long length) {
        this.file = file;
        this.dtype = dtype;
        this.length = length;
    }

    /** Maps {@code path} as tokens of type {@code dtype} (usually UINT16 or UINT32). */
    public static TokenFile open(Path path, DType dtype) throws IOException {
        TokenCopy.checkTokenType(dtype, path.toString());
        MappedFile f = MappedFile.open(path);
        if (f.size() % dtype.byteSize() != 0) {
            f.close();
            throw new CorruptShardException(path.toString(), f.size(), "file size " + f.size()
                    + " is not a multiple of " + dtype.byteSize() + " bytes (" + dtype.label() + " tokens); truncated?");
        }
        return new TokenFile(f, dtype, f.size() / dtype.byteSize());
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public DType dtype() {
        return dtype;
    }

    @Override
    public MemorySegment segment() {
        return file.segment();
    }

    @Override
    public String name() {
        return file.path().toString();
    }

    @Override
    public void close() {
        file.close();
    }
}
