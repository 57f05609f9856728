package dev.stoker;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A worker of a {@link StreamPass}: claims shard positions in order, reads each shard into its
 * ring, and transforms the samples of any ring in the window, earliest first, whenever it has
 * nothing to read (NOTE [Streaming], NOTE [Helping]).
 */
final class StreamWorker extends PassWorker {
    private final StreamPass pass;
    private final SampleContext context = new SampleContext();
    private final StageTimes times = new StageTimes();
    private final ShardCursor cursor;
    private final StreamItem item = new StreamItem();
    volatile boolean idle;

    StreamWorker(StreamPass pass, int i) {
        super(i);
        this.pass = pass;
        this.cursor = new ShardCursor(pass.stream(), pass, this, times, false);
    }

    @Override
    public void run() {
        try {
            while (!pass.cancelled()) {
                if (!awaitActive(pass)) {
                    return;
                }
                long m = pass.claimShard();
                if (m >= pass.shardCount()) {
                    // nothing left to read: help with the transforms until the pass ends
                    while (!pass.cancelled()) {
                        if (!pass.helpOne(context, times)) {
                            rest(() -> false);
                        }
                        publish();
                    }
                    return;
                }
                while (m >= pass.windowEnd() && !pass.cancelled()) {
                    if (!pass.helpOne(context, times)) {
                        rest(() -> m < pass.windowEnd());
                    }
                    publish();
                }
                if (pass.cancelled()) {
                    return;
                }
                read(m);
            }
        } finally {
            cursor.close();
            publish();
        }
    }

    /** Reads position {@code m} into its ring, helping with transforms whenever the ring is full. */
    private void read(long m) {
        ShardRing ring = pass.ring(m);
        ring.open(m);
        Throwable error = null;
        try {
            cursor.open(m);
            // read while the ring has room, keeping `lead` samples ready for whoever is free;
            // beyond that, transform (this ring's or an earlier one's), and read on only when
            // there is nothing to transform
            int lead = 2 * pass.workerCount();
            while (!pass.cancelled() && !ring.abandoned()) {
                boolean room = !ring.full();
                if (!(room && ring.unclaimed() < lead) && pass.helpOne(context, times)) {
                    publish();
                    continue;
                }
                if (!room) {
                    rest(() -> !ring.full());
                    continue;
                }
                if (!cursor.next(item)) {
                    break;
                }
                ring.append(item.value, item.shard, item.offset);
                item.value = null;
                if (pass.stream().transforms()) {
                    pass.wakeIdle();
                }
                publish();
            }
        } catch (Throwable e) {
            error = e; // every failure reaches the consumer, in order
        }
        publish();
        if (pass.cancelled()) {
            cursor.close(); // the consumer has stopped: no sample of it will be used
            ring.finish(error, null);
        } else {
            ring.finish(error, cursor.detach());
        }
    }

    /** Parks until woken (or briefly); {@code ready} is checked after the flag is set, so no wake-up is lost. */
    private void rest(java.util.function.BooleanSupplier ready) {
        idle = true;
        if (!pass.cancelled() && !ready.getAsBoolean() && !pass.workAvailable()) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(10));
        }
        idle = false;
    }

    private void publish() {
        cursor.publish();
    }
}
