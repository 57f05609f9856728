package dev.stoker.storage.io;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * NOTE [Folders of one's own]: what Stoker keeps and trusts later (cached copies, their versions,
 * locks, copies in memory) lives in folders that the user running it owns and no other user can
 * write: a folder another user owns, or one its group or others can write, could hold any bytes
 * under a cached shard's name (and the version that makes it look current). Such a folder is
 * refused with one line saying whose it is; a folder Stoker creates is created {@code 0700}. In a
 * folder shared by every user ({@code /dev/shm}, {@code /tmp}), only entries this user owns are
 * read, none is followed through a link, and new names are created exclusively, so another user's
 * entries can neither be taken for Stoker's nor make it fail.
 */
final class Folders {
    private Folders() {
    }

    private static final long UID = uid();

    /** This process's user id: the owner of its {@code /proc} entry, or of a file it creates; -1 where files have none. */
    private static long uid() {
        try {
            Path proc = Path.of("/proc/self");
            if (Files.isDirectory(proc)) {
                return owner(proc);
            }
            Path probe = Files.createTempFile("stoker-uid-", "");
            try {
                return owner(probe);
            } finally {
                Files.deleteIfExists(probe);
            }
        } catch (IOException | RuntimeException e) {
            return -1; // no Unix owners: ownership is not checked
        }
    }

    /**
     * {@code dir}, created {@code 0700} (with its parents) if it does not exist, and checked to be
     * a folder of this user's that no other user can write (NOTE [Folders of one's own]).
     *
     * @throws IOException one line naming the folder and whose it is, when it is not one's own
     */
    static Path own(Path dir) throws IOException {
        Path d = dir.toAbsolutePath().normalize();
        if (!Files.exists(d, LinkOption.NOFOLLOW_LINKS)) {
            if (d.getParent() != null) {
                Files.createDirectories(d.getParent());
            }
            try {
                Files.createDirectory(d, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (FileAlreadyExistsException e) {
                // created meanwhile by another process: checked below like any folder found
            } catch (UnsupportedOperationException e) {
                Files.createDirectory(d);
            }
        }
        check(d);
        return d;
    }

    /** Throws unless {@code d} (and the link, when it is one) is this user's folder, writable by no other user. */
    static void check(Path d) throws IOException {
        if (UID < 0) {
            return;
        }
        if (Files.isSymbolicLink(d) && owner(d, LinkOption.NOFOLLOW_LINKS) != UID) {
            throw refused(d, "is a link of user " + Files.getOwner(d, LinkOption.NOFOLLOW_LINKS).getName());
        }
        if (!Files.isDirectory(d)) {
            throw new IOException(d + ": not a folder");
        }
        if (owner(d) != UID) {
            throw refused(d, "is owned by user " + Files.getOwner(d).getName() + ", not by this process's user (uid "
                    + UID + ")");
        }
        int mode = (Integer) Files.getAttribute(d, "unix:mode");
        if ((mode & 0022) != 0) {
            throw refused(d, "can be written by other users (mode " + Integer.toOctalString(mode & 0777) + "; chmod go-w it)");
        }
    }

    private static IOException refused(Path d, String why) {
        return new IOException(d + ": " + why + ": not used (another user could put any bytes there); name a folder of "
                + "your own that only you can write");
    }

    private static long owner(Path p, LinkOption... options) throws IOException {
        return ((Number) Files.getAttribute(p, "unix:uid", options)).longValue();
    }

    /** Whether {@code p} itself (not what a link points at) is owned by this process's user. */
    static boolean ours(Path p) {
        if (UID < 0) {
            return true;
        }
        try {
            return owner(p, LinkOption.NOFOLLOW_LINKS) == UID;
        } catch (IOException | RuntimeException e) {
            return false; // gone meanwhile, or unreadable: not taken for ours
        }
    }

    /**
     * Deletes {@code p} and everything under it, never following a link (a link is deleted, not
     * what it points at); what cannot be deleted, or vanishes meanwhile, is left. True if it is gone.
     */
    static boolean deleteTree(Path p) {
        try {
            Files.walkFileTree(p, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path f, BasicFileAttributes a) {
                    delete(f);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path f, IOException e) {
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) {
                    delete(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException | RuntimeException e) {
            // left for the next sweep
        }
        return !Files.exists(p, LinkOption.NOFOLLOW_LINKS);
    }

    private static void delete(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            // left for the next sweep
        }
    }
}
