package dev.stoker.storage.io;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Stoker's folders in the user's cache (tar and line indexes, kept images, kept windows), and
 * the check that a folder Stoker writes to and later trusts is the user's own.
 */
public final class UserCache {
    private UserCache() {
    }

    /**
     * Stoker's folder {@code part} in the user's cache: {@code $XDG_CACHE_HOME/stoker/PART},
     * by default {@code ~/.cache/stoker/PART} (tar and line indexes, kept images, kept windows).
     */
    public static Path dir(String part) {
        return Path.of(System.getenv().getOrDefault("XDG_CACHE_HOME", System.getProperty("user.home") + "/.cache"),
                "stoker", part);
    }

    /**
     * {@code dir}, created {@code 0700} if it does not exist, checked to be a folder of the user's
     * own that no other user can write: for what Stoker writes and later trusts (NOTE [Folders of
     * one's own] in Folders). Another user's, or a shared one, is refused in one line.
     */
    public static Path ownFolder(Path dir) throws IOException {
        return Folders.own(dir);
    }
}
