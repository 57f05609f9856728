package dev.stoker;

import java.util.concurrent.locks.LockSupport;

/** A worker thread of a {@link Pass}: claims work by position and waits for the prefetch window. */
abstract class PassWorker extends WorkerCounters implements Runnable {
    final Thread thread;
    private volatile boolean parked;

    private final int number;
    /** How long a stopping worker is waited for before it is interrupted (closing), and after. */
    private static final long GRACE_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);

    PassWorker(int i) {
        this.number = i;
        this.thread = new Thread(this, Loader.workerName(i));
        this.thread.setDaemon(true);
    }

    /**
     * Waits until position {@code s} is inside the pass's window; false when the pass was
     * cancelled meanwhile. The flag is set before the condition is checked again and the consumer
     * moves the window before it reads the flag, so no wake-up is lost (NOTE [Window] in IndexedPass).
     */
    final boolean awaitWindow(long s, Pass pass) {
        long t0 = 0;
        while (s >= pass.windowEnd()) {
            if (t0 == 0) {
                t0 = System.nanoTime();
            }
            parked = true;
            if (s >= pass.windowEnd() && !pass.cancelled()) {
                LockSupport.park(this);
            }
            parked = false;
            if (pass.cancelled()) {
                break;
            }
        }
        if (t0 != 0) {
            blockedNanos += System.nanoTime() - t0;
        }
        return !pass.cancelled();
    }

    /**
     * Waits while this worker is not among the pass's active ones (the autotuner lowered their
     * number); false when the pass was cancelled meanwhile. Woken like {@link #awaitWindow}.
     */
    final boolean awaitActive(Pass pass) {
        while (number >= pass.active && !pass.cancelled()) {
            parked = true;
            if (number >= pass.active && !pass.cancelled()) {
                LockSupport.park(this);
            }
            parked = false;
        }
        return !pass.cancelled();
    }

    /** Wakes the workers that wait for the window; called after it moved. */
    static void wakeParked(PassWorker[] workers) {
        for (PassWorker w : workers) {
            if (w.parked) {
                LockSupport.unpark(w.thread);
            }
        }
    }

    static void wakeAll(PassWorker[] workers) {
        for (PassWorker w : workers) {
            LockSupport.unpark(w.thread);
        }
    }

    /**
     * Waits for a worker to end. Closing, a worker still busy after the grace period is
     * interrupted and waited for once more; false if it is still alive after that (stuck in a
     * read that ignores interrupts).
     */
    static boolean join(Thread thread, boolean closing) {
        boolean interrupted = false;
        long deadline = System.nanoTime() + GRACE_NANOS;
        boolean sentInterrupt = false;
        while (thread.isAlive()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                if (!closing) {
                    deadline = System.nanoTime() + GRACE_NANOS; // not closing: keep waiting, the sample will end
                    continue;
                }
                if (sentInterrupt) {
                    break;
                }
                thread.interrupt();
                sentInterrupt = true;
                deadline = System.nanoTime() + GRACE_NANOS;
                continue;
            }
            try {
                thread.join(Math.max(1, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(left)));
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }
}
