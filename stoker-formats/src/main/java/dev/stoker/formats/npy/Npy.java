package dev.stoker.formats.npy;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.io.MappedFile;
import dev.stoker.storage.io.PendingFile;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/** Reads and writes numpy's {@code .npy} and {@code .npz} files. */
public final class Npy {
    private Npy() {
    }

    /** Whether {@code path} is a file that begins with the {@code .npy} magic, whatever its name. */
    public static boolean isNpy(Path path) throws IOException {
        if (!java.nio.file.Files.isRegularFile(path)) {
            return false;
        }
        try (java.io.InputStream in = java.nio.file.Files.newInputStream(path)) {
            return isNpy(in.readNBytes(NpyHeader.MAGIC.length));
        }
    }

    /** Whether {@code head}, a file's first bytes, begins with the {@code .npy} magic. */
    public static boolean isNpy(byte[] head) {
        int n = NpyHeader.MAGIC.length;
        return head.length >= n && java.util.Arrays.equals(head, 0, n, NpyHeader.MAGIC, 0, n);
    }

    /**
     * The element type a numpy name gives ({@code float32}, {@code int64}, {@code bool}, as
     * {@code np.dtype(...).name} writes it) or a little-endian type string ({@code <f4}, {@code |u1});
     * an {@link IllegalArgumentException} says what is read otherwise (a big-endian type string
     * among them: raw arrays are read little-endian).
     */
    public static DType dtype(String name) {
        String n = name == null ? "" : name;
        DType byName = switch (n) {
            case "bool" -> DType.BOOL;
            case "int8" -> DType.INT8;
            case "uint8" -> DType.UINT8;
            case "int16" -> DType.INT16;
            case "uint16" -> DType.UINT16;
            case "int32" -> DType.INT32;
            case "uint32" -> DType.UINT32;
            case "int64" -> DType.INT64;
            case "uint64" -> DType.UINT64;
            case "float16" -> DType.FLOAT16;
            case "bfloat16" -> DType.BFLOAT16;
            case "float32" -> DType.FLOAT32;
            case "float64" -> DType.FLOAT64;
            default -> null;
        };
        if (byName != null) {
            return byName;
        }
        if (n.length() >= 3 && "<|=".indexOf(n.charAt(0)) >= 0) {
            try {
                return NpyHeader.dtypeOf(n, n, -1);
            } catch (CorruptShardException e) {
                // named below
            }
        }
        throw new IllegalArgumentException("dtype '" + n + "' is not read; numeric dtypes: bool, int8, uint8, int16, uint16, "
                + "int32, uint32, int64, uint64, float16, bfloat16, float32, float64, or little-endian type strings (<f4, |u1, ...)");
    }

