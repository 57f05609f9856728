package dev.stoker.bench;

import dev.stoker.storage.testing.S3Fixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.gaul.s3proxy.S3Proxy;

/**
 * An S3-compatible server (S3Proxy, in this process) on loopback over a local directory, to read
 * {@code s3://} shards without a network: the directory's files are the objects of one bucket.
 * Requests are signed with the credentials in {@code AWS_ACCESS_KEY_ID} and
 * {@code AWS_SECRET_ACCESS_KEY} (any values; unsigned requests are refused).
 * Usage: {@code S3Server DIR [PORT] [BUCKET] [--etags=md5|none] [--checksums=crc64nvme|none]}
 * (defaults 8098, {@code bucket}, md5, crc64nvme). As S3 serves a single-part upload: each
 * object's ETag is the MD5 of its bytes, and a full GET carries its full-object CRC64NVME (the
 * checksum S3 computes for every object it stores since 2025), both computed once at start, so
 * readers can check what they download; {@code none} leaves either out. Prints
 * {@code ready URL} when it serves, then serves until killed.
 */
public final class S3Server {
    public static void main(String[] args) throws Exception {
        List<String> positional = Stream.of(args).filter(a -> !a.startsWith("--")).toList();
        if (positional.isEmpty()) {
            System.err.println("usage: S3Server DIR [PORT] [BUCKET] [--etags=md5|none] [--checksums=crc64nvme|none]");
            System.exit(2);
        }
        Path dir = Path.of(positional.get(0)).toAbsolutePath();
        int port = positional.size() > 1 ? Integer.parseInt(positional.get(1)) : 8098;
        String bucket = positional.size() > 2 ? positional.get(2) : "bucket";
        boolean md5 = !List.of(args).contains("--etags=none");
        boolean crc = !List.of(args).contains("--checksums=none");
        String identity = System.getenv("AWS_ACCESS_KEY_ID");
        String secret = System.getenv("AWS_SECRET_ACCESS_KEY");
        if (identity == null || secret == null) {
            System.err.println("S3Server: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (any values) for it and its clients");
            System.exit(2);
        }
        if (!Files.isDirectory(dir)) {
            System.err.println("S3Server: " + dir + ": no such directory");
            System.exit(2);
        }
        S3Proxy proxy = S3Fixture.serveFolder(dir, port, bucket, identity, secret, md5, crc);
        if (!"STARTED".equals(proxy.getState())) {
            System.err.println("S3Server: did not start (state " + proxy.getState() + ")");
            System.exit(1);
        }
        System.out.println("ready http://127.0.0.1:" + proxy.getPort() + " s3://" + bucket + "/ -> " + dir
                + (md5 ? " (ETags: MD5" : " (no ETags") + (crc ? "; checksums: CRC64NVME)" : "; no checksums)"));
        Thread.currentThread().join();
    }
}
