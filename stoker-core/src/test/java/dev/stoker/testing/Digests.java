package dev.stoker.testing;

import dev.stoker.Batch;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 digests of what loaders deliver, as the tests compare them. */
public final class Digests {
    private Digests() {
    }

    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    /** A batch's digest ({@link Batch#digest}), in hex: what {@code stoker bench --digests} prints. */
    public static String of(Batch b) {
        MessageDigest md = sha256();
        b.digest(md);
        return HexFormat.of().formatHex(md.digest());
    }
}
