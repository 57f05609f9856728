package dev.stoker.root;

import dev.stoker.CorruptShardException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A file's streamer infos (the TList at {@code fSeekInfo}): for each class and version, its
 * members' names, type codes and type names. A TTree needs them for the members of split classes
 * that are STL containers, whose element type only the streamer names.
 */
final class Streamers {
    private Streamers() {
    }

    /** One class version's members. */
    record Info(String name, int version, List<Element> elements) {
        Element element(int id, String name) {
            if (id >= 0 && id < elements.size() && elements.get(id).name().equals(name)) {
                return elements.get(id);
            }
            for (Element e : elements) {
                if (e.name().equals(name)) {
                    return e;
                }
            }
            return id >= 0 && id < elements.size() ? elements.get(id) : null;
        }
    }

    /** One member: its streamer kind (e.g. TStreamerSTL), name, type code, fixed array length and type name. */
    record Element(String kind, String name, int type, int arrayLength, String typeName) {
    }

    static Info info(Objects o) throws CorruptShardException {
        Objects.Header h = o.header("TStreamerInfo");
        String[] n = o.named();
        o.c.skip(4); // fCheckSum
        int version = o.c.i32();
        Object els = o.any();
        o.end(h, "TStreamerInfo");
        List<Element> elements = new ArrayList<>();
        if (els instanceof List<?> l) {
            for (Object e : l) {
                if (e instanceof Element el) {
                    elements.add(el);
                }
            }
        }
        return new Info(n[0], version, elements);
    }

    static Element element(Objects o, String cls) throws CorruptShardException {
        Objects.Header outer = o.header(cls);
        if (outer.end() < 0) {
            throw o.c.corruptAt(outer.start(), cls + " was written without a byte count");
        }
        // TStreamerSTLstring derives from TStreamerSTL, the others from TStreamerElement directly
        Objects.Header mid = cls.equals("TStreamerSTLstring") ? o.header("TStreamerSTL") : null;
        Objects.Header h = o.header("TStreamerElement");
        String[] n = o.named();
        int type = o.c.i32();
        o.c.skip(4); // fSize
        int arrayLength = o.c.i32();
        o.c.skip(4); // fArrayDim
        if (h.version() == 1) {
            int k = o.c.i32();
            o.c.skip(4L * Math.max(0, k));
        } else {
            o.c.skip(20); // fMaxIndex[5]
        }
        String typeName = o.c.tstring();
        o.end(h, "TStreamerElement");
        if (mid != null) {
            o.end(mid, "TStreamerSTL");
        }
        o.end(outer, cls);
        return new Element(cls, n[0], type, arrayLength, typeName);
    }

    /** The streamer infos of {@code file}, by class name, every version. */
    static Map<String, List<Info>> read(RootFile file) throws IOException {
        Map<String, List<Info>> out = new HashMap<>();
        long seek = file.seekInfo();
        if (seek <= 0 || file.nbytesInfo() <= 0) {
            return out;
        }
        ByteBuffer head = file.read(seek, (int) Math.min(file.size() - seek, Math.min(file.nbytesInfo(), 4096)), "streamer infos' key");
        Key key = RootFile.key(new Cursor(file.path(), "streamer infos' key", head, seek));
        Key at = new Key(key.name(), key.cycle(), key.className(), key.title(), seek, key.nbytes(), key.objlen(), key.keylen());
        ByteBuffer body = file.object(at);
        Objects o = new Objects(new Cursor(file.path(), "streamer infos (" + at + ")", body, -1), at.keylen());
        for (Object x : o.list()) {
            if (x instanceof Info i) {
                out.computeIfAbsent(i.name(), k -> new ArrayList<>()).add(i);
            }
        }
        return out;
    }
}
