package dev.stoker.parquet;

import dev.hardwood.metadata.ColumnChunk;
import dev.hardwood.metadata.RowGroup;
import dev.stoker.parquet.ParquetColumns.Column;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the decompression ceiling measured ({@link #of}): the chunks' bytes, the bytes their
 * pages hold uncompressed, and the time it took on {@code threads} threads.
 */
public record ParquetCeiling(long compressedBytes, long uncompressedBytes, double seconds, int threads) {

    /**
     * The decompression ceiling of {@code data}'s reads: the projected column chunks of the row
     * groups read, fetched into memory first, then every page decompressed (nothing decoded) on
     * {@code threads} threads, a chunk at a time. No reader of these pages can be faster; a
     * benchmark reports its own rate against this one, measured in the same run.
     */
    public static ParquetCeiling of(ParquetDataset data, int threads) throws IOException, InterruptedException {
        if (threads < 1) {
            throw new IllegalArgumentException("the decompression ceiling needs at least one thread, got " + threads);
        }
        List<byte[]> chunks = new ArrayList<>();
        List<ChunkDecoder.Spec> specs = new ArrayList<>();
        long compressed = 0;
        for (int g : data.groups()) {
            RowGroup group = data.meta().rowGroups().get(g);
            for (Column c : data.columns()) {
                ColumnChunk k = ParquetColumns.chunk(group, c);
                byte[] b = new byte[Math.toIntExact(k.metaData().totalCompressedSize())];
                data.input().read(k.chunkStartOffset(), b, 0, b.length);
                chunks.add(b);
                specs.add(new ChunkDecoder.Spec(k.metaData().type(), c.typeLength(), c.node().maxDefinitionLevel(), k.metaData().codec()));
                compressed += b.length;
            }
        }
        AtomicInteger next = new AtomicInteger();
        AtomicLong out = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            long t0 = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    ChunkDecoder d = new ChunkDecoder();
                    for (int i; (i = next.getAndIncrement()) < chunks.size(); ) {
                        byte[] b = chunks.get(i);
                        out.addAndGet(d.decompressOnly(b, 0, b.length, specs.get(i)));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    throw new IOException(data.location() + ": decompressing its chunks: " + ParquetFooter.describe(e.getCause()), e.getCause());
                }
            }
            return new ParquetCeiling(compressed, out.get(), (System.nanoTime() - t0) / 1e9, threads);
        } finally {
            pool.shutdownNow();
        }
    }
}
