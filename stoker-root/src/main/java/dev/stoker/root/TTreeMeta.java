package dev.stoker.root;

import dev.stoker.CorruptShardException;
import java.util.ArrayList;
import java.util.List;

/**
 * A TTree's metadata as ROOT 5.32 to 6.38 write it: TTree versions 16 to 20, TBranch 10 to 13,
 * TBranchElement 8 to 10, TLeaf 2 and its kinds. Members are read in the order each version
 * writes them; what follows the members Stoker needs is skipped by the object's byte count.
 */
final class TTreeMeta {
    private TTreeMeta() {
    }

    /** A TTree: its entries, cluster ranges and top-level branches. */
    record Tree(long entries, long autoFlush, long[] clusterRangeEnd, long[] clusterSize, List<Branch> branches) {
    }

    /** A TBranch or TBranchElement. */
    static final class Branch {
        String name;
        String title;
        boolean element;
        int entryOffsetLen;
        int writeBasket;
        long entries;
        int[] basketBytes;
        long[] basketEntry;
        long[] basketSeek;
        final List<Branch> children = new ArrayList<>();
        final List<Leaf> leaves = new ArrayList<>();
        int embeddedBaskets;
        // TBranchElement's own members
        String className = "";
        String parentName = "";
        int classVersion;
        int id = -1;
        int type;
        int streamerType = -1;
        Object branchCount;
    }

    /** A TLeaf of any kind. */
    static final class Leaf {
        String cls;
        String name;
        String title;
        int len;
        boolean unsigned;
        Object count;
        int id = -1;
        int type;
    }

    static Tree tree(Objects o) throws CorruptShardException {
        Cursor c = o.c;
        Objects.Header h = o.header("TTree");
        int v = h.version();
        if (v < 16 || v > 20) {
            throw c.corruptAt(h.start(), "TTree version " + v + ", Stoker reads versions 16 to 20 (ROOT 5.26 to 6.38)");
        }
        o.named();
        o.skip("TAttLine");
        o.skip("TAttFill");
        o.skip("TAttMarker");
        long entries = c.i64();
        c.skip(8 * 3); // fTotBytes, fZipBytes, fSavedBytes
        if (v >= 18) {
            c.skip(8); // fFlushedBytes
        }
        c.skip(8 + 4 * 3); // fWeight, fTimerInterval, fScanField, fUpdate
        if (v >= 17) {
            c.skip(4); // fDefaultEntryOffsetLen
        }
        int nClusterRange = v >= 19 ? c.i32() : 0;
        c.skip(8 * 4); // fMaxEntries, fMaxEntryLoop, fMaxVirtualSize, fAutoSave
        long autoFlush = v >= 18 ? c.i64() : 0;
        c.skip(8); // fEstimate
        if (entries < 0) {
            throw c.corruptAt(h.start(), "TTree declares " + entries + " entries");
        }
        long[] rangeEnd = new long[0];
        long[] size = new long[0];
        if (v >= 19) {
            if (nClusterRange < 0 || nClusterRange > c.remaining() / 16) {
                throw c.corrupt("TTree declares " + nClusterRange + " cluster ranges in " + c.remaining() + " bytes");
            }
            rangeEnd = longs(c, nClusterRange);
            size = longs(c, nClusterRange);
        }
        if (v >= 20) {
            ioFeatures(o);
        }
        List<Branch> branches = branches(o.objArray());
        o.objArray(); // fLeaves: the same leaves again
        o.end(h, "TTree");
        return new Tree(entries, autoFlush, rangeEnd, size, branches);
    }

    private static long[] longs(Cursor c, int n) throws CorruptShardException {
        c.skip(1); // written before an array: 1 when the array follows
        long[] a = new long[n];
        for (int i = 0; i < n; i++) {
            a[i] = c.i64();
        }
        return a;
    }

