package dev.stoker.djl;

import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.training.dataset.Batch;
import ai.djl.translate.Batchifier;

import java.util.AbstractList;
import java.util.List;

/**
 * A DJL {@link Batch} whose arrays are a Stoker batch's memory: the Stoker batch stays leased while
 * this batch is open, and {@link #close()} (which DJL's {@code EasyTrain} calls after each step)
 * closes the arrays and gives the memory back to the loader's pool.
 *
 * <p>The arrays live as long as the batch: an array detached from its manager, or kept past
 * {@code close()}, would read memory the loader refills. Keep a copy ({@code NDArray.duplicate()})
 * instead. {@link #getIndices()} (the samples' dataset indices) reads the batch too, while it is open.
 */
public final class StokerBatch extends Batch {
    private final dev.stoker.Batch source;
    private final StokerDataset owner;
    private boolean closed;

    StokerBatch(StokerDataset owner, NDManager manager, NDList data, NDList labels, dev.stoker.Batch source, long total) {
        super(manager, data, labels, source.size(), Batchifier.STACK, Batchifier.STACK, source.sequence() + 1,
                Math.max(total, 0), new Indices(source));
        this.owner = owner;
        this.source = source;
    }

    /** The Stoker batch these arrays read: its epoch, its position and its samples' indices. Valid while open. */
    public dev.stoker.Batch source() {
        if (closed) {
            throw new IllegalStateException("batch " + source.sequence() + " of epoch " + source.epoch() + " is closed");
        }
        return source;
    }

    /** Whether this batch was closed (its arrays freed, its memory back in the loader's pool). */
    public boolean isClosed() {
        return closed;
    }

    /** Closes the arrays, then gives the batch's memory back to the loader. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            super.close();
        } finally {
            owner.released(this, source);
        }
    }

    /** The samples' dataset indices, read from the Stoker batch (boxed only when asked for). */
    private static final class Indices extends AbstractList<Long> {
        private final dev.stoker.Batch b;
        private final int size;

        Indices(dev.stoker.Batch b) {
            this.b = b;
            this.size = b.size();
        }

        @Override
        public Long get(int i) {
            return b.index(i);
        }

        @Override
        public int size() {
            return size;
        }
    }
}
