package dev.stoker.formats.tensors;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.io.Magic;
import dev.stoker.formats.io.MappedFile;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.npy.NpyArray;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads what {@code torch.save} writes (torch 1.6 and later): a zip archive of {@code PREFIX/data.pkl}
 * (the pickle of the object saved), {@code PREFIX/data/KEY} (each storage's bytes, stored
 * uncompressed at 64-byte aligned offsets), {@code PREFIX/version}, and from torch 2.1
 * {@code PREFIX/byteorder}. The pickle is read as data ({@link Pickle}, NOTE [Never unpickled]):
 * a tensor, or a dict, {@code OrderedDict}, list or tuple of tensors (nested dicts too, their
 * keys joined with dots); anything else in it is refused, naming what it met. Each tensor is a
 * view of the mapped archive, checked against its storage and the storage against its entry;
 * a non-contiguous view (a slice saved with a stride) is gathered into memory of its own, which
 * its storage's size bounds. The byte-order record is honoured: arrays of a big-endian archive
 * say so ({@link NpyArray#byteOrder()}).
 */
final class TorchSave {
    private static final String REBUILD_V2 = "torch._utils._rebuild_tensor_v2";
    private static final String REBUILD_V3 = "torch._utils._rebuild_tensor_v3";
    private static final String PARAMETER = "torch._utils._rebuild_parameter";
    private static final String ORDERED_DICT = "collections.OrderedDict";

    /** Storage classes by name, and the dtype of their elements (null: a class whose tensors are not read). */
    private static final Map<String, DType> STORAGES = new LinkedHashMap<>();
    /** Dtypes a {@code _rebuild_tensor_v3} names, null for those not read. */
    private static final Map<String, DType> DTYPES = new LinkedHashMap<>();

    static {
        STORAGES.put("Bool", DType.BOOL);
        STORAGES.put("Byte", DType.UINT8);
        STORAGES.put("Char", DType.INT8);
        STORAGES.put("Short", DType.INT16);
        STORAGES.put("Int", DType.INT32);
        STORAGES.put("Long", DType.INT64);
        STORAGES.put("Half", DType.FLOAT16);
        STORAGES.put("Float", DType.FLOAT32);
        STORAGES.put("Double", DType.FLOAT64);
        STORAGES.put("BFloat16", DType.BFLOAT16);
        for (String s : List.of("ComplexFloat", "ComplexDouble", "QInt8", "QUInt8", "QInt32", "QUInt4x2", "QUInt2x4")) {
            STORAGES.put(s, null);
        }
        for (DType d : DType.values()) {
            DTYPES.put(d.label(), d);
        }
        for (String s : List.of("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
                "complex32", "complex64", "complex128", "bits8", "bits16", "uint1", "uint2", "uint3", "uint4", "uint5",
                "uint6", "uint7", "int1", "int2", "int3", "int4", "int5", "int6", "int7", "float4_e2m1fn_x2")) {
            DTYPES.put(s, null);
        }
    }

    private static final Set<String> ALLOWED = allowed();

    private static Set<String> allowed() {
        Set<String> s = new HashSet<>(List.of(REBUILD_V2, REBUILD_V3, PARAMETER, ORDERED_DICT,
                "torch.UntypedStorage", "torch.storage.UntypedStorage"));
        STORAGES.keySet().forEach(k -> s.add("torch." + k + "Storage"));
        DTYPES.keySet().forEach(k -> s.add("torch." + k));
        return s;
    }

    private TorchSave() {
    }

    /** A storage a persistent id names: its key (the entry {@code data/KEY}), element type (null: untyped bytes) and count. */
    private record Storage(String key, DType dtype, long numel, String type) {
    }

    /** A tensor: a view of {@code shape} and {@code stride} from element {@code offset} of its storage. */
    private record Tensor(Storage storage, long offset, long[] shape, long[] stride, DType dtype) {
    }

    /** Whether {@code path} is a zip archive with a {@code data.pkl} at its top folder, as {@code torch.save} writes. */
    public static boolean isTorchSave(Path path) throws IOException {
        if (Magic.of(Magic.head(path)) != Magic.ZIP) {
            return false;
        }
        try (MappedFile f = MappedFile.open(path)) {
            return pickleEntry(ZipDirectory.read(f.segment(), path.toString())) != null;
        } catch (CorruptShardException e) {
            return false;
        }
    }

    private static ZipDirectory.Entry pickleEntry(Map<String, ZipDirectory.Entry> entries) {
        ZipDirectory.Entry found = null;
        for (ZipDirectory.Entry e : entries.values()) {
            int slash = e.name().indexOf('/');
            if (slash > 0 && e.name().substring(slash + 1).equals("data.pkl")) {
                if (found != null) {
                    return null; // two archives in one: not torch.save's
                }
                found = e;
            }
        }
        return found;
    }

    /** Reads the tensors of a {@code torch.save} archive. */
    public static TensorFile open(Path path) throws IOException {
        String file = path.toString();
        MappedFile f = MappedFile.open(path);
        List<AutoCloseable> owners = new ArrayList<>();
        owners.add(f);
        try {
            MemorySegment s = f.segment();
            Magic m = Magic.of(s.asSlice(0, Math.min(s.byteSize(), Magic.BYTES)).toArray(ValueLayout.JAVA_BYTE));
            if (m == Magic.TORCH_LEGACY) {
                throw new CorruptShardException(file, 0, "a torch.save file of the legacy format (torch < 1.6, or "
                        + "_use_new_zipfile_serialization=False): a pickle stream that only unpickling reads, which Stoker never does; "
                        + "load it with torch.load and save it again with torch.save(obj, f) (torch >= 1.6 writes the zip format)");
            }
            if (m != Magic.ZIP) {
                throw new CorruptShardException(file, 0, (m == null ? "not a zip archive" : m.description())
                        + ", not a torch.save archive (which is a zip archive)");
            }
            Map<String, ZipDirectory.Entry> entries = ZipDirectory.read(s, file);
            ZipDirectory.Entry pkl = pickleEntry(entries);
            if (pkl == null) {
                throw new CorruptShardException(file, -1, "a zip archive without one PREFIX/data.pkl: not a torch.save archive");
            }
            String prefix = pkl.name().substring(0, pkl.name().length() - "data.pkl".length());
            ByteOrder order = byteOrder(s, entries.get(prefix + "byteorder"), file);
            MemorySegment pickle = stored(s, pkl, file);
            Object root = new Pickle(pickle, file, pkl.dataOffset(), ALLOWED, (pid, at) -> storage(pid, at, file),
                    (g, args, at) -> call(g, args, at, file)).read();
            Map<String, Tensor> tensors = new LinkedHashMap<>();
            boolean single = root instanceof Tensor;
            flatten(root, "", tensors, file, 0);
            Map<String, NpyArray> arrays = new LinkedHashMap<>();
            for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
                String name = single ? file : file + "!" + e.getKey();
                arrays.put(e.getKey(), array(s, entries, prefix, e.getValue(), order, name, file, owners));
            }
            return new TensorFile(file, "torch", arrays, single, owners);
        } catch (IOException | RuntimeException e) {
            for (int i = owners.size() - 1; i >= 0; i--) {
                try {
                    owners.get(i).close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    private static ByteOrder byteOrder(MemorySegment s, ZipDirectory.Entry e, String file) throws CorruptShardException {
        if (e == null) {
            return ByteOrder.LITTLE_ENDIAN; // before torch 2.1, which wrote only on little-endian machines
        }
        if (e.size() > 16) {
            throw new CorruptShardException(file, e.dataOffset(), "a byteorder record of " + e.size() + " bytes (expected 'little' or 'big')");
        }
        String v = new String(stored(s, e, file).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII).strip();
        return switch (v) {
            case "little" -> ByteOrder.LITTLE_ENDIAN;
            case "big" -> ByteOrder.BIG_ENDIAN;
            default -> throw new CorruptShardException(file, e.dataOffset(), "byteorder record '" + v + "' (expected 'little' or 'big')");
        };
    }

    /** An entry's bytes, in place; a compressed entry is refused (torch.save stores every entry as it is). */
    private static MemorySegment stored(MemorySegment s, ZipDirectory.Entry e, String file) throws CorruptShardException {
        if (e.method() != 0) {
            throw new CorruptShardException(file, e.dataOffset(), "entry '" + e.name() + "' is compressed (method " + e.method()
                    + "); torch.save stores its entries uncompressed, and a storage is read in place: save the object again "
                    + "with torch.save rather than recompressing the archive");
        }
        return s.asSlice(e.dataOffset(), e.size());
    }

    /** A persistent id: {@code ('storage', StorageClass, key, location, numel)}. */
    private static Object storage(Object pid, long at, String file) throws CorruptShardException {
        if (!(pid instanceof Pickle.Tuple t) || t.items().size() != 5 || !"storage".equals(t.items().get(0))
                || !(t.items().get(1) instanceof Pickle.Global g) || !(t.items().get(2) instanceof String key)
                || !(t.items().get(4) instanceof Long numel)) {
            throw new CorruptShardException(file, at, "a persistent id that is not ('storage', class, key, location, numel)");
        }
        if (numel < 0) {
            throw new CorruptShardException(file, at, "storage '" + key + "' of " + numel + " elements");
        }
        String type = g.qualified();
        if (type.equals("torch.UntypedStorage") || type.equals("torch.storage.UntypedStorage")) {
            return new Storage(key, null, numel, type);
        }
        String base = g.module().equals("torch") && g.name().endsWith("Storage")
                ? g.name().substring(0, g.name().length() - "Storage".length()) : null;
        if (base == null || !STORAGES.containsKey(base)) {
            throw new CorruptShardException(file, at, "storage '" + key + "' of class '" + type + "', which is no storage class");
        }
        if (STORAGES.get(base) == null) {
            throw new CorruptShardException(file, at, "storage '" + key + "' is a " + type + ": complex and quantized tensors "
                    + "are not read");
        }
        return new Storage(key, STORAGES.get(base), numel, type);
    }

    private static Object call(Pickle.Global g, List<Object> args, long at, String file) throws CorruptShardException {
        String what = g.qualified();
        switch (what) {
            case ORDERED_DICT -> {
                if (!args.isEmpty()) {
                    throw new CorruptShardException(file, at, "OrderedDict called with arguments (torch.save pickles it empty)");
                }
                return new Pickle.Dict();
            }
            case REBUILD_V2, REBUILD_V3 -> {
                boolean v3 = what.equals(REBUILD_V3);
                int n = v3 ? 7 : 6;
                if (args.size() != n && args.size() != n + 1) {
                    throw new CorruptShardException(file, at, what + " with " + args.size() + " arguments (expected " + n + " or "
                            + (n + 1) + ")");
                }
                if (!(args.get(0) instanceof Storage st)) {
                    throw new CorruptShardException(file, at, what + " of " + Pickle.kind(args.get(0)) + ", not of a storage");
                }
                if (!(args.get(1) instanceof Long offset)) {
                    throw new CorruptShardException(file, at, what + " with a storage offset that is " + Pickle.kind(args.get(1)));
                }
                long[] shape = longs(args.get(2), what, "size", at, file);
                long[] stride = longs(args.get(3), what, "stride", at, file);
                if (shape.length != stride.length) {
                    throw new CorruptShardException(file, at, what + " with " + shape.length + " sizes and " + stride.length + " strides");
                }
                for (int i = 0; i < shape.length; i++) {
                    if (shape[i] < 0 || stride[i] < 0) {
                        throw new CorruptShardException(file, at, what + " with a negative size or stride: "
                                + java.util.Arrays.toString(shape) + ", " + java.util.Arrays.toString(stride));
                    }
                }
                if (args.get(5) instanceof Pickle.Dict hooks && !hooks.isEmpty()) {
                    throw new CorruptShardException(file, at, "a tensor with backward hooks (which are code, never read)");
                }
                DType dtype;
                if (v3) {
                    if (!(args.get(6) instanceof Pickle.Global d) || !d.module().equals("torch") || !DTYPES.containsKey(d.name())) {
                        throw new CorruptShardException(file, at, what + " with a dtype that is " + Pickle.kind(args.get(6)));
                    }
                    dtype = DTYPES.get(d.name());
                    if (dtype == null) {
                        throw new CorruptShardException(file, at, "a tensor of dtype torch." + d.name() + ", which is not read");
                    }
                } else {
                    dtype = st.dtype() == null ? DType.UINT8 : st.dtype();
                }
                if (st.dtype() != null && st.dtype() != dtype) {
                    throw new CorruptShardException(file, at, "a " + dtype.label() + " tensor over a " + st.type());
                }
                return new Tensor(st, offset, shape, stride, dtype);
            }
            case PARAMETER -> {
                if (args.isEmpty() || !(args.get(0) instanceof Tensor t)) {
                    throw new CorruptShardException(file, at, what + " of something that is no tensor");
                }
                if (args.size() > 2 && args.get(2) instanceof Pickle.Dict hooks && !hooks.isEmpty()) {
                    throw new CorruptShardException(file, at, "a parameter with backward hooks (which are code, never read)");
                }
                return t;
            }
            default -> throw new CorruptShardException(file, at, "refuses to call '" + what + "': only tensors and dicts of them "
                    + "are read (the pickle is read as data, never run)");
        }
    }

    private static long[] longs(Object v, String what, String which, long at, String file) throws CorruptShardException {
        if (!(v instanceof Pickle.Tuple t)) {
            throw new CorruptShardException(file, at, what + " with a " + which + " that is " + Pickle.kind(v));
        }
        long[] out = new long[t.items().size()];
        for (int i = 0; i < out.length; i++) {
            if (!(t.items().get(i) instanceof Long l)) {
                throw new CorruptShardException(file, at, what + " with a " + which + " that holds " + Pickle.kind(t.items().get(i)));
            }
            out[i] = l;
        }
        return out;
    }

    private static void flatten(Object v, String key, Map<String, Tensor> out, String file, int depth) throws CorruptShardException {
        if (depth > 32) {
            throw new CorruptShardException(file, -1, "dicts nested more than 32 deep");
        }
        if (v instanceof Tensor t) {
            out.put(key, t);
        } else if (v instanceof Pickle.Dict d) {
            for (Map.Entry<Object, Object> e : d.entrySet()) {
                if (!(e.getKey() instanceof String) && !(e.getKey() instanceof Long)) {
                    throw new CorruptShardException(file, -1, "a dict key that is " + Pickle.kind(e.getKey())
                            + " (keys are names or numbers)");
                }
                flatten(e.getValue(), key.isEmpty() ? String.valueOf(e.getKey()) : key + "." + e.getKey(), out, file, depth + 1);
            }
        } else if (v instanceof List<?> || v instanceof Pickle.Tuple) {
            List<?> items = v instanceof Pickle.Tuple t ? t.items() : (List<?>) v;
            for (int i = 0; i < items.size(); i++) {
                flatten(items.get(i), key.isEmpty() ? String.valueOf(i) : key + "." + i, out, file, depth + 1);
            }
        } else {
            throw new CorruptShardException(file, -1, "holds " + Pickle.kind(v) + (key.isEmpty() ? "" : " at '" + key + "'")
                    + ": only tensors and dicts, lists and tuples of them are read");
        }
    }

    private static NpyArray array(MemorySegment s, Map<String, ZipDirectory.Entry> entries, String prefix, Tensor t,
                                  ByteOrder order, String name, String file, List<AutoCloseable> owners) throws CorruptShardException {
        Storage st = t.storage();
        ZipDirectory.Entry e = entries.get(prefix + "data/" + st.key());
        if (e == null) {
            throw new CorruptShardException(file, -1, "storage '" + st.key() + "' has no entry " + prefix + "data/" + st.key());
        }
        MemorySegment bytes = stored(s, e, file);
        DType sd = st.dtype() == null ? DType.UINT8 : st.dtype();
        long storageBytes;
        try {
            storageBytes = Math.multiplyExact(st.numel(), (long) sd.byteSize());
        } catch (ArithmeticException x) {
            throw new CorruptShardException(file, e.dataOffset(), "storage '" + st.key() + "' of " + st.numel() + " elements");
        }
        if (storageBytes != e.size()) {
            throw new CorruptShardException(file, e.dataOffset(), "storage '" + st.key() + "' (" + st.type() + ", " + st.numel()
                    + " elements) is " + storageBytes + " bytes, its entry has " + e.size());
        }
        DType td = t.dtype();
        int size = td.byteSize();
        if (storageBytes % size != 0) {
            throw new CorruptShardException(file, e.dataOffset(), "storage '" + st.key() + "' of " + storageBytes
                    + " bytes holds no whole number of " + td.label() + " elements");
        }
        long storageElements = storageBytes / size;
        long[] shape = t.shape();
        long[] stride = t.stride();
        long elements = 1;
        long last = t.offset();
        try {
            for (int i = 0; i < shape.length; i++) {
                elements = Math.multiplyExact(elements, shape[i]);
                if (shape[i] > 0) {
                    last = Math.addExact(last, Math.multiplyExact(shape[i] - 1, stride[i]));
                }
            }
        } catch (ArithmeticException x) {
            throw new CorruptShardException(file, -1, "tensor '" + name + "' of shape " + java.util.Arrays.toString(shape)
                    + " is larger than any file");
        }
        MemorySegment data;
        if (elements == 0) {
            data = bytes.asSlice(0, 0);
        } else {
            if (t.offset() < 0 || last >= storageElements) {
                throw new CorruptShardException(file, -1, "tensor '" + name + "' (shape " + java.util.Arrays.toString(shape)
                        + ", stride " + java.util.Arrays.toString(stride) + ", offset " + t.offset() + ") reads past the end of its "
                        + "storage '" + st.key() + "' of " + storageElements + " elements");
            }
            if (contiguous(shape, stride)) {
                data = bytes.asSlice(t.offset() * size, elements * size);
            } else if (elements <= storageElements) {
                Arena arena = Arena.ofShared();
                owners.add(arena::close);
                data = arena.allocate(elements * size, 64);
                gather(bytes, t.offset(), shape, stride, size, data);
            } else {
                throw new CorruptShardException(file, -1, "tensor '" + name + "' is a view of " + elements + " elements over a "
                        + "storage of " + storageElements + " (an expanded tensor, stride " + java.util.Arrays.toString(stride)
                        + "); save tensor.contiguous() instead");
            }
        }
        return Npy.view(name, td, order, shape, data, () -> { });
    }

    private static boolean contiguous(long[] shape, long[] stride) {
        long want = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            if (shape[i] != 1 && stride[i] != want) {
                return false;
            }
            want *= shape[i];
        }
        return true;
    }

    /** Copies a strided view's elements, in C order, into {@code out}. */
    private static void gather(MemorySegment src, long offset, long[] shape, long[] stride, int size, MemorySegment out) {
        int n = shape.length;
        long[] idx = new long[n];
        long count = out.byteSize() / size;
        long at = offset;
        for (long k = 0; k < count; k++) {
            MemorySegment.copy(src, at * size, out, k * size, size);
            for (int d = n - 1; d >= 0; d--) {
                idx[d]++;
                at += stride[d];
                if (idx[d] < shape[d]) {
                    break;
                }
                at -= stride[d] * shape[d];
                idx[d] = 0;
            }
        }
    }
}
