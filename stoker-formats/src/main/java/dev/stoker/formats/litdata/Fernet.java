package dev.stoker.formats.litdata;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Fernet tokens, as LitData's {@code FernetEncryption} writes them: base64url of {@code 0x80, u64
 * timestamp, IV, AES-128-CBC ciphertext, HMAC-SHA256}; the key derived from a password and a salt
 * by PBKDF2-HMAC-SHA256 (480,000 rounds, 32 bytes: the first half signs, the second encrypts).
 * The password is never kept in a message.
 */
final class Fernet {
    private static final int ROUNDS = 480_000;
    private final SecretKeySpec sign;
    private final SecretKeySpec encrypt;

    Fernet(char[] password, byte[] salt) throws GeneralSecurityException {
        byte[] key = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256")
                .generateSecret(new PBEKeySpec(password, salt, ROUNDS, 256)).getEncoded();
        sign = new SecretKeySpec(Arrays.copyOfRange(key, 0, 16), "HmacSHA256");
        encrypt = new SecretKeySpec(Arrays.copyOfRange(key, 16, 32), "AES");
        Arrays.fill(key, (byte) 0);
    }

    /** The plain bytes of a token; IllegalArgumentException when it is not one, or not this key's. */
    byte[] decrypt(byte[] token) {
        byte[] t;
        try {
            t = Base64.getUrlDecoder().decode(new String(token, StandardCharsets.US_ASCII).trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a Fernet token (not base64url)");
        }
        if (t.length < 1 + 8 + 16 + 16 + 32 || t[0] != (byte) 0x80 || (t.length - 57) % 16 != 0) {
            throw new IllegalArgumentException("not a Fernet token (" + t.length + " bytes)");
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(sign);
            mac.update(t, 0, t.length - 32);
            if (!MessageDigest.isEqual(mac.doFinal(), Arrays.copyOfRange(t, t.length - 32, t.length))) {
                throw new IllegalArgumentException("its signature does not match: a wrong password, or a corrupt token");
            }
            Cipher c = Cipher.getInstance("AES/CBC/PKCS5Padding");
            c.init(Cipher.DECRYPT_MODE, encrypt, new IvParameterSpec(t, 9, 16));
            return c.doFinal(t, 25, t.length - 25 - 32);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot be decrypted: " + e.getMessage());
        }
    }
}
