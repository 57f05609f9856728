package dev.stoker;

/** Time spent in each stage of loading a sample, in nanoseconds: running totals of one thread. */
final class StageTimes {
    long fetch;
    long transform;
    long collate;

    void add(StageTimes t) {
        fetch += t.fetch;
        transform += t.transform;
        collate += t.collate;
    }

    void clear() {
        fetch = 0;
        transform = 0;
        collate = 0;
    }
}
