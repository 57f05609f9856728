package dev.stoker.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
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
 * waiting, if that one is not cached yet and the bound holds at least four blocks (of the largest
 * size decoded so far): a pass through the file then keeps every thread decoding, also through
 * a file larger than the cache. Beyond the byte bound, the least recently used decoded blocks are
 * dropped (the one just decoded is always kept); "recently" is counted in decodes, so that a read
 * of a decoded block takes no lock: one array read, and a plain write only when its age changed.
 * Decoded values must not be changed once returned.
 *
 * <p>A block that leaves the cache (dropped for room, cleared, closed, or arriving after a clear)
 * is handed to the {@code release} hook, if one was given: a block held off the heap frees its
 * memory there. A thread may still be reading a block released under it (it took the block just
 * before); such memory must be freed safely, as a shared {@link java.lang.foreign.Arena}'s
 * close does (the late read fails and can be retried), never by a bare {@code free}.
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
    private final java.util.function.Consumer<? super V> release;
    private final String name;
    private final LinkedHashMap<Integer, CompletableFuture<V>> map = new LinkedHashMap<>();
    private final java.util.concurrent.atomic.AtomicReferenceArray<V> ready;
    /** The decode count when each block was last read: written without synchronization, an approximate age is enough. */
    private final long[] lastUse;
    private volatile long decodes;
    private long held;
    private long largest;
    private boolean closed;

    public BlockCache(String name, int blocks, long limitBytes, Decoder<V> decoder, ToLongFunction<V> bytes) {
        this(name, blocks, limitBytes, decoder, bytes, v -> {
        });
    }

    /** A cache that hands each block leaving it to {@code release}. */
    public BlockCache(String name, int blocks, long limitBytes, Decoder<V> decoder, ToLongFunction<V> bytes,
            java.util.function.Consumer<? super V> release) {
        this.release = release;
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
            long d = decodes;
            if (lastUse[k] != d) { // threads reading one block share its age's cache line only for reads
                lastUse[k] = d;
            }
            return v;
        }
        return load(k);
    }

    /**
     * Starts the blocks {@code ks[0, n)} a reader is about to need all of (a shuffled batch's):
     * decodes, here and in turn, each one neither decoded nor being decoded by another thread, so
     * that threads needing the same blocks share their decoding instead of waiting on each other.
     * A failed decode is reported by the {@link #get} that follows, as when it is the first.
     */
    public void start(int[] ks, int n) {
        for (int i = 0; i < n; i++) {
            int k = ks[i];
            if (ready.get(k) != null) {
                continue;
            }
            CompletableFuture<V> mine = null;
            synchronized (map) {
                if (closed) {
                    return; // the get that follows says so
                }
                if (!map.containsKey(k)) {
                    mine = new CompletableFuture<>();
                    map.put(k, mine);
                }
            }
            if (mine != null) {
                fill(k, mine);
            }
        }
    }

    private V load(int k) throws IOException {
        while (true) {
            try {
                return loadOnce(k);
            } catch (InterruptedIOException e) {
                if (Thread.currentThread().isInterrupted() || closed()) {
                    throw e;
                }
                // the thread decoding the block was interrupted (its loader was closing), not this one: decode it here
            }
        }
    }

    private boolean closed() {
        synchronized (map) {
            return closed;
        }
    }

    private V loadOnce(int k) throws IOException {
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
            } else if (!f.isDone() && k + 1 < blocks && !map.containsKey(k + 1) && largest <= limit / 4) {
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
            if (e instanceof java.nio.channels.ClosedByInterruptException) {
                // an interrupted read: not the block's fault, and a waiter not interrupted decodes it again (load)
                e = new InterruptedIOException("interrupted decoding block " + k + " of " + name).initCause(e);
            }
            f.completeExceptionally(e);
            return;
        }
        f.complete(v);
        List<V> gone = new ArrayList<>();
        try {
            keep(k, f, v, gone);
        } finally {
            gone.forEach(release);
        }
    }

    /** Holds block {@code k} just decoded and drops the least recently used beyond the bound into {@code gone}. */
    private void keep(int k, CompletableFuture<V> f, V v, List<V> gone) {
        synchronized (map) {
            if (map.get(k) != f) {
                gone.add(v); // cleared meanwhile
                return;
            }
            long size = bytes.applyAsLong(v);
            held += size;
            largest = Math.max(largest, size);
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
                V dropped = ready.get(oldest);
                held -= bytes.applyAsLong(dropped);
                ready.set(oldest, null);
                map.remove(oldest);
                gone.add(dropped);
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
        drop(false);
    }

    /** Forgets everything; later calls of {@link #get} fail. Idempotent. */
    public void close() {
        drop(true);
    }

    private void drop(boolean close) {
        List<V> gone = new ArrayList<>();
        synchronized (map) {
            closed |= close;
            map.clear();
            held = 0;
            for (int i = 0; i < blocks; i++) {
                V v = ready.getAndSet(i, null);
                if (v != null) {
                    gone.add(v);
                }
            }
        }
        gone.forEach(release);
    }
}
