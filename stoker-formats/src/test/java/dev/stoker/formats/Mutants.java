package dev.stoker.formats;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.stoker.LoaderException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * Damaged copies of a good file, each read by a format's reader, which must read it or fail with
 * an {@link IOException} (the documented kind: it names the file and where): never another
 * exception, never an OutOfMemoryError, never a hang. For the mutation fuzz tests of every format
 * module.
 */
public final class Mutants {
    private Mutants() {
    }

    /** Reads a damaged file completely with the format's reader. */
    public interface Reader {
        void readAll(Path p) throws IOException;
    }

    /** {@code n} mutants of {@code good}, written under {@code tmp} and each read by {@code reader}; returns how many were refused. */
    public static int fuzz(Path tmp, String what, byte[] good, String suffix, int n, Reader reader) throws IOException {
        SplittableRandom r = new SplittableRandom(what.hashCode());
        int refused = 0;
        for (int i = 0; i < n; i++) {
            byte[] b = mutate(good, r);
            Path p = tmp.resolve(what + "-" + i + suffix);
            Files.write(p, b);
            try {
                reader.readAll(p);
            } catch (IOException e) {
                refused++;
                assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), what + " mutant " + i + ": an error without words");
            } catch (LoaderException e) {
                refused++;
                assertTrue(e.getCause() instanceof IOException, what + " mutant " + i + ": " + e);
            } catch (RuntimeException | OutOfMemoryError | StackOverflowError e) {
                fail(what + " mutant " + i + " (" + describe(good, b) + "): " + e, e);
            } finally {
                Files.deleteIfExists(p);
            }
        }
        // the mutants are damaged enough to be refused often: a fuzz that only ever reads good files tests nothing
        assertTrue(refused > n / 10, what + ": only " + refused + " of " + n + " mutants refused");
        return refused;
    }

    /**
     * {@code n} mutants of {@code good} written over {@code target} (a file, or one file of a folder
     * the reader reads whole), each read by {@code reader}; a refusal must be one line of the
     * documented kind naming {@code target}'s file (NOTE [Codec errors] in Compression).
     * {@code target} holds {@code good} again afterwards. Returns how many were refused.
     */
    public static int fuzzNaming(String what, byte[] good, Path target, int n, Reader reader) throws IOException {
        SplittableRandom r = new SplittableRandom(what.hashCode());
        String file = target.getFileName().toString();
        int refused = 0;
        try {
            for (int i = 0; i < n; i++) {
                byte[] b = mutate(good, r);
                Files.write(target, b);
                try {
                    reader.readAll(target);
                } catch (IOException e) {
                    refused++;
                    String m = e.getMessage();
                    assertTrue(m != null && m.contains(file) && !m.contains("\n"), what + " mutant " + i + " ("
                            + describe(good, b) + "): an error that does not name " + file + " in one line: " + e);
                } catch (RuntimeException | OutOfMemoryError | StackOverflowError e) {
                    fail(what + " mutant " + i + " (" + describe(good, b) + "): " + e, e);
                }
            }
        } finally {
            Files.write(target, good);
        }
        assertTrue(refused > n / 10, what + ": only " + refused + " of " + n + " mutants refused");
        return refused;
    }

    private static String describe(byte[] good, byte[] b) {
        if (b.length != good.length) {
            return "cut to " + b.length + " of " + good.length + " bytes";
        }
        for (int i = 0; i < b.length; i++) {
            if (b[i] != good[i]) {
                return "first change at byte " + i;
            }
        }
        return "unchanged";
    }

    /**
     * A truncation, a few bit flips, a run of bytes zeroed (a hole a crash left), or a 4- or 8-byte
     * field overwritten with an extreme value (a size or count that lies).
     */
    public static byte[] mutate(byte[] good, SplittableRandom r) {
        byte[] b = good.clone();
        switch (r.nextInt(5)) {
            case 0 -> {
                return java.util.Arrays.copyOf(b, r.nextInt(b.length));
            }
            case 4 -> {
                int at = r.nextInt(b.length);
                java.util.Arrays.fill(b, at, Math.min(b.length, at + 1 + r.nextInt(4096)), (byte) 0);
            }
            case 1 -> {
                for (int k = 1 + r.nextInt(4); k > 0; k--) {
                    int at = r.nextInt(b.length);
                    b[at] ^= (byte) (1 << r.nextInt(8));
                }
            }
            default -> {
                // in the first kilobyte, where headers, lengths and offsets live
                int width = r.nextBoolean() ? 4 : 8;
                int at = r.nextInt(Math.max(1, Math.min(b.length, 1024) - width));
                long[] extremes = {0, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 40, 7};
                long v = extremes[r.nextInt(extremes.length)];
                for (int k = 0; k < width && at + k < b.length; k++) {
                    b[at + k] = (byte) (v >>> (8 * k));
                }
            }
        }
        return b;
    }
}
