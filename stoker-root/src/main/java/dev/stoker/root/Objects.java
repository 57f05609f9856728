package dev.stoker.root;

import dev.stoker.CorruptShardException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * ROOT's object serialization, as TBufferFile writes it into a key's payload: objects behind a
 * byte count and a class version, pointers written as a class tag (a new class's name, or a
 * reference to one already written) or a reference to an object already written. Only the classes
 * a TTree's metadata and the streamer infos need are read member by member (TTree, TBranch,
 * TBranchElement, TLeaf*, TObjArray, TList, TStreamerInfo, TStreamerElement and its kinds); any
 * other object is skipped by its byte count, as are the trailing members a newer class version
 * adds.
 *
 * <p>NOTE [Object references]: a reference is the byte position (counted from the key's start,
 * so the payload's positions plus its key length) of the object or class tag it points to, plus
 * 2; the maps below hold what was read at each such position.
 */
final class Objects {
    static final int BYTE_COUNT = 0x40000000;
    static final int NEW_CLASS = 0xFFFFFFFF;
    static final int CLASS_MASK = 0x80000000;
    static final int MAP_OFFSET = 2;
    private static final int VERSION_BYTE_COUNT = 0x4000;
    private static final int IS_REFERENCED = 1 << 4;
    /** Nesting deeper than this is a loop in a corrupt file, not a tree. */
    private static final int MAX_DEPTH = 64;

    final Cursor c;
    private final int origin;
    private final Map<Integer, String> classes = new HashMap<>();
    private final Map<Integer, Object> objects = new HashMap<>();
    private int depth;

    Objects(Cursor c, int origin) {
        this.c = c;
        this.origin = origin;
    }

    /** An object of a class Stoker does not read member by member. */
    record Other(String className) {
    }

    /** An object's byte count (its end, or -1 when it was written without one) and class version. */
    record Header(int start, int end, int version) {
    }

    Header header(String cls) throws CorruptShardException {
        int start = c.pos();
        int n = c.i32();
        if ((n & BYTE_COUNT) != 0) {
            long count = n & ~BYTE_COUNT;
            if (count < 2 || count > c.remaining()) {
                throw c.corruptAt(start, cls + " declares " + count + " bytes, " + c.remaining() + " remain");
            }
            int end = c.pos() + (int) count;
            int v = c.i16();
            return new Header(start, end, v);
        }
        c.pos(start);
        return new Header(start, -1, c.i16());
    }

    /** Moves past the object whose header is {@code h}: its members a newer version added are skipped. */
    void end(Header h, String cls) throws CorruptShardException {
        if (h.end() < 0) {
            return;
        }
        if (c.pos() > h.end()) {
            throw c.corruptAt(h.start(), cls + " (version " + h.version() + ") runs " + (c.pos() - h.end())
                    + " bytes past its byte count");
        }
        c.pos(h.end());
    }

    /** Skips an object written with a byte count. */
    void skip(String cls) throws CorruptShardException {
        Header h = header(cls);
        if (h.end() < 0) {
            throw c.corruptAt(h.start(), cls + " was written without a byte count; Stoker cannot skip it");
        }
        c.pos(h.end());
    }

    void tobject() throws CorruptShardException {
        int v = c.i16();
        if ((v & VERSION_BYTE_COUNT) != 0) {
            c.skip(4);
        }
        c.skip(4); // fUniqueID
        int bits = c.i32();
        if ((bits & IS_REFERENCED) != 0) {
            c.skip(2);
        }
    }

    /** A TNamed: its name and title. */
    String[] named() throws CorruptShardException {
        Header h = header("TNamed");
        tobject();
        String name = c.tstring();
        String title = c.tstring();
        end(h, "TNamed");
        return new String[] {name, title};
    }

    List<Object> objArray() throws CorruptShardException {
        Header h = header("TObjArray");
        tobject();
        c.tstring(); // fName
        int n = c.i32();
        c.skip(4); // fLowerBound
        if (n < 0 || n > c.remaining() / 4) {
            throw c.corrupt("TObjArray declares " + n + " entries in " + c.remaining() + " bytes");
        }
        List<Object> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(any());
        }
        end(h, "TObjArray");
        return out;
    }

    List<Object> list() throws CorruptShardException {
        Header h = header("TList");
        tobject();
        c.tstring(); // fName
        int n = c.i32();
        if (n < 0 || n > c.remaining() / 4) {
            throw c.corrupt("TList declares " + n + " entries in " + c.remaining() + " bytes");
        }
        List<Object> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(any());
            int len = c.u8(); // the entry's option string
            c.skip(len);
        }
        end(h, "TList");
        return out;
    }

    /** A pointer: null, a reference to what was read before, or a new object (of a new class or a known one). */
    Object any() throws CorruptShardException {
        if (++depth > MAX_DEPTH) {
            throw c.corrupt("objects nest deeper than " + MAX_DEPTH);
        }
        try {
            int beg = c.pos();
            int bcnt = c.i32();
            int tag;
            int start = -1;
            if ((bcnt & BYTE_COUNT) == 0 || bcnt == NEW_CLASS) {
                tag = bcnt;
                bcnt = 0;
            } else {
                start = c.pos();
                tag = c.i32();
            }
            if ((tag & CLASS_MASK) == 0) {
                if (tag == 0) {
                    return null;
                }
                Object o = objects.get(tag);
                if (o == null && bcnt != 0) {
                    c.pos((long) beg + (bcnt & ~BYTE_COUNT) + 4); // an unresolved forward reference
                }
                return o;
            }
            String cls;
            if (tag == NEW_CLASS) {
                cls = c.cstring();
                classes.put(start >= 0 ? start + origin + MAP_OFFSET : classes.size() + objects.size() + 1, cls);
            } else {
                cls = classes.get(tag & ~CLASS_MASK);
                if (cls == null) {
                    throw c.corruptAt(beg, "a class reference to byte " + ((tag & ~CLASS_MASK) - MAP_OFFSET - origin)
                            + " names no class read before");
                }
            }
            Object o = read(cls, bcnt != 0);
            objects.put(start >= 0 ? beg + origin + MAP_OFFSET : classes.size() + objects.size() + 1, o);
            if (bcnt != 0) {
                long end = (long) beg + (bcnt & ~BYTE_COUNT) + 4;
                if (c.pos() != end) {
                    c.pos(end); // checked against the record's bounds
                }
            }
            return o;
        } finally {
            depth--;
        }
    }

    /** Reads an object of class {@code cls} at the cursor (its byte count and version first). */
    private Object read(String cls, boolean bounded) throws CorruptShardException {
        return switch (cls) {
            case "TObjArray" -> objArray();
            case "TList", "THashList" -> list();
            case "TBranch" -> TTreeMeta.branch(this, false);
            case "TBranchElement" -> TTreeMeta.branch(this, true);
            case "TLeafO", "TLeafB", "TLeafS", "TLeafI", "TLeafL", "TLeafG", "TLeafF", "TLeafD", "TLeafC", "TLeafF16",
                    "TLeafD32", "TLeafElement" -> TTreeMeta.leaf(this, cls);
            case "TStreamerInfo" -> Streamers.info(this);
            default -> {
                if (cls.startsWith("TStreamer")) {
                    yield Streamers.element(this, cls);
                }
                if (!bounded) {
                    skip(cls);
                } // else the pointer's own byte count moves past it
                yield new Other(cls);
            }
        };
    }
}
