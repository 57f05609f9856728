package dev.stoker.root;

import dev.stoker.root.TTreeTable.Decoded;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The decoded TTree baskets that reads leave entries of (NOTE [Baskets] in {@link TTreeTable}),
 * kept for all open tables together, least recently used first out, within {@link #CACHE_BYTES}.
 */
final class BasketCache {
    /** Decoded baskets kept, in bytes, for all open tables together: memory stays bounded however many files are open. */
    static final long CACHE_BYTES = 64L << 20;
    private static final Map<Object, Decoded> CACHE = new LinkedHashMap<>(16, 0.75f, true);
    private static long cached;

    private BasketCache() {
    }

    /** A basket of a branch of a table (the table by identity). */
    private record CacheKey(TTreeTable table, TTreeMeta.Branch branch, int basket) {
    }

    /** Basket {@code i} of a branch of {@code table} if kept, else null; with {@code keep} false, no longer kept. */
    static Decoded get(TTreeTable table, TTreeMeta.Branch branch, int i, boolean keep) {
        CacheKey key = new CacheKey(table, branch, i);
        Decoded d;
        synchronized (CACHE) {
            d = keep ? CACHE.get(key) : CACHE.remove(key);
            if (d != null && !keep) {
                cached -= weight(d);
            }
        }
        return d;
    }

    /** Keeps a decoded basket, dropping the least recently used others while over {@link #CACHE_BYTES}. */
    static void put(TTreeTable table, TTreeMeta.Branch branch, int i, Decoded d) {
        CacheKey key = new CacheKey(table, branch, i);
        synchronized (CACHE) {
            Decoded old = CACHE.put(key, d);
            cached += weight(d) - (old == null ? 0 : weight(old));
            var it = CACHE.entrySet().iterator();
            while (cached > CACHE_BYTES && it.hasNext()) {
                var e = it.next();
                if (e.getKey().equals(key)) {
                    continue;
                }
                cached -= weight(e.getValue());
                it.remove();
            }
        }
    }

    /** Drops every basket of {@code table}: it is closed. */
    static void drop(TTreeTable table) {
        synchronized (CACHE) {
            var it = CACHE.entrySet().iterator();
            while (it.hasNext()) {
                var e = it.next();
                if (((CacheKey) e.getKey()).table() == table) {
                    cached -= weight(e.getValue());
                    it.remove();
                }
            }
        }
    }

    private static long weight(Decoded d) {
        return d.values().length + (d.offsets() == null ? 0 : 8L * d.offsets().length) + 64;
    }
}
