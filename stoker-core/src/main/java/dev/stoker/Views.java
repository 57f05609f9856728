package dev.stoker;

import java.io.IOException;
import java.util.List;

/** The dataset views: they map an index to a parent's and read from it. */
final class Views {
    private Views() {
    }

    static final class Subset<T> implements Dataset<T> {
        private final Dataset<T> parent;
        private final Indexes.Map map;

        Subset(Dataset<T> parent, Indexes.Map map) {
            this.parent = parent;
            this.map = map;
        }

        @Override
        public long size() {
            return map.size();
        }

        @Override
        public T get(long index) throws IOException {
            return parent.get(map.map(Checks.checkIndex(index, map.size(), this)));
        }

        @Override
        public String name() {
            return parent.name();
        }
    }

    static final class DirectSubset implements DirectDataset {
        private final DirectDataset parent;
        private final Indexes.Map map;

        DirectSubset(DirectDataset parent, Indexes.Map map) {
            this.parent = parent;
            this.map = map;
        }

        @Override
        public long size() {
            return map.size();
        }

        @Override
        public Schema schema() {
            return parent.schema();
        }

        @Override
        public void read(long index, Row row) throws IOException {
            parent.read(map.map(Checks.checkIndex(index, map.size(), parent.name())), row);
        }

        @Override
        public String name() {
            return parent.name();
        }
    }

    /** Cumulative sizes of concatenated parts. */
    static long[] ends(List<Long> sizes) {
        if (sizes.isEmpty()) {
            throw new IllegalArgumentException("concat needs at least one dataset");
        }
        long[] ends = new long[sizes.size()];
        long total = 0;
        for (int i = 0; i < ends.length; i++) {
            total = Math.addExact(total, sizes.get(i));
            ends[i] = total;
        }
        return ends;
    }

    /** The part holding concatenated index {@code index}. */
    static int part(long[] ends, long index) {
        int lo = 0;
        int hi = ends.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (index < ends[mid]) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    static final class Concat<T> implements Dataset<T> {
        private final List<? extends Dataset<? extends T>> parts;
        private final long[] ends;

        Concat(List<? extends Dataset<? extends T>> parts) {
            this.parts = parts;
            this.ends = ends(parts.stream().map(Dataset::size).toList());
        }

        @Override
        public long size() {
            return ends[ends.length - 1];
        }

        @Override
        public T get(long index) throws IOException {
            Checks.checkIndex(index, size(), this);
            int part = part(ends, index);
            return parts.get(part).get(index - (part == 0 ? 0 : ends[part - 1]));
        }

        @Override
        public String name() {
            return "concat(" + parts.size() + ")";
        }
    }

    static final class Mix<T> implements Dataset<T> {
        private final List<? extends Dataset<? extends T>> parts;
        private final Blend blend;

        Mix(List<? extends Dataset<? extends T>> parts, Blend blend) {
            this.parts = parts;
            this.blend = blend;
        }

        @Override
        public long size() {
            return blend.length();
        }

        @Override
        public T get(long index) throws IOException {
            Checks.checkIndex(index, size(), this);
            Blend.Cursor c = blend.locate(index);
            Dataset<? extends T> part = parts.get(c.part);
            return part.get(c.local % part.size());
        }

        @Override
        public String name() {
            return "mix(" + parts.size() + ")";
        }
    }

    static final class DirectMix implements DirectDataset {
        private final List<? extends DirectDataset> parts;
        private final Blend blend;

        DirectMix(List<? extends DirectDataset> parts, Blend blend) {
            this.parts = parts;
            this.blend = blend;
        }

        @Override
        public long size() {
            return blend.length();
        }

        @Override
        public Schema schema() {
            return parts.get(0).schema();
        }

        @Override
        public void read(long index, Row row) throws IOException {
            Checks.checkIndex(index, size(), "mix");
            Blend.Cursor c = blend.locate(index);
            DirectDataset part = parts.get(c.part);
            part.read(c.local % part.size(), row);
        }

        @Override
        public String name() {
            return "mix(" + parts.size() + ")";
        }
    }

    static final class DirectConcat implements DirectDataset {
        private final List<? extends DirectDataset> parts;
        private final long[] ends;

        DirectConcat(List<? extends DirectDataset> parts) {
            this.parts = parts;
            this.ends = ends(parts.stream().map(DirectDataset::size).toList());
        }

        @Override
        public long size() {
            return ends[ends.length - 1];
        }

        @Override
        public Schema schema() {
            return parts.get(0).schema();
        }

        @Override
        public void read(long index, Row row) throws IOException {
            Checks.checkIndex(index, size(), "concat");
            int part = part(ends, index);
            parts.get(part).read(index - (part == 0 ? 0 : ends[part - 1]), row);
        }

        @Override
        public String name() {
            return "concat(" + parts.size() + ")";
        }
    }
}