    /** Maps a {@code .npy} file. */
    public static NpyArray read(Path path) throws IOException {
        MappedFile f = MappedFile.open(path);
        try {
            NpyHeader h = NpyHeader.parse(f.segment(), path.toString());
            long bytes = elements(h.shape()) * h.dtype().byteSize();
            return new NpyArray(path.toString(), h, f.segment().asSlice(h.dataOffset(), bytes), f);
        } catch (IOException | RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /**
     * The array an {@code .npy} file's bytes hold, read in place: it lives as long as
     * {@code bytes}, and closing it releases nothing. {@code name} is for errors.
     */
    public static NpyArray of(MemorySegment bytes, String name) throws CorruptShardException {
        NpyHeader h = NpyHeader.parse(bytes, name);
        long n = elements(h.shape()) * h.dtype().byteSize();
        return new NpyArray(name, h, bytes.asSlice(h.dataOffset(), n), () -> { });
    }

    /**
     * An array held in other bytes, read in place: a tensor of a {@code torch.save} or safetensors
     * file, a raw file as {@code np.memmap} writes it. {@code data} holds the elements in C order
     * and {@code order}; {@code owner} is closed with the array (nothing for bytes the caller keeps).
     */
    public static NpyArray view(String name, DType dtype, ByteOrder order, long[] shape, MemorySegment data, AutoCloseable owner) {
        long need = elements(shape) * dtype.byteSize();
        if (data.byteSize() != need) {
            throw new IllegalArgumentException(name + ": shape " + java.util.Arrays.toString(shape) + " of " + dtype.label()
                    + " needs " + need + " bytes, got " + data.byteSize());
        }
        return new NpyArray(name, new NpyHeader(0, 0, dtype, order, false, shape.clone(), 0), data, owner);
    }

    /**
     * Maps a raw array file, as {@code np.memmap} and {@code arr.tofile()} write it: no header,
     * {@code shape}'s elements of {@code dtype} little-endian in C order, the file exactly that
     * long (a size that differs names the file, the bytes the shape needs and the bytes it has).
     */
    public static NpyArray raw(Path path, DType dtype, long[] shape) throws IOException {
        long need;
        try {
            need = Math.multiplyExact(elements(shape), (long) dtype.byteSize());
        } catch (ArithmeticException e) {
            throw new CorruptShardException(path.toString(), -1, "shape " + java.util.Arrays.toString(shape) + " is larger than any file");
        }
        MappedFile f = MappedFile.open(path);
        if (f.size() != need) {
            f.close();
            throw new CorruptShardException(path.toString(), -1, "a raw array of shape " + java.util.Arrays.toString(shape) + " of "
                    + dtype.label() + " is " + need + " bytes, the file has " + f.size());
        }
        return new NpyArray(path.toString(), new NpyHeader(0, 0, dtype, ByteOrder.LITTLE_ENDIAN, false, shape.clone(), 0),
                f.segment(), f);
    }

    /**
     * Reads every array of a {@code .npz} (stored or deflated entries) into off-heap memory, by
     * name without the {@code .npy} suffix. Close each array, or all with {@link #closeAll}.
     */
    public static Map<String, NpyArray> readNpz(Path path) throws IOException {
        Map<String, NpyArray> out = new LinkedHashMap<>();
        try (ZipFile zip = new ZipFile(path.toFile())) {
            Enumeration<? extends ZipEntry> entries = zip.entries();
            while (entries.hasMoreElements()) {
                ZipEntry e = entries.nextElement();
                if (e.isDirectory()) {
                    continue;
                }
                String entryName = path + "!" + e.getName();
                Arena arena = Arena.ofShared();
                try {
                    byte[] bytes = zip.getInputStream(e).readAllBytes();
                    MemorySegment seg = arena.allocate(Math.max(1, bytes.length), 64).asSlice(0, bytes.length);
                    MemorySegment.copy(bytes, 0, seg, ValueLayout.JAVA_BYTE, 0, bytes.length);
                    NpyHeader h = NpyHeader.parse(seg, entryName);
                    long n = elements(h.shape()) * h.dtype().byteSize();
                    String key = e.getName().endsWith(".npy") ? e.getName().substring(0, e.getName().length() - 4) : e.getName();
                    out.put(key, new NpyArray(entryName, h, seg.asSlice(h.dataOffset(), n), arena::close));
                } catch (java.util.zip.ZipException z) {
                    arena.close();
                    closeAll(out);
                    throw new CorruptShardException(entryName, -1, "bad zip entry: " + z.getMessage(), z);
                } catch (IOException | RuntimeException ex) {
                    arena.close();
                    closeAll(out);
                    throw ex;
                }
            }
        } catch (java.util.zip.ZipException z) {
            closeAll(out);
            throw new CorruptShardException(path.toString(), -1, "not a readable .npz (zip) file: " + z.getMessage(), z);
        }
        return out;
    }

    public static void closeAll(Map<String, NpyArray> arrays) {
        for (NpyArray a : arrays.values()) {
            a.close();
        }
    }

    /**
     * Writes {@code data} (little-endian, C order, {@code shape}'s elements of {@code dtype}) as a
     * {@code .npy} file, version 1.0 (2.0 when the header needs it), with the data aligned to 64
     * bytes, as numpy writes it. Atomic: a temporary file renamed into place.
     */
    public static void write(Path path, DType dtype, long[] shape, MemorySegment data) throws IOException {
        long need = elements(shape) * dtype.byteSize();
        if (data.byteSize() != need) {
            throw new IllegalArgumentException("shape " + java.util.Arrays.toString(shape) + " of " + dtype.label()
                    + " needs " + need + " bytes, got " + data.byteSize());
        }
        byte[] header = header(dtype, shape);
        PendingFile.write(path, out -> {
            out.write(header);
            writeSegment(out, data);
        });
    }

    /** The header bytes numpy writes for a little-endian C-order array; the data follows at a multiple of 64. */
    public static byte[] header(DType dtype, long[] shape) {
        return header(dtype, shape, 0);
    }

    /**
     * The header, padded to {@code length} bytes when that is a multiple of 64 large enough (so a
     * writer can reserve the header's room before it knows the shape), else to the next multiple
     * of 64.
     */
    public static byte[] header(DType dtype, long[] shape, int length) {
        StringBuilder dims = new StringBuilder("(");
        for (int i = 0; i < shape.length; i++) {
            dims.append(shape[i]);
            if (shape.length == 1 || i < shape.length - 1) {
                dims.append(shape.length == 1 ? "," : ", ");
            }
        }
        dims.append(')');
        String dict = "{'descr': '" + dtype.numpy() + "', 'fortran_order': False, 'shape': " + dims + ", }";
        int major = 1;
        int prefix = 10;
        int total = prefix + dict.length() + 1;
        int padded = Math.max((total + 63) / 64 * 64, length % 64 == 0 ? length : 0);
        if (padded - prefix > 0xFFFF) {
            major = 2;
            prefix = 12;
            total = prefix + dict.length() + 1;
            padded = (total + 63) / 64 * 64;
        }
        int headerLen = padded - prefix;
        ByteBuffer b = ByteBuffer.allocate(padded).order(ByteOrder.LITTLE_ENDIAN);
        b.put(NpyHeader.MAGIC).put((byte) major).put((byte) 0);
        if (major == 1) {
            b.putShort((short) headerLen);
        } else {
            b.putInt(headerLen);
        }
        b.put(dict.getBytes(StandardCharsets.ISO_8859_1));
        while (b.position() < padded - 1) {
            b.put((byte) ' ');
        }
        b.put((byte) '\n');
        return b.array();
    }

    static void writeSegment(OutputStream out, MemorySegment data) throws IOException {
        byte[] buf = new byte[1 << 16];
        for (long off = 0; off < data.byteSize(); off += buf.length) {
            int n = (int) Math.min(buf.length, data.byteSize() - off);
            MemorySegment.copy(data, ValueLayout.JAVA_BYTE, off, buf, 0, n);
            out.write(buf, 0, n);
        }
    }

    static long elements(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }
}
