package dev.stoker.storage;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * What a location string is, without opening it: local or remote ({@code http://},
 * {@code https://}, {@code s3://}, or a prefix a {@link Store} was mounted at), a listing or one
 * object, its last name, its local path; the globs {@link Store#list} implementations match;
 * and locations as a user reads them, secrets redacted.
 */
public final class Locations {
    private Locations() {
    }

    /** The path of a location that is not remote: a plain path or a {@code file://} URL. */
    public static Path localPath(String location) {
        return location.startsWith("file://") ? Path.of(URI.create(location)) : Path.of(location);
    }

    /** The last path component (without a query), for names and errors. */
    public static String baseName(String location) {
        String s = location;
        int q = s.indexOf('?');
        if (q >= 0) {
            s = s.substring(0, q);
        }
        return s.substring(s.lastIndexOf('/') + 1);
    }

    /** Whether the bytes are anywhere but in a local file: HTTP, S3 or a mounted store. */
    public static boolean isRemote(String location) {
        return location.startsWith("http://") || location.startsWith("https://") || location.startsWith("s3://")
                || Storage.mounted(location) != null;
    }

    /**
     * Whether a location names several objects to list (a prefix ending in / or a glob, of S3 or a
     * mounted store) rather than one.
     */
    public static boolean isListing(String location) {
        return (location.startsWith("s3://") || Storage.mounted(location) != null)
                && (location.endsWith("/") || firstWildcard(location) >= 0);
    }

    /** Where the first wildcard of a glob is ({@code *} or {@code ?}), or -1: for {@link Store#list} implementations. */
    public static int firstWildcard(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == '*' || s.charAt(i) == '?') {
                return i;
            }
        }
        return -1;
    }

    /** A glob as a regular expression: {@code **} any characters, {@code *} any but {@code /}, {@code ?} one but {@code /}. */
    public static String globToRegex(String glob) {
        StringBuilder re = new StringBuilder();
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            if (c == '*' && i + 1 < glob.length() && glob.charAt(i + 1) == '*') {
                re.append(".*");
                i++;
            } else if (c == '*') {
                re.append("[^/]*");
            } else if (c == '?') {
                re.append("[^/]");
            } else {
                re.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return re.toString();
    }

    /**
     * {@code text} (a location, or a message naming one) as a user reads it: the password of any
     * {@code scheme://user:password@} in it and the signatures of presigned URLs replaced by
     * {@code ***} (secrets are never printed, NOTE [Credentials in a URL] in Http), and every local
     * copy of a remote file ({@link #alias}) named by its location instead.
     */
    public static String redact(String text) {
        if (text != null && !ALIASES.isEmpty()) {
            for (String local : ALIASES.keySet().stream().sorted(java.util.Comparator.comparingInt(String::length).reversed())
                    .toList()) { // the longest first: a copy's name may begin another's
                if (text.contains(local)) {
                    text = text.replace(local, ALIASES.get(local));
                }
            }
        }
        return Http.redact(text);
    }

    /** Local copies of remote files and the locations they are copies of, for {@link #redact}. */
    private static final Map<String, String> ALIASES = new ConcurrentHashMap<>();

    /**
     * Names {@code local}, a copy of {@code location} that a format reads in its place, by that
     * location in every message {@link #redact} words: an error in the copy names the URL the
     * user gave. Kept for the process's life, since an error is often printed after the copy is gone.
     */
    public static void alias(Path local, String location) {
        ALIASES.put(local.toString(), location);
    }
}
