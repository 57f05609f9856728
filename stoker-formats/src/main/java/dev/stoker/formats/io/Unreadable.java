package dev.stoker.formats.io;

import dev.stoker.CorruptShardException;
import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Shards (files, chunks) that cannot be read, decided in one place for every format.
 *
 * <p>NOTE [Unreadable shards]: under a skip policy ({@code ErrorPolicy} other than {@code FAIL})
 * a dataset opens past a shard whose bytes are bad: malformed (a {@link CorruptShardException})
 * or cut short (an {@link EOFException}). The shard is left out of the dataset, and counted once
 * ({@link dev.stoker.Dataset#shardsLeftOut()}, which the loader reports as skipped shards). Any
 * other failure (a missing file, an I/O error, a bug) stops the opening, as bad data does under
 * {@code FAIL}: the first in shard order, as one thread reading them in turn would meet it. A
 * dataset left with no shard at all is an error either way.
 */
public final class Unreadable {
    private Unreadable() {
    }

    /** Opens shard {@code i}. */
    @FunctionalInterface
    public interface Opener<T> {
        T open(int shard) throws IOException;
    }

    /** Whether a shard's failure is bad data, which a skip policy leaves the shard out for. */
    public static boolean badData(Throwable e) {
        return e instanceof CorruptShardException || e instanceof EOFException;
    }

    /** The error of a dataset whose every shard ({@code n}) was left out: the first one's failure named. */
    public static IOException noneLeft(int n, Throwable first) {
        return new IOException("every shard is unreadable (" + n + "); the first: " + first.getMessage(), first);
    }

    /** Checks shard {@code i}: reads it, or enough of it to know it can be read. */
    @FunctionalInterface
    public interface Check {
        void check(int shard) throws IOException;
    }

    /**
     * The shards among {@code 0..n-1} that {@code check} passes, in order (NOTE [Unreadable
     * shards]): with {@code skip}, one whose bytes are bad is left out; otherwise, or for any
     * other failure, the failure is thrown.
     */
    public static int[] kept(int n, boolean skip, Check check) throws IOException {
        int[] kept = new int[n];
        int k = 0;
        Throwable first = null;
        for (int i = 0; i < n; i++) {
            try {
                check.check(i);
                kept[k++] = i;
            } catch (IOException | RuntimeException e) {
                if (!skip || !badData(e)) {
                    throw e;
                }
                first = first == null ? e : first;
            }
        }
        if (k == 0 && first != null) {
            throw noneLeft(n, first);
        }
        return java.util.Arrays.copyOf(kept, k);
    }

    /**
     * Shards {@code 0..n-1}, each opened by {@code opener} in turn and kept as {@link #kept} keeps
     * them: the shards that opened, in order; those are closed again when this throws.
     */
    public static <T extends AutoCloseable> List<T> open(int n, boolean skip, Opener<T> opener) throws IOException {
        List<T> opened = new ArrayList<>();
        try {
            kept(n, skip, i -> opened.add(opener.open(i)));
            return opened;
        } catch (IOException | RuntimeException e) {
            for (T t : opened) {
                try {
                    t.close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }
}
