package dev.stoker.formats.io;

import com.github.luben.zstd.ZstdInputStream;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import net.jpountz.lz4.LZ4FrameInputStream;

/**
 * The compressions a file's first bytes announce, whatever its name says: gzip (read by
 * {@link Gunzip}), zstd and lz4 frames. The one place where Stoker's formats sniff them.
 */
public enum Compression {
    GZIP, ZSTD, LZ4;

    /** Bytes a stream is buffered with when it is decompressed or sniffed. */
    private static final int BUFFER = 1 << 16;

    /** The compression the first four bytes of a file announce (fewer for a shorter file), or null for none. */
    public static Compression of(byte[] m) {
        if (m.length >= 2 && (m[0] & 0xFF) == 0x1F && (m[1] & 0xFF) == 0x8B) {
            return GZIP;
        }
        if (m.length >= 4 && (m[0] & 0xFF) == 0x28 && (m[1] & 0xFF) == 0xB5 && (m[2] & 0xFF) == 0x2F && (m[3] & 0xFF) == 0xFD) {
            return ZSTD;
        }
        if (m.length >= 4 && (m[0] & 0xFF) == 0x04 && (m[1] & 0xFF) == 0x22 && (m[2] & 0xFF) == 0x4D && (m[3] & 0xFF) == 0x18) {
            return LZ4;
        }
        return null;
    }

    /** The compression of a file, from its first bytes; null for none. */
    public static Compression of(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return of(in.readNBytes(4));
        }
    }

    /**
     * The stream decompressed as its first bytes call for; a stream with no compression comes
     * back as the {@link BufferedInputStream} it was wrapped in (so {@code instanceof} tells).
     */
    public static InputStream decompress(InputStream raw) throws IOException {
        BufferedInputStream in = raw instanceof BufferedInputStream b ? b : new BufferedInputStream(raw, BUFFER);
        in.mark(4);
        byte[] m = in.readNBytes(4);
        in.reset();
        Compression c = of(m);
        return c == null ? in : c.open(in);
    }

    /** A decompressing stream over {@code in}. */
    private InputStream open(InputStream in) throws IOException {
        return switch (this) {
            case GZIP -> Gunzip.open(in);
            case ZSTD -> new ZstdInputStream(in);
            case LZ4 -> new LZ4FrameInputStream(in);
        };
    }
}
