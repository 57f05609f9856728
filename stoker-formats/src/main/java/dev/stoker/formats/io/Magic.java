package dev.stoker.formats.io;

import java.util.Arrays;

/**
 * The container formats a file's first bytes announce, whatever its name says: zip archives
 * ({@code torch.save}, {@code .npz}), {@code .npy}, HDF5, Parquet, ROOT, SQLite, Arrow IPC and the
 * legacy {@code torch.save} pickle. With {@link Compression#of} (the compressions) the one place
 * where Stoker's formats tell a file by its magic. Each is taken only on a signature that token
 * ids or array values do not spell by chance: six bytes and more, or four with a field that
 * must follow them (ROOT's "root" with its header's first-record address, 100).
 */
public enum Magic {
    ZIP("a zip archive"),
    NPY("a numpy .npy array"),
    HDF5("an HDF5 file"),
    PARQUET("a Parquet file"),
    ROOT("a ROOT file"),
    SQLITE("an SQLite database"),
    ARROW("an Arrow IPC file"),
    TORCH_LEGACY("a torch.save file of the legacy format (a pickle, not a zip archive)");

    /** The most bytes {@link #of} looks at. */
    public static final int BYTES = 16;

    private static final byte[] PK = {'P', 'K', 3, 4};
    private static final byte[] PK_EMPTY = {'P', 'K', 5, 6};
    private static final byte[] NPY_MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
    private static final byte[] HDF = {(byte) 0x89, 'H', 'D', 'F', '\r', '\n', 0x1A, '\n'};
    private static final byte[] PAR1 = {'P', 'A', 'R', '1'};
    private static final byte[] ROOT_MAGIC = {'r', 'o', 'o', 't'};
    private static final byte[] SQLITE_MAGIC = "SQLite format 3\0".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    private static final byte[] ARROW1 = {'A', 'R', 'R', 'O', 'W', '1'};
    /** Pickle protocol 2 and the long torch.save wrote first before its zip format (its "magic number"). */
    private static final byte[] TORCH_PICKLE = {(byte) 0x80, 0x02, (byte) 0x8A, 0x0A, 0x6C, (byte) 0xFC, (byte) 0x9C, 0x46,
        (byte) 0xF9, 0x20, 0x6A, (byte) 0xA8, 0x50, 0x19};

    private final String description;

    Magic(String description) {
        this.description = description;
    }

    /** What the format is, in words: {@code "an HDF5 file"}. */
    public String description() {
        return description;
    }

    /** The format {@code head} (a file's first bytes, up to {@link #BYTES}) announces, or null for none. */
    public static Magic of(byte[] head) {
        if (starts(head, PK) || starts(head, PK_EMPTY)) {
            return ZIP;
        }
        if (starts(head, NPY_MAGIC)) {
            return NPY;
        }
        if (starts(head, HDF)) {
            return HDF5;
        }
        // Parquet's four bytes come again at its end, where a reader checks them
        if (starts(head, PAR1)) {
            return PARQUET;
        }
        if (starts(head, ROOT_MAGIC) && head.length >= 12 && head[8] == 0 && head[9] == 0 && head[10] == 0 && head[11] == 100) {
            return ROOT;
        }
        if (starts(head, SQLITE_MAGIC)) {
            return SQLITE;
        }
        if (starts(head, ARROW1)) {
            return ARROW;
        }
        if (starts(head, TORCH_PICKLE)) {
            return TORCH_LEGACY;
        }
        return null;
    }

    /** The first {@link #BYTES} bytes of a file (fewer for a shorter one). */
    public static byte[] head(java.nio.file.Path path) throws java.io.IOException {
        try (java.io.InputStream in = java.nio.file.Files.newInputStream(path)) {
            return in.readNBytes(BYTES);
        }
    }

    private static boolean starts(byte[] b, byte[] prefix) {
        return b.length >= prefix.length && Arrays.equals(b, 0, prefix.length, prefix, 0, prefix.length);
    }
}
