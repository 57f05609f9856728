package dev.stoker.formats.tensors;

import dev.stoker.CorruptShardException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigInteger;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The pickle of a {@code torch.save} archive ({@code data.pkl}) read as data: a small stack machine
 * over the pickle's opcodes that builds numbers, strings, tuples, lists and dicts, and, of the
 * callables a pickle may name, only what rebuilds a tensor ({@code torch._utils._rebuild_tensor_v2}
 * and {@code _v3}, {@code _rebuild_parameter}), an {@code OrderedDict}, and the storage classes
 * and dtypes a tensor's persistent id names. Nothing is ever called or imported: a global is a
 * name, checked against that list the moment it is met, and any other one refuses the file,
 * naming it; so does every opcode that builds an object of a class (NEWOBJ, INST, OBJ, the
 * extension registry).
 *
 * <p>NOTE [Never unpickled]: a pickle is a program (REDUCE calls whatever GLOBAL named), so it is
 * never run: each opcode is read as the data it would push. {@code torch.load(weights_only=True)}
 * allows more than this reader (a {@code collections.Counter}, for one); a loader of training data
 * needs tensors, and whatever else a file holds is refused by name rather than half read.
 */
final class Pickle {
    /** A global the pickle named ({@code module.name}). */
    record Global(String module, String name) {
        String qualified() {
            return module + "." + name;
        }
    }

    /** A tuple (lists are {@link ArrayList}s, dicts {@link Dict}s). */
    record Tuple(List<Object> items) {
    }

    /** A dict or an {@code OrderedDict}, in insertion order. */
    static final class Dict extends LinkedHashMap<Object, Object> {
    }

    /** Turns a persistent id (a tensor's storage) into a value. */
    @FunctionalInterface
    interface Persistent {
        Object load(Object pid, long at) throws CorruptShardException;
    }

    /** Turns a call of an allowed global into a value; {@code args} are the call's arguments. */
    @FunctionalInterface
    interface Calls {
        Object call(Global callable, List<Object> args, long at) throws CorruptShardException;
    }

    private static final Object MARK = new Object() {
        @Override
        public String toString() {
            return "MARK";
        }
    };

    private final MemorySegment p;
    private final String file;
    private final long base;
    private final Set<String> allowed;
    private final Persistent persistent;
    private final Calls calls;
    private long pos;
    private final ArrayList<Object> stack = new ArrayList<>();
    private final ArrayList<Integer> marks = new ArrayList<>();
    private final Map<Long, Object> memo = new HashMap<>();

    /**
     * A reader of the pickle {@code pickle}, which lies at byte {@code base} of {@code file} (for
     * errors); {@code allowed} the globals it may name, as {@code module.name}.
     */
    Pickle(MemorySegment pickle, String file, long base, Set<String> allowed, Persistent persistent, Calls calls) {
        this.p = pickle;
        this.file = file;
        this.base = base;
        this.allowed = allowed;
        this.persistent = persistent;
        this.calls = calls;
    }

