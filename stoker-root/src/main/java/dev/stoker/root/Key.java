package dev.stoker.root;

/**
 * One entry of a ROOT directory: an object named {@code name}, of class {@code className}, stored
 * at {@code seekKey} as a key header of {@code keylen} bytes followed by its payload, {@code nbytes}
 * in all, whose uncompressed length is {@code objlen}. Of several cycles of one name a directory
 * lists the highest.
 */
public record Key(String name, int cycle, String className, String title, long seekKey, int nbytes, int objlen, int keylen) {
    /** {@code name;cycle (className) at byte seekKey}, as errors name a key. */
    @Override
    public String toString() {
        return "key '" + name + ";" + cycle + "' (" + className + ") at byte " + seekKey;
    }
}
