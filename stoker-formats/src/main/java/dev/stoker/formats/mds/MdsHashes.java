package dev.stoker.formats.mds;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import net.jpountz.xxhash.StreamingXXHash32;
import net.jpountz.xxhash.StreamingXXHash64;
import net.jpountz.xxhash.XXHashFactory;

/** The hashes an MDS index gives a shard, by streaming's names (hashlib's, and xxhash's 32 and 64). */
final class MdsHashes {
    private static final int CHUNK = 1 << 20;

    private MdsHashes() {
    }

    /** The hex digest of {@code data} by algorithm {@code name}, or null when Stoker cannot compute it. */
    static String of(String name, MemorySegment data) {
        String n = name.toLowerCase(Locale.ROOT);
        switch (n) {
            case "xxh32" -> {
                StreamingXXHash32 h = XXHashFactory.fastestInstance().newStreamingHash32(0);
                each(data, (b, off, len) -> h.update(b, off, len));
                return String.format("%08x", h.getValue());
            }
            case "xxh64" -> {
                StreamingXXHash64 h = XXHashFactory.fastestInstance().newStreamingHash64(0);
                each(data, (b, off, len) -> h.update(b, off, len));
                return String.format("%016x", h.getValue());
            }
            default -> {
                String jdk = switch (n) {
                    case "md5" -> "MD5";
                    case "sha1" -> "SHA-1";
                    case "sha224" -> "SHA-224";
                    case "sha256" -> "SHA-256";
                    case "sha384" -> "SHA-384";
                    case "sha512" -> "SHA-512";
                    case "sha3_224" -> "SHA3-224";
                    case "sha3_256" -> "SHA3-256";
                    case "sha3_384" -> "SHA3-384";
                    case "sha3_512" -> "SHA3-512";
                    default -> null;
                };
                if (jdk == null) {
                    return null;
                }
                try {
                    MessageDigest d = MessageDigest.getInstance(jdk);
                    for (long at = 0; at < data.byteSize(); at += CHUNK) {
                        ByteBuffer part = data.asSlice(at, Math.min(CHUNK, data.byteSize() - at)).asByteBuffer();
                        d.update(part);
                    }
                    return HexFormat.of().formatHex(d.digest());
                } catch (NoSuchAlgorithmException e) {
                    return null;
                }
            }
        }
    }

    private interface Update {
        void update(byte[] b, int off, int len);
    }

    private static void each(MemorySegment data, Update u) {
        byte[] buf = new byte[(int) Math.min(CHUNK, data.byteSize())];
        for (long at = 0; at < data.byteSize(); at += CHUNK) {
            int len = (int) Math.min(CHUNK, data.byteSize() - at);
            MemorySegment.copy(data, java.lang.foreign.ValueLayout.JAVA_BYTE, at, buf, 0, len);
            u.update(buf, 0, len);
        }
    }
}