    private static void ioFeatures(Objects o) throws CorruptShardException {
        Objects.Header h = o.header("ROOT::TIOFeatures");
        if (h.end() < 0) {
            o.c.skip(5);
        } else {
            o.end(h, "ROOT::TIOFeatures");
        }
    }

    private static List<Branch> branches(List<Object> objects) {
        List<Branch> out = new ArrayList<>();
        for (Object x : objects) {
            if (x instanceof Branch b) {
                out.add(b);
            }
        }
        return out;
    }

    static Branch branch(Objects o, boolean element) throws CorruptShardException {
        Cursor c = o.c;
        Branch b = new Branch();
        b.element = element;
        Objects.Header outer = element ? o.header("TBranchElement") : null;
        Objects.Header h = o.header("TBranch");
        int v = h.version();
        if (v < 10 || v > 13) {
            throw c.corruptAt(h.start(), "TBranch version " + v + ", Stoker reads versions 10 to 13");
        }
        String[] n = o.named();
        b.name = n[0];
        b.title = n[1];
        o.skip("TAttFill");
        c.skip(8); // fCompress, fBasketSize
        b.entryOffsetLen = c.i32();
        b.writeBasket = c.i32();
        c.skip(8); // fEntryNumber
        if (v >= 13) {
            ioFeatures(o);
        }
        c.skip(4); // fOffset
        int maxBaskets = c.i32();
        c.skip(4); // fSplitLevel
        b.entries = c.i64();
        if (v >= 11) {
            c.skip(8); // fFirstEntry
        }
        c.skip(16); // fTotBytes, fZipBytes
        b.children.addAll(branches(o.objArray()));
        for (Object x : o.objArray()) {
            if (x instanceof Leaf l) {
                b.leaves.add(l);
            }
        }
        for (Object x : o.objArray()) {
            if (x != null) {
                b.embeddedBaskets++;
            }
        }
        if (maxBaskets < 0 || maxBaskets > c.remaining() / 20 || b.writeBasket < 0 || b.writeBasket > maxBaskets
                || b.entries < 0) {
            throw c.corrupt("branch '" + b.name + "' declares " + maxBaskets + " baskets (" + b.writeBasket + " written) and "
                    + b.entries + " entries in " + c.remaining() + " bytes");
        }
        c.skip(1);
        b.basketBytes = new int[maxBaskets];
        for (int i = 0; i < maxBaskets; i++) {
            b.basketBytes[i] = c.i32();
        }
        c.skip(1);
        b.basketEntry = new long[maxBaskets];
        for (int i = 0; i < maxBaskets; i++) {
            b.basketEntry[i] = c.i64();
        }
        c.skip(1);
        b.basketSeek = new long[maxBaskets];
        for (int i = 0; i < maxBaskets; i++) {
            b.basketSeek[i] = c.i64();
        }
        o.end(h, "TBranch");
        if (element) {
            b.className = c.tstring();
            b.parentName = c.tstring();
            c.tstring(); // fClonesName
            c.skip(4); // fCheckSum
            b.classVersion = outer.version() >= 10 ? c.i16() : c.i32();
            b.id = c.i32();
            b.type = c.i32();
            b.streamerType = c.i32();
            c.skip(4); // fMaximum
            b.branchCount = o.any();
            o.any(); // fBranchCount2
            o.end(outer, "TBranchElement");
        }
        return b;
    }

    static Leaf leaf(Objects o, String cls) throws CorruptShardException {
        Cursor c = o.c;
        Objects.Header outer = o.header(cls);
        Objects.Header h = o.header("TLeaf");
        Leaf l = new Leaf();
        l.cls = cls;
        String[] n = o.named();
        l.name = n[0];
        l.title = n[1];
        l.len = c.i32();
        c.skip(4 + 4 + 1); // fLenType, fOffset, fIsRange
        l.unsigned = c.bool();
        l.count = o.any();
        o.end(h, "TLeaf");
        if (cls.equals("TLeafElement")) {
            l.id = c.i32();
            l.type = c.i32();
        }
        o.end(outer, cls);
        return l;
    }
}
