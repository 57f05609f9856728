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
        if (b.plan instanceof Plan.Streamed) {
            LoaderState.Streamed p = s.streamed();
            checkData(s, dataFingerprint);
            if (s.rank() != b.rank) {
                throw new ResumeException("cannot resume: the state is rank " + s.rank() + "'s and this is rank " + b.rank
                        + "; ranks of a streaming dataset progress independently, so each rank resumes its own state");
            }
            if (!sameSplit) {
                throw new ResumeException("cannot resume: a streaming dataset resumes with the world size it was "
                        + "saved with (" + s.worldSize() + "); elastic resume needs a random-access dataset");
            }
            if (p.shards() < 0 || p.samples() < 0 || p.blockEmitted() < 0 || p.shards() > length) {
                throw new ResumeException("cannot resume: the state's position (shard " + p.shards()
                        + ") lies past the end of an epoch of " + length);
            }
            return p;
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
        if (sameSplit) {
            return p;
        }
        // NOTE [Elastic]: every rank of the old run consumed the prefix of its split; the
        // new world splits what is left of the epoch afresh.
        long remaining = length - p.segmentStart();
        long consumed = Math.min(remaining, Math.multiplyExact(p.rankOffset(), (long) s.worldSize()));
        return new LoaderState.Indexed(p.segmentStart() + consumed, 0, new long[0]);
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
