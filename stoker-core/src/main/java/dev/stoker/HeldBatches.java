package dev.stoker;

import java.util.function.Consumer;

/**
 * The batches a pass's consumer holds (NOTE [Holding batches] in {@link Loader}): with
 * {@code holds(1)}, the last batch delivered, which goes back when the next is asked for; with
 * more, each until its {@code close()}, and asking for a batch while holding the most allowed is
 * refused rather than left to starve the workers. Consumer thread only.
 */
final class HeldBatches {
    private final int holds;
    private final Consumer<Batch> giveBack;
    private Batch held;
    private int holding;

    HeldBatches(int holds, Consumer<Batch> giveBack) {
        this.holds = holds;
        this.giveBack = giveBack;
    }

    /** Batches held beyond the one {@code holds(1)} keeps: the buffers that must exist besides the window. */
    int holding() {
        return holding;
    }

    /** Before the consumer asks for the next batch: the last one goes back ({@code holds(1)}). */
    void releaseLast() {
        Batch b = held;
        if (b != null) {
            b.delivered = false;
            held = null;
            giveBack.accept(b);
        }
    }

    /** Refuses a request for a batch while the consumer holds as many as it may. */
    void checkRoom() {
        if (holding >= holds) {
            throw new IllegalStateException("the consumer holds " + holding + " batches, as many as the loader's holds(): "
                    + "close one before asking for the next");
        }
    }

    /** {@code b} goes to the consumer. */
    void delivered(Batch b) {
        b.delivered = true;
        if (holds == 1) {
            held = b;
        } else {
            holding++;
        }
    }

    /** The consumer closed {@code b}. */
    void release(Batch b) {
        if (holds > 1) {
            holding--;
            giveBack.accept(b);
        } else if (held == b) {
            held = null;
            giveBack.accept(b);
        }
    }

    /** The pass stopped: every buffer is the loader's again (a batch closed later gives nothing back). */
    void clear() {
        held = null;
    }
}
