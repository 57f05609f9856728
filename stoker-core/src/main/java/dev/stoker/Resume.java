package dev.stoker;

/**
 * Where a resumed loader starts: the state's position, checked against the loader it is resumed
 * into (sampler, epoch length, seed, rank and world size, batch size, the data's fingerprint).
 * Every refusal is a {@link ResumeException} saying what differs.
 */
final class Resume {
    private Resume() {
    }

    /** The position a resumed loader starts from: the state's, checked against this loader's options. */
    static LoaderState.Position position(LoaderState s, LoaderBuilder b, Sampler sampler, long length, long dataFingerprint) {
        if (!s.sampler().equals(sampler.id())) {
            throw new ResumeException("cannot resume: the state was saved with sampler " + s.sampler()
                    + ", this loader uses " + sampler.id());
        }
        if (s.size() != length) {
            throw new ResumeException("cannot resume: the state's epoch has " + s.size()
                    + " positions, this loader's has " + length + " (a different dataset?)");
        }
        if (b.setBy.containsKey("seed") && b.seed != s.seed()) {
            throw new ResumeException("cannot resume: seed " + b.seed + " was set, the state has seed " + s.seed());
        }
        boolean sameSplit = s.worldSize() == b.worldSize;
        if (b.plan instanceof Plan.Streamed streamed) {
            LoaderState.Streams p = s.streams(b.tail);
            checkData(s, dataFingerprint);
            LoaderState.Streams own = streams(p, b, length);
            checkShards(own, streamed.stream().dataset, sampler.order(length, s.seed(), s.epoch()), length);
            return own;
        }
        LoaderState.Indexed p = s.indexed();
        checkData(s, dataFingerprint);
        long[] done = p.done();
        if (Checks.product(p.rankOffset(), s.worldSize()) > length - p.segmentStart() + (long) s.worldSize() * s.batchSize()) {
            throw new ResumeException("cannot resume: the state's position (" + p.rankOffset() + " samples a rank from "
                    + p.segmentStart() + ") lies past the end of an epoch of " + length);
        }
        if (p.segmentStart() < 0 || p.segmentStart() > length || p.rankOffset() < 0 || s.worldSize() < 1) {
            throw new ResumeException("cannot resume: inconsistent state " + s.toJson());
        }
        if (done.length > 0 && (!sameSplit || s.batchSize() != b.batchSize)) {
            throw new ResumeException("cannot resume: the state holds batches an unordered loader delivered "
                    + "ahead of others; resume it with the same world size and batch size");
        }
        if (done.length > 0 && s.rank() != b.rank) {
            throw new ResumeException("cannot resume: the state is rank " + s.rank() + "'s and this is rank " + b.rank
                    + "; an unordered loader's out-of-order batches are per rank, so each rank resumes its own state");
        }
        if (!s.allRanks() && !p.equals(LoaderState.Indexed.START) && (!sameSplit || s.rank() != b.rank)) {
            throw new ResumeException("cannot resume: the state is rank " + s.rank() + "'s of " + s.worldSize() + " ranks,"
                    + " and holds nothing of where " + others(s.rank(), s.worldSize()) + " stood (ranks stopped apart would"
                    + " lose or repeat samples), but this is rank " + b.rank + " of " + b.worldSize + "; resume rank "
                    + s.rank() + " of " + s.worldSize() + " from it, or any rank at any world size from every old rank's"
                    + " state merged (LoaderState.merge; load_state_dict with the list of their state_dicts; --resume"
                    + " once per file)");
        }
        if (sameSplit) {
            return p;
        }
        // NOTE [Elastic]: every rank of the old run consumed the prefix of its split (the
        // merge of every rank's state says so: ranks in lockstep); the new world splits what is
        // left of the epoch afresh.
        long remaining = length - p.segmentStart();
        long consumed = Math.min(remaining, Math.multiplyExact(p.rankOffset(), (long) s.worldSize()));
        return new LoaderState.Indexed(p.segmentStart() + consumed, 0, new long[0]);
    }

