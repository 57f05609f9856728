package dev.stoker;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.ToLongFunction;

/**
 * Decoded blocks of a file (Parquet row groups, HDF5 chunks), numbered {@code 0 .. blocks - 1},
 * shared by the threads that read samples from them and bounded in bytes: a
 * {@link DirectDataset} over a compressed, blocked format reads a sample as a slice of its
 * decoded block instead of decoding the block again for every sample.
 *
 * <p>A block is decoded once, by the first thread that needs it; others that need it meanwhile
 * wait for it. A thread that finds its block being decoded decodes the next one instead of
 * waiting, if that one is not cached yet and the cache is less than half full: a pass through
 * the file then keeps every thread decoding. Beyond the byte bound, the least recently used
 * decoded blocks are dropped (the one just decoded is always kept); "recently" is counted in
 * decodes, so that a read of a decoded block takes no lock: one array read and one plain write.
 * Decoded values must not be changed once returned.
 */
public final class BlockCache<V> {
    /** Decodes block {@code b}. */
    public interface Decoder<V> {
        V decode(int block) throws IOException;
    }

    private final int blocks;
    private final long limit;
    private final Decoder<V> decoder;
    private final ToLongFunction<V> bytes;
    private final String name;
    private final LinkedHashMap<Integer, CompletableFuture<V>> map = new LinkedHashMap<>();
    private final java.util.concurrent.atomic.AtomicReferenceArray<V> ready;
    /** The decode count when each block was last read: written without synchronization, an approximate age is enough. */
    private final long[] lastUse;
    private volatile long decodes;
    private long held;
    private boolean closed;

    public BlockCache(String name, int blocks, long limitBytes, Decoder<V> decoder, ToLongFunction<V> bytes) {
        this.name = name;
        this.blocks = blocks;
        this.limit = limitBytes;
        this.decoder = decoder;
        this.bytes = bytes;
        this.ready = new java.util.concurrent.atomic.AtomicReferenceArray<>(blocks);
        this.lastUse = new long[blocks];
    }

    /** Block {@code k}, decoded now or earlier. */
    public V get(int k) throws IOException {
        V v = ready.get(k);
        if (v != null) {
            lastUse[k] = decodes;
            return v;
        }
        return load(k);
    }

    private V load(int k) throws IOException {
        CompletableFuture<V> f;
        CompletableFuture<V> mine = null;
        CompletableFuture<V> ahead = null;
        synchronized (map) {
            if (closed) {
                throw new IllegalStateException(name + " is closed");
            }
            f = map.get(k);
            if (f == null) {
                f = new CompletableFuture<>();
                map.put(k, f);
                mine = f;
            } else if (!f.isDone() && k + 1 < blocks && !map.containsKey(k + 1) && held < limit / 2) {
                ahead = new CompletableFuture<>();
                map.put(k + 1, ahead);
            }
        }
        if (ahead != null) {
            fill(k + 1, ahead);
        }
        if (mine != null) {
            fill(k, mine);
        }
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted waiting for block " + k + " of " + name);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException io) {
                throw io;
            }
            if (c instanceof RuntimeException re) {
                throw re;
            }
            if (c instanceof Error err) {
                throw err;
            }
            throw new IOException(c);
        }
    }

    private void fill(int k, CompletableFuture<V> f) {
        V v;
        try {
            v = decoder.decode(k);
        } catch (Throwable e) {
            synchronized (map) {
                map.remove(k, f);
            }
            f.completeExceptionally(e);
            return;
        }
        f.complete(v);
        synchronized (map) {
            if (map.get(k) != f) {
                return; // cleared meanwhile
            }
            held += bytes.applyAsLong(v);
            decodes++;
            lastUse[k] = decodes;
            ready.set(k, v);
            while (held > limit) {
                int oldest = -1;
                for (Map.Entry<Integer, CompletableFuture<V>> e : map.entrySet()) {
                    int j = e.getKey();
                    if (j != k && ready.get(j) != null && (oldest < 0 || lastUse[j] < lastUse[oldest])) {
                        oldest = j;
                    }
                }
                if (oldest < 0) {
                    break;
                }
                held -= bytes.applyAsLong(ready.get(oldest));
                ready.set(oldest, null);
                map.remove(oldest);
            }
        }
    }

    /** Bytes of the decoded blocks held now. */
    public long heldBytes() {
        synchronized (map) {
            return held;
        }
    }

    /** Forgets every decoded block (blocks being decoded are dropped when they arrive). */
    public void clear() {
        synchronized (map) {
            map.clear();
            held = 0;
            for (int i = 0; i < blocks; i++) {
                ready.set(i, null);
            }
        }
    }

    /** Forgets everything; later calls of {@link #get} fail. Idempotent. */
    public void close() {
        synchronized (map) {
            closed = true;
            map.clear();
            held = 0;
            for (int i = 0; i < blocks; i++) {
                ready.set(i, null);
            }
        }
    }
}
