package dev.stoker;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Chooses the number of active workers and the prefetch depth while a loader runs, from what
 * the consumer and the workers measured. Used by the consumer thread only; the choices are read
 * by the workers through the pass.
 *
 * <p>NOTE [Autotune]: time is cut into intervals of at least {@link #INTERVAL_NANOS} (the first:
 * {@link #FIRST_INTERVAL_NANOS}) and {@link #MIN_BATCHES} batches. Over an interval the tuner knows the consumer's rate, the share
 * of its time spent waiting, the worker time one batch costs ({@code P}), the consumer's own
 * time per batch ({@code C}), and how long active workers sat blocked at the end of the prefetch
 * window. As tf.data does, it models the pipeline: {@code k} workers make {@code k / P} batches
 * per second and the consumer takes at most {@code 1 / C}, so when the consumer waits, the
 * workers needed are {@code ceil(1.1 P / C)} (all of the budget when {@code C} is nearly 0), but
 * a jump goes no further than the machine's cores: past them, workers are added one at a time.
 * A model can be wrong (workers share cores with each other and with the consumer), so every
 * change is a trial: after one interval to settle, the mean rate of the next
 * {@link #JUDGED_INTERVALS} is compared with that of the two intervals before the change (single
 * intervals are too noisy to judge a few percent by). A raise that does not buy {@link #GAIN} more rate is undone and not tried again for
 * a back-off that doubles each time; a lowering that costs rate is undone the same way.
 * <ul>
 *   <li>The consumer waits (more than {@link #WAIT_HIGH} of its time) while workers sit blocked
 *       at the window's end: production is bursty, so the window doubles (within the memory
 *       budget).</li>
 *   <li>The consumer waits and workers are busy: more workers, as the model says (within the
 *       CPU budget); if no more may be tried and workers were blocked at all, a deeper window.
 *       Busy workers that are never blocked gain nothing from a deeper window.</li>
 *   <li>The consumer has not waited (less than {@link #WAIT_LOW}) for three intervals and the
 *       workers' busy time would fit in one worker fewer with room to spare: one worker fewer,
 *       which frees a core for the training process.</li>
 * </ul>
 * The order of batches never depends on these choices (NOTE [Ordering] in {@link IndexedPass}).
 */
final class Tuner {
    static final long INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The first interval is short: the model's first jump is worth more than a precise rate. */
    static final long FIRST_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    static final long LONGEST_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(2);
    static final int MIN_BATCHES = 4;
    static final double WAIT_HIGH = 0.03;
    static final double WAIT_LOW = 0.01;
    static final double GAIN = 1.03;
    /** Intervals a change is measured over before it is judged (after one to settle). */
    static final int JUDGED_INTERVALS = 2;
    private static final int FIRST_BACKOFF = 4;
    private static final int LONGEST_BACKOFF = 128;
    private static final int MAX_HISTORY = 64;

    private final int maxWorkers;
    /** The machine's cores: how far one jump of the model may go. */
    private final int cores;
    private final int maxPrefetch;
    private final boolean tunesWorkers;
    private final boolean tunesPrefetch;
    private volatile int workers;
    private volatile int prefetch;

    // the interval being measured
    private long start = -1;
    private long batches0;
    private long wait0;
    private long busy0;
    private long blocked0;
    private boolean settling;
    private double lastRate;
    /** The rate of the interval before the last, for a steadier base to judge a change against. */
    private double previousRate = -1;
    private boolean decided;
    /** Intervals measured for the trial so far, and their rates summed. */
    private int judged;
    private double judgedSum;

    // the change on trial, if any
    private Kind trial;
    private int trialFromWorkers;
    private int trialFromPrefetch;
    private double trialBaseRate;

    private final int[] blockedFor = new int[Kind.values().length];
    private final int[] backoff = new int[Kind.values().length];
    private int calm;
    private long created = -1;
    private final List<String> history = new ArrayList<>();

    private enum Kind { MORE_WORKERS, FEWER_WORKERS, DEEPER }

    /**
     * @param workers  the first number of workers (the fixed number when not tuned)
     * @param prefetch the first prefetch depth (the fixed depth when not tuned)
     */
    Tuner(int workers, int maxWorkers, boolean tunesWorkers, int prefetch, int maxPrefetch, boolean tunesPrefetch,
          int cores) {
        this.cores = cores;
        this.workers = workers;
        this.maxWorkers = maxWorkers;
        this.tunesWorkers = tunesWorkers;
        this.prefetch = prefetch;
        this.maxPrefetch = maxPrefetch;
        this.tunesPrefetch = tunesPrefetch;
        java.util.Arrays.fill(backoff, FIRST_BACKOFF);
    }

    int workers() {
        return workers;
    }

    int prefetch() {
        return prefetch;
    }

    /** The changes made so far, oldest first, each with its reason (at most the last 64). */
    synchronized List<String> history() {
        return List.copyOf(history);
    }

    /** A new pass starts: its counters start from zero, so the next interval starts afresh. */
    void restart() {
        start = -1;
    }

    /** Whether an interval ends at {@code now} with {@code batches} delivered: call {@link #observe} then. */
    boolean due(long now, long batches) {
        if (start < 0) {
            return true;
        }
        long dt = now - start;
        long n = batches - batches0;
        return decided ? n > 0 && dt >= INTERVAL_NANOS && (n >= MIN_BATCHES || dt >= LONGEST_INTERVAL_NANOS)
                : n >= 2 && dt >= FIRST_INTERVAL_NANOS;
    }

    /**
     * Called when {@link #due} with the loader's running totals: batches delivered, consumer wait,
     * worker busy time and worker time blocked at the window's end (the last two of this pass).
     * True when the workers or the prefetch depth changed.
     */
    boolean observe(long now, long batches, long waitNanos, long busyNanos, long blockedNanos) {
        if (created < 0) {
            created = now;
        }
        if (start < 0) {
            mark(now, batches, waitNanos, busyNanos, blockedNanos);
            return false;
        }
        long dt = now - start;
        long n = batches - batches0;
        double rate = n / (dt / 1e9);
        double wait = Math.min(1, (waitNanos - wait0) / (double) dt);
        double busy = busyNanos - busy0;
        double blocked = (blockedNanos - blocked0) / ((double) dt * workers);
        double perBatch = busy / n;
        double consumerPerBatch = Math.max(0, dt - (waitNanos - wait0)) / (double) n;
        mark(now, batches, waitNanos, busyNanos, blockedNanos);
        return decide(now, rate, wait, busy / dt, blocked, perBatch, consumerPerBatch);
    }

    /**
     * One interval's decision: {@code rate} batches/s, {@code wait} the consumer's waiting share,
     * {@code busyCores} worker busy time per second, {@code blocked} the share of active worker
     * time blocked at the window's end, and the worker and consumer nanoseconds per batch.
     */
    boolean decide(long now, double rate, double wait, double busyCores, double blocked, double workerPerBatch,
                   double consumerPerBatch) {
        double before = lastRate;
        previousRate = decided ? before : -1;
        lastRate = rate;
        decided = true;
        if (settling) {
            settling = false;
            return false;
        }
        if (trial != null) {
            judgedSum += rate;
            if (++judged < JUDGED_INTERVALS) {
                return false;
            }
            return judge(now, judgedSum / judged, wait);
        }
        for (int i = 0; i < blockedFor.length; i++) {
            blockedFor[i] = Math.max(0, blockedFor[i] - 1);
        }
        String measured = String.format(Locale.ROOT, "consumer waited %.0f%%, a batch takes %s of worker time and %s "
                + "of the consumer's", 100 * wait, ms(workerPerBatch), ms(consumerPerBatch));
        if (wait > WAIT_HIGH) {
            calm = 0;
            boolean canDeepen = tunesPrefetch && prefetch < maxPrefetch && blockedFor[Kind.DEEPER.ordinal()] == 0;
            if (canDeepen && blocked > 0.2) {
                return start(now, Kind.DEEPER, workers, Math.min(maxPrefetch, 2 * prefetch), rate,
                        measured + String.format(Locale.ROOT, ", workers blocked at the window's end %.0f%% of the time",
                                100 * Math.min(1, blocked)));
            }
            if (tunesWorkers && workers < maxWorkers && blockedFor[Kind.MORE_WORKERS.ordinal()] == 0) {
                int need = consumerPerBatch < 1 ? maxWorkers
                        : (int) Math.min(maxWorkers, Math.ceil(1.1 * workerPerBatch / consumerPerBatch));
                // the model may jump as far as the cores; beyond them, one worker at a time, each on trial
                int k = Math.max(workers + 1, Math.min(Math.min(maxWorkers, cores), need));
                int p = tunesPrefetch ? Math.max(prefetch, Math.min(maxPrefetch, 2 * k)) : prefetch;
                return start(now, Kind.MORE_WORKERS, k, p, rate, measured);
            }
            if (canDeepen && blocked > 0.05) {
                return start(now, Kind.DEEPER, workers, Math.min(maxPrefetch, 2 * prefetch), rate,
                        measured + String.format(Locale.ROOT, ", workers blocked at the window's end %.0f%% of the time",
                                100 * Math.min(1, blocked)));
            }
            return false; // busy workers and no worker to add: a deeper window would not help
        }
        if (wait < WAIT_LOW) {
            calm++;
            if (tunesWorkers && calm >= 3 && workers > 1 && blockedFor[Kind.FEWER_WORKERS.ordinal()] == 0
                    && busyCores < 0.7 * (workers - 1)) {
                calm = 0;
                return start(now, Kind.FEWER_WORKERS, workers - 1, prefetch, rate,
                        String.format(Locale.ROOT, "consumer waited %.1f%%, workers busy %.2f cores of %d", 100 * wait,
                                busyCores, workers));
            }
        } else {
            calm = 0;
        }
        return false;
    }

    private boolean judge(long now, double rate, double wait) {
        Kind k = trial;
        trial = null;
        boolean keep = k == Kind.FEWER_WORKERS
                ? rate * GAIN >= trialBaseRate && wait <= WAIT_HIGH
                : rate >= trialBaseRate * GAIN;
        if (keep) {
            backoff[k.ordinal()] = FIRST_BACKOFF;
            return false;
        }
        int i = k.ordinal();
        blockedFor[i] = backoff[i];
        backoff[i] = Math.min(LONGEST_BACKOFF, 2 * backoff[i]);
        String why = String.format(Locale.ROOT, "%.0f batches/s against %.0f before", rate, trialBaseRate);
        apply(now, trialFromWorkers, trialFromPrefetch, "undone: " + why);
        settling = true;
        return true;
    }

    private boolean start(long now, Kind kind, int w, int p, double rate, String why) {
        trial = kind;
        trialFromWorkers = workers;
        trialFromPrefetch = prefetch;
        trialBaseRate = previousRate > 0 ? (rate + previousRate) / 2 : rate;
        judged = 0;
        judgedSum = 0;
        settling = true;
        apply(now, w, p, why);
        return true;
    }

    private void apply(long now, int w, int p, String why) {
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "%.2f s:", (now - created) / 1e9));
        if (w != workers) {
            s.append(" workers ").append(workers).append(" -> ").append(w);
        }
        if (p != prefetch) {
            s.append(" prefetch ").append(prefetch).append(" -> ").append(p);
        }
        s.append(" (").append(why).append(')');
        synchronized (this) {
            if (history.size() == MAX_HISTORY) {
                history.remove(0);
            }
            history.add(s.toString());
        }
        workers = w;
        prefetch = p;
    }

    private void mark(long now, long batches, long wait, long busy, long blocked) {
        start = now;
        batches0 = batches;
        wait0 = wait;
        busy0 = busy;
        blocked0 = blocked;
    }

    private static String ms(double nanos) {
        return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
    }
}
