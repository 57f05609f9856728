package dev.stoker.storage.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.storage.ShardCache;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NOTE [Folders of one's own]: a cache is kept only in a folder its user owns and no other user can write. */
class FoldersTest {
    @TempDir
    Path tmp;

    static boolean root() {
        return "root".equals(System.getProperty("user.name"));
    }

    static void giveToNobody(Path p) throws IOException {
        Files.setOwner(p, p.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
    }

    @Test
    void aCacheFolderAnotherUserOwnsIsRefusedNamingItsOwner() throws IOException {
        Assumptions.assumeTrue(root(), "needs root, to give a folder to another user");
        Path planted = Files.createDirectories(tmp.resolve("stoker-shard-cache"));
        giveToNobody(planted);
        IOException e = assertThrows(IOException.class, () -> new ShardCache(planted, 1 << 20, 1));
        assertTrue(e.getMessage().startsWith(planted + ": is owned by user nobody"), e.getMessage());
        assertEquals(1, e.getMessage().lines().count());
    }

    @Test
    void aCacheFolderOtherUsersCanWriteIsRefused() throws IOException {
        Path shared = Files.createDirectories(tmp.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
        IOException e = assertThrows(IOException.class, () -> new ShardCache(shared, 1 << 20, 1));
        assertTrue(e.getMessage().startsWith(shared + ": can be written by other users (mode 777; chmod go-w it)"), e.getMessage());
    }

    @Test
    void aNewCacheFolderIsMadeForItsUserAlone() throws IOException {
        Path dir = tmp.resolve("a/b/cache");
        new ShardCache(dir, 1 << 20, 1).close();
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
    }
}
