package dev.stoker.root;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Rewrites a real RNTuple file's page lists and footer (stored uncompressed, appended to a copy of
 * the file, the anchor pointed at them and its checksum recomputed), so that tests can give it
 * lying counts and sizes, extra pages and cluster layouts that are otherwise well formed.
 */
final class RntRewriter {
    final byte[] original;
    final long anchorAt;
    final long seekHeader;
    final RntSchema schema;
    final long headerChecksum;
    final List<RntClusters.Group> groups;
    final List<List<RntClusters.Cluster>> lists = new ArrayList<>();
    /** The footer's schema extension record frame, as it will be written. */
    byte[] extension;
    private final ByteArrayOutputStream tail = new ByteArrayOutputStream();

    private RntRewriter(Path p, String name) throws IOException {
        original = Files.readAllBytes(p);
        try (RootFile f = RootFile.open(p.toString())) {
            Key key = f.directory("").key(name);
            if (key.nbytes() - key.keylen() != key.objlen()) {
                throw new IllegalStateException("compressed anchor");
            }
            anchorAt = key.seekKey() + key.keylen() + 6;
            ByteBuffer a = ByteBuffer.wrap(original).order(ByteOrder.BIG_ENDIAN);
            seekHeader = a.getLong((int) anchorAt + 8);
            ByteBuffer header = RNTupleTable.envelope(f, seekHeader, a.getLong((int) anchorAt + 16),
                    a.getLong((int) anchorAt + 24), 1, "header");
            headerChecksum = header.getLong(header.limit() - 8);
            schema = RntSchema.header(new RntCursor(header.slice(8, header.limit() - 16), p.toString(), "header", 0));
            long seekFooter = a.getLong((int) anchorAt + 32);
            ByteBuffer footer = RNTupleTable.envelope(f, seekFooter, a.getLong((int) anchorAt + 40),
                    a.getLong((int) anchorAt + 48), 2, "footer");
            ByteBuffer payload = footer.slice(8, footer.limit() - 16).order(ByteOrder.LITTLE_ENDIAN);
            RntCursor c = new RntCursor(payload, p.toString(), "footer", 0);
            RntSchema.features(c);
            c.i64();
            int from = c.position();
            schema.extension(c);
            extension = new byte[c.position() - from];
            payload.get(from, extension);
            groups = RntClusters.groups(c);
            for (RntClusters.Group g : groups) {
                ByteBuffer list = RNTupleTable.envelope(f, g.pageListOffset(), g.pageListSize(), g.pageListLength(), 3,
                        "page list");
                lists.add(new ArrayList<>(RntClusters.pageList(new RntCursor(list.slice(8, list.limit() - 16),
                        p.toString(), "page list", 0), headerChecksum, schema.columns.size(), original.length)));
            }
        }
    }

    static RntRewriter of(Path p, String name) throws IOException {
        return new RntRewriter(p, name);
    }

    /** Appends {@code b} to the copy; its offset there. */
    long append(byte[] b) {
        long at = original.length + tail.size();
        tail.writeBytes(b);
        return at;
    }

    /** Appends a page's bytes followed by their XXH3; the page's description. */
    RntClusters.Page appendPage(long elements, byte[] b) {
        long at = append(b);
        byte[] sum = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(Xxh3.hash(b)).array();
        append(sum);
        return new RntClusters.Page(elements, true, b.length, at);
    }

    /** Writes the copy: the page lists and footer appended, the anchor pointed at the footer. */
    Path write(Path to) throws IOException {
        List<long[]> links = new ArrayList<>();
        for (List<RntClusters.Cluster> list : lists) {
            byte[] env = envelope(3, pageList(list));
            links.add(new long[] {env.length, append(env)});
        }
        Out footer = new Out();
        footer.i64(0);
        footer.i64(headerChecksum);
        footer.bytes(extension);
        Out groupsFrame = new Out();
        for (int g = 0; g < groups.size(); g++) {
            RntClusters.Group gr = groups.get(g);
            Out r = new Out();
            r.i64(lists.get(g).isEmpty() ? gr.minEntry() : lists.get(g).get(0).firstEntry());
            long span = 0;
            for (RntClusters.Cluster c : lists.get(g)) {
                span += c.entries();
            }
            r.i64(span);
            r.i32(lists.get(g).size());
            r.i64(links.get(g)[0]);
            r.i32((int) links.get(g)[0]);
            r.i64(links.get(g)[1]);
            groupsFrame.record(r);
        }
        footer.list(groupsFrame, groups.size());
        byte[] env = envelope(2, footer.toByteArray());
        long at = append(env);
        byte[] out = new byte[original.length + tail.size()];
        System.arraycopy(original, 0, out, 0, original.length);
        System.arraycopy(tail.toByteArray(), 0, out, original.length, tail.size());
        ByteBuffer a = ByteBuffer.wrap(out).order(ByteOrder.BIG_ENDIAN);
        a.putLong((int) anchorAt + 32, at);
        a.putLong((int) anchorAt + 40, env.length);
        a.putLong((int) anchorAt + 48, env.length);
        a.putLong((int) anchorAt + 64, Xxh3.hash(a, (int) anchorAt, 64));
        Files.write(to, out);
        return to;
    }

    private byte[] pageList(List<RntClusters.Cluster> clusters) {
        Out o = new Out();
        o.i64(headerChecksum);
        Out summaries = new Out();
        for (RntClusters.Cluster c : clusters) {
            Out r = new Out();
            r.i64(c.firstEntry());
            r.i64(c.entries());
            summaries.record(r);
        }
        o.list(summaries, clusters.size());
        Out top = new Out();
        for (RntClusters.Cluster c : clusters) {
            Out outer = new Out();
            for (RntClusters.ColumnPages cp : c.columns()) {
                Out inner = new Out();
                for (RntClusters.Page p : cp.pages()) {
                    inner.i32((int) (p.checksum() ? -p.elements() : p.elements()));
                    inner.i32((int) p.size());
                    inner.i64(p.offset());
                }
                inner.i64(cp.suppressed() ? Long.MIN_VALUE : cp.elementOffset());
                if (!cp.suppressed()) {
                    inner.i32(cp.compression());
                }
                outer.list(inner, cp.pages().length);
            }
            top.list(outer, c.columns().length);
        }
        o.list(top, clusters.size());
        return o.toByteArray();
    }

    /** An uncompressed envelope: type and length, the payload, its XXH3. */
    static byte[] envelope(int type, byte[] payload) {
        int len = payload.length + 16;
        ByteBuffer b = ByteBuffer.allocate(len).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(type | ((long) len << 16));
        b.put(payload);
        b.putLong(Xxh3.hash(b, 0, len - 8));
        return b.array();
    }

    /** A little-endian byte sink with RNTuple's frames. */
    static final class Out extends ByteArrayOutputStream {
        void i32(int v) {
            for (int i = 0; i < 4; i++) {
                write(v >>> (8 * i));
            }
        }

        void i64(long v) {
            for (int i = 0; i < 8; i++) {
                write((int) (v >>> (8 * i)));
            }
        }

        void i16(int v) {
            write(v);
            write(v >>> 8);
        }

        void string(String v) {
            byte[] b = v.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            i32(b.length);
            writeBytes(b);
        }

        void bytes(byte[] b) {
            writeBytes(b);
        }

        void record(Out content) {
            i64(8 + content.size());
            writeBytes(content.toByteArray());
        }

        void list(Out content, int items) {
            i64(-(12 + content.size()));
            i32(items);
            writeBytes(content.toByteArray());
        }
    }
}
