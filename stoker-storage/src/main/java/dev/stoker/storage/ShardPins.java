package dev.stoker.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

/**
 * This process's pins: one channel and one shared lock per pin file, counted, so that no
 * second descriptor of a pinned file is ever closed (that would drop the lock).
 */
final class ShardPins {
    private ShardPins() {
    }

    private record Pin(FileChannel channel, FileLock lock, int[] count) {
    }

    private static final Map<Path, Pin> TABLE = new HashMap<>();

    /** Pins {@code shard} through {@code pinFile} if the shard exists. */
    static synchronized boolean pin(Path pinFile, Path shard) throws IOException {
        Pin p = TABLE.get(pinFile);
        if (p != null) {
            p.count[0]++;
            return true;
        }
        if (!Files.exists(shard)) {
            return false; // not cached: no pin file for it (checked again once the lock is granted)
        }
        FileChannel ch = FileChannel.open(pinFile, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        try {
            FileLock lock = ch.lock(0, 1, true); // waits only while another process deletes the shard
            if (!Files.exists(shard)) {
                ch.close();
                return false;
            }
            TABLE.put(pinFile, new Pin(ch, lock, new int[] {1}));
            return true;
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    static synchronized void unpin(Path pinFile) {
        Pin p = TABLE.get(pinFile);
        if (p != null && --p.count[0] == 0) {
            TABLE.remove(pinFile);
            try {
                p.channel.close(); // releases the lock
            } catch (IOException e) {
                // the lock goes with the descriptor
            }
        }
    }

    /** Deletes {@code shard} unless some thread or process pins it; true if deleted. */
    static synchronized boolean evict(Path pinFile, Path shard) throws IOException {
        if (TABLE.containsKey(pinFile)) {
            return false;
        }
        try (FileChannel ch = FileChannel.open(pinFile, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            FileLock lock = ch.tryLock(0, 1, false);
            if (lock == null) {
                return false;
            }
            Files.deleteIfExists(shard);
            Files.deleteIfExists(shard.resolveSibling(shard.getFileName() + ".version"));
            lock.release();
            return true;
        }
    }
}