    /**
     * NOTE [Elastic streams]: a stream is the unit of a streaming dataset's state, so a run of
     * any world size up to the streams' count resumes a state that holds the position of every
     * stream its rank now reads ({@code c = rank, rank + W, ...}): its own state at the same
     * world size, or the merge of every old rank's at another.
     */
    private static LoaderState.Streams streams(LoaderState.Streams p, LoaderBuilder b, long length) {
        if (b.setBy.containsKey("streams") && b.streams != p.count()) {
            throw new ResumeException("cannot resume: " + b.setBy.get("streams") + " was set, the state's epoch is split"
                    + " into " + p.count() + " streams; a job keeps its streams (leave streams unset to take the state's)");
        }
        if (p.count() < b.worldSize) {
            throw new ResumeException("cannot resume: the state's epoch is split into " + p.count() + " streams, fewer"
                    + " than this run's " + b.worldSize + " ranks; a job that may grow sets streams(n) (--streams N) when"
                    + " it starts");
        }
        java.util.List<Integer> missing = new java.util.ArrayList<>();
        java.util.List<Integer> reads = new java.util.ArrayList<>();
        for (int c = b.rank; c < p.count(); c += b.worldSize) {
            reads.add(c);
            LoaderState.Streamed at = p.at().get(c);
            if (at == null) {
                missing.add(c);
                continue;
            }
            if (at.shards() > length) { // (a merge marks a finished rank's streams done with the epoch's length)
                throw new ResumeException("cannot resume: the state's stream " + c + " is at shard " + at.shards()
                        + ", past the end of an epoch of " + length + " shards");
            }
        }
        if (!missing.isEmpty()) {
            throw new ResumeException("cannot resume: rank " + b.rank + " of " + b.worldSize + " reads streams " + reads
                    + " of " + p.count() + ", and the state holds " + (p.at().isEmpty() ? "none" : "only " + p.at().keySet())
                    + " (not " + missing + "); resume a rank from its own state at the same world size, or every rank from the merge of all"
                    + " the old ranks' states (LoaderState.merge; load_state_dict with the list of their state_dicts; --resume once per file)");
        }
        return p.of(b.rank, b.worldSize); // this rank's streams: a state it gives before its first batch holds no others
    }

    /**
     * NOTE [Shard check]: a stream's state inside a shard says how many of the shard's samples
     * were delivered, and resuming skips that many. A stream's fingerprint covers its shards'
     * names only (a stream may start from object storage, and resumes on a staged copy), so a
     * shard rewritten under its name would have other samples skipped, silently. A state taken
     * inside a shard therefore keeps a check of that shard's content (its ends), and a loader
     * resuming there compares it before it skips anything; shards resumed at their start need none.
     */
    private static void checkShards(LoaderState.Streams own, StreamingDataset<?> data, Order order, long length) {
        for (var e : own.at().entrySet()) {
            LoaderState.Streamed at = e.getValue();
            Partition p = new Partition(0, length, own.count(), e.getKey(), own.tail());
            if (at.shardCheck() == 0 || !at.insideShard() || at.shards() >= p.length()) {
                continue;
            }
            int shard = (int) order.index(p.position(at.shards()));
            String name = data.shardName(shard);
            long now;
            try {
                now = data.shardCheck(shard);
            } catch (java.io.IOException x) {
                throw new ResumeException("cannot resume: reading " + name + " to check it is the shard the state was"
                        + " saved in: " + Pass.describe(x, name));
            }
            if (now != 0 && now != at.shardCheck()) {
                throw new ResumeException("cannot resume: " + name + " is not the shard the state was saved in (its content"
                        + " differs: check " + Long.toHexString(now) + ", the state's " + Long.toHexString(at.shardCheck())
                        + "), so skipping the " + at.samples() + " samples the state delivered from it would skip others;"
                        + " the shard was rewritten under its name since, or the state is another dataset's");
            }
        }
    }

    /** The ranks of {@code worldSize} but {@code rank}, in words. */
    private static String others(int rank, int worldSize) {
        if (worldSize == 2) {
            return "rank " + (1 - rank);
        }
        if (worldSize > 9) {
            return "the other " + (worldSize - 1) + " ranks";
        }
        java.util.List<Integer> others = new java.util.ArrayList<>();
        for (int r = 0; r < worldSize; r++) {
            if (r != rank) {
                others.add(r);
            }
        }
        return "ranks " + others;
    }

    /** The state was saved from this dataset, as far as fingerprints tell (after its kind of position was checked). */
    private static void checkData(LoaderState s, long dataFingerprint) {
        if (s.data() == 0 && dataFingerprint != 0) {
            throw new ResumeException("cannot resume: the state holds no data fingerprint, so nothing shows it was saved"
                    + " from this dataset (fingerprint " + Long.toHexString(dataFingerprint) + "); every state Stoker saves"
                    + " over a dataset with a fingerprint holds one (an edited state, or one of an older Stoker?)");
        }
        if (s.data() != 0 && dataFingerprint != 0 && s.data() != dataFingerprint) {
            throw new ResumeException("cannot resume: the state was saved from other data (fingerprint "
                    + Long.toHexString(s.data()) + ", this dataset's " + Long.toHexString(dataFingerprint)
                    + "): the same number of samples, other content");
        }
    }
}