    /** The value the pickle holds. */
    Object read() throws CorruptShardException {
        while (true) {
            long at = pos;
            int op = u8();
            switch (op) {
                case 0x80 -> { // PROTO
                    int v = u8();
                    if (v > 5) {
                        throw corrupt(at, "pickle protocol " + v + " (this reader knows 0 to 5)");
                    }
                }
                case 0x95 -> skip(8); // FRAME: a hint for buffered readers
                case '.' -> { // STOP
                    if (stack.size() != 1 || !marks.isEmpty()) {
                        throw corrupt(at, "the pickle stops with " + stack.size() + " values on its stack");
                    }
                    return stack.get(0);
                }
                case '(' -> {
                    marks.add(stack.size());
                    stack.add(MARK);
                }
                case '0' -> pop(at);
                case '1' -> popMark(at);
                case '2' -> push(peek(at));
                case '}' -> push(new Dict());
                case ']' -> push(new ArrayList<>());
                case ')' -> push(new Tuple(List.of()));
                case 't' -> push(new Tuple(popMark(at)));
                case 0x85, 0x86, 0x87 -> { // TUPLE1..3
                    int n = op - 0x84;
                    List<Object> items = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        items.add(0, pop(at));
                    }
                    push(new Tuple(items));
                }
                case 'l' -> push(new ArrayList<>(popMark(at)));
                case 'd' -> {
                    List<Object> items = popMark(at);
                    Dict d = new Dict();
                    setItems(d, items, at);
                    push(d);
                }
                case 'a' -> {
                    Object v = pop(at);
                    list(peek(at), at).add(v);
                }
                case 'e' -> {
                    List<Object> items = popMark(at);
                    list(peek(at), at).addAll(items);
                }
                case 's' -> {
                    Object v = pop(at);
                    Object k = pop(at);
                    setItems(dict(peek(at), at), List.of(k, v), at);
                }
                case 'u' -> {
                    List<Object> items = popMark(at);
                    setItems(dict(peek(at), at), items, at);
                }
                case 'J' -> push((long) p.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), need(at, 4)));
                case 'K' -> push((long) u8());
                case 'M' -> push((long) (p.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), need(at, 2)) & 0xFFFF));
                case 'I' -> {
                    String s = line(at);
                    push(s.equals("01") ? (Object) Boolean.TRUE : s.equals("00") ? (Object) Boolean.FALSE : integer(s, at));
                }
                case 'L' -> {
                    String s = line(at);
                    push(integer(s.endsWith("L") ? s.substring(0, s.length() - 1) : s, at));
                }
                case 0x8a -> push(longBytes(u8(), at)); // LONG1
                case 0x8b -> push(longBytes(length(4, at), at)); // LONG4
                case 'G' -> push(p.get(ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), need(at, 8)));
                case 'F' -> {
                    String s = line(at);
                    try {
                        push(Double.parseDouble(s));
                    } catch (NumberFormatException e) {
                        throw corrupt(at, "a FLOAT that is no number: '" + s + "'");
                    }
                }
                case 0x88 -> push(Boolean.TRUE);
                case 0x89 -> push(Boolean.FALSE);
                case 'N' -> push(null);
                case 'X' -> push(text(length(4, at), at, StandardCharsets.UTF_8));
                case 0x8c -> push(text(u8(), at, StandardCharsets.UTF_8));
                case 0x8d -> push(text(length(8, at), at, StandardCharsets.UTF_8));
                case 'T' -> push(text(length(4, at), at, StandardCharsets.ISO_8859_1)); // Python 2 str
                case 'U' -> push(text(u8(), at, StandardCharsets.ISO_8859_1));
                case 'B' -> push(bytes(length(4, at), at));
                case 'C' -> push(bytes(u8(), at));
                case 0x8e -> push(bytes(length(8, at), at));
                case 'q' -> memo.put((long) u8(), peek(at));
                case 'r' -> memo.put(length(4, at), peek(at));
                case 'p' -> memo.put(integer(line(at), at), peek(at));
                case 0x94 -> memo.put((long) memo.size(), peek(at)); // MEMOIZE
                case 'h' -> push(get(u8(), at));
                case 'j' -> push(get(length(4, at), at));
                case 'g' -> push(get(integer(line(at), at), at));
                case 'c' -> {
                    String module = line(at);
                    push(global(module, line(at), at));
                }
                case 0x93 -> { // STACK_GLOBAL
                    Object name = pop(at);
                    Object module = pop(at);
                    if (!(module instanceof String m) || !(name instanceof String n)) {
                        throw corrupt(at, "STACK_GLOBAL of a module and name that are not strings");
                    }
                    push(global(m, n, at));
                }
                case 'R' -> { // REDUCE
                    Object args = pop(at);
                    Object callable = pop(at);
                    if (!(callable instanceof Global g)) {
                        throw corrupt(at, "REDUCE of " + kind(callable) + ", not of a global");
                    }
                    if (!(args instanceof Tuple t)) {
                        throw corrupt(at, "REDUCE of '" + g.qualified() + "' with arguments that are not a tuple");
                    }
                    push(calls.call(g, t.items(), base + at));
                }
                case 'b' -> { // BUILD: an object's state set
                    Object state = pop(at);
                    Object target = peek(at);
                    // a state_dict is an OrderedDict with a _metadata attribute (versions of its
                    // modules): attributes of a dict are dropped, its items are what it holds
                    if (!(target instanceof Dict) || !(state instanceof Dict || state instanceof Tuple)) {
                        throw corrupt(at, "refuses to set the state of " + kind(target) + " (BUILD): only tensors and dicts "
                                + "of them are read");
                    }
                }
                case 'Q' -> { // BINPERSID
                    Object pid = pop(at);
                    push(persistent.load(pid, base + at));
                }
                case 'P' -> push(persistent.load(line(at), base + at));
                case 0x81, 0x92, 'i', 'o', 0x82, 0x83, 0x84, 0x8f, 0x90, 0x91, 0x96, 0x97, 0x98, 'V', 'S' ->
                        throw corrupt(at, "refuses pickle opcode " + opName(op) + ": only tensors and dicts of them are read "
                                + "(the pickle is read as data, never run)");
                default -> throw corrupt(at, String.format("unknown pickle opcode 0x%02x", op));
            }
        }
    }

    private Global global(String module, String name, long at) throws CorruptShardException {
        Global g = new Global(module, name);
        if (!allowed.contains(g.qualified())) {
            throw corrupt(at, "refuses global '" + g.qualified() + "': only tensors and dicts, lists and tuples of them are "
                    + "read (the pickle is read as data, never run)");
        }
        return g;
    }

    private void setItems(Dict d, List<Object> items, long at) throws CorruptShardException {
        if (items.size() % 2 != 0) {
            throw corrupt(at, "SETITEMS with an odd number of values");
        }
        for (int i = 0; i < items.size(); i += 2) {
            Object k = items.get(i);
            if (k != null && !(k instanceof String) && !(k instanceof Long) && !(k instanceof Boolean) && !(k instanceof Tuple)) {
                throw corrupt(at, "a dict key that is " + kind(k));
            }
            d.put(k, items.get(i + 1));
        }
    }

    @SuppressWarnings("unchecked")
    private List<Object> list(Object o, long at) throws CorruptShardException {
        if (o instanceof ArrayList<?> l) {
            return (List<Object>) l;
        }
        throw corrupt(at, "APPEND to " + kind(o) + ", not to a list");
    }

    private Dict dict(Object o, long at) throws CorruptShardException {
        if (o instanceof Dict d) {
            return d;
        }
        throw corrupt(at, "SETITEM on " + kind(o) + ", not on a dict");
    }

    /** What a value is, in words, for errors. */
    static String kind(Object o) {
        return o == null ? "None" : o instanceof Global g ? "'" + g.qualified() + "'" : o instanceof Tuple ? "a tuple"
                : o instanceof Dict ? "a dict" : o instanceof List ? "a list" : o instanceof String ? "a string"
                : o instanceof Long ? "an int" : o instanceof Double ? "a float" : o instanceof Boolean ? "a bool"
                : o instanceof byte[] ? "bytes" : o.getClass().getSimpleName();
    }

    private Object get(long key, long at) throws CorruptShardException {
        if (!memo.containsKey(key)) {
            throw corrupt(at, "GET of memo entry " + key + ", which was never put");
        }
        return memo.get(key);
    }

    private void push(Object o) {
        stack.add(o);
    }

    private Object pop(long at) throws CorruptShardException {
        if (stack.isEmpty() || stack.get(stack.size() - 1) == MARK) {
            throw corrupt(at, "the pickle's stack is empty where a value was expected");
        }
        return stack.remove(stack.size() - 1);
    }

    private Object peek(long at) throws CorruptShardException {
        if (stack.isEmpty() || stack.get(stack.size() - 1) == MARK) {
            throw corrupt(at, "the pickle's stack is empty where a value was expected");
        }
        return stack.get(stack.size() - 1);
    }

    private List<Object> popMark(long at) throws CorruptShardException {
        if (marks.isEmpty()) {
            throw corrupt(at, "no MARK on the pickle's stack");
        }
        int m = marks.remove(marks.size() - 1);
        List<Object> items = new ArrayList<>(stack.subList(m + 1, stack.size()));
        stack.subList(m, stack.size()).clear();
        return items;
    }

    private int u8() throws CorruptShardException {
        return p.get(ValueLayout.JAVA_BYTE, need(pos, 1)) & 0xFF;
    }

    /** The position of {@code n} bytes from the current one, which it moves past; a pickle too short for them is named. */
    private long need(long at, long n) throws CorruptShardException {
        if (n > p.byteSize() - pos) {
            throw corrupt(at, "the pickle ends inside an opcode's argument (" + n + " bytes wanted, " + (p.byteSize() - pos)
                    + " left)");
        }
        long here = pos;
        pos += n;
        return here;
    }

    private void skip(long n) throws CorruptShardException {
        need(pos, n);
    }

    private long length(int bytes, long at) throws CorruptShardException {
        long v = bytes == 4 ? p.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), need(at, 4)) & 0xFFFF_FFFFL
                : p.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), need(at, 8));
        if (v < 0 || v > p.byteSize()) {
            throw corrupt(at, "a length of " + Long.toUnsignedString(v) + " in a pickle of " + p.byteSize() + " bytes");
        }
        return v;
    }

    private String text(long n, long at, java.nio.charset.Charset cs) throws CorruptShardException {
        return new String(bytes(n, at), cs);
    }

    private byte[] bytes(long n, long at) throws CorruptShardException {
        long from = need(at, n);
        return p.asSlice(from, n).toArray(ValueLayout.JAVA_BYTE);
    }

    private String line(long at) throws CorruptShardException {
        long from = pos;
        long end = from;
        while (end < p.byteSize() && p.get(ValueLayout.JAVA_BYTE, end) != '\n') {
            end++;
        }
        if (end >= p.byteSize()) {
            throw corrupt(at, "the pickle ends inside a line argument");
        }
        pos = end + 1;
        return new String(p.asSlice(from, end - from).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }

    private long integer(String s, long at) throws CorruptShardException {
        try {
            return Long.parseLong(s.strip());
        } catch (NumberFormatException e) {
            throw corrupt(at, "an integer that does not fit 64 bits or is no integer: '" + s + "'");
        }
    }

    private long longBytes(long n, long at) throws CorruptShardException {
        byte[] b = bytes(n, at);
        if (n == 0) {
            return 0;
        }
        byte[] be = new byte[b.length];
        for (int i = 0; i < b.length; i++) {
            be[i] = b[b.length - 1 - i];
        }
        BigInteger v = new BigInteger(be);
        if (v.bitLength() > 63) {
            throw corrupt(at, "an integer of " + v.bitLength() + " bits (64 at most are read)");
        }
        return v.longValue();
    }

    private CorruptShardException corrupt(long at, String what) {
        return new CorruptShardException(file, base + at, what);
    }

    private static String opName(int op) {
        return switch (op) {
            case 0x81 -> "NEWOBJ";
            case 0x92 -> "NEWOBJ_EX";
            case 'i' -> "INST";
            case 'o' -> "OBJ";
            case 0x82, 0x83, 0x84 -> "EXT (the extension registry)";
            case 0x8f -> "EMPTY_SET";
            case 0x90 -> "ADDITEMS";
            case 0x91 -> "FROZENSET";
            case 0x96 -> "BYTEARRAY8";
            case 0x97 -> "NEXT_BUFFER";
            case 0x98 -> "READONLY_BUFFER";
            case 'V' -> "UNICODE";
            case 'S' -> "STRING";
            default -> String.format("0x%02x", op);
        };
    }
}
