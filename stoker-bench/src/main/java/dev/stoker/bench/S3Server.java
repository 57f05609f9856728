package dev.stoker.bench;

import dev.stoker.storage.Crc64Nvme;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.ForwardingBlobStore;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.services.s3.model.ChecksumType;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;

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
        // the store's buckets are the folders under its root: one, a link to DIR
        Path root = Files.createTempDirectory("stoker-s3-root");
        Files.createSymbolicLink(root.resolve(bucket), dir);
        root.toFile().deleteOnExit();
        root.resolve(bucket).toFile().deleteOnExit();

        Map<String, String> etags = new HashMap<>();
        Map<String, String> crcs = new HashMap<>();
        digests(dir, md5 ? etags : null, crc ? crcs : null);
        var store = new ForwardingBlobStore(new FilesystemNio2BlobStore(root.toString())) {
            @Override
            public ResponseInputStream<GetObjectResponse> getBlob(GetObjectRequest req) {
                ResponseInputStream<GetObjectResponse> in = super.getBlob(req);
                var response = in.response().toBuilder().eTag(etags.get(req.key()));
                if (req.range() == null && crcs.containsKey(req.key())) {
                    response.checksumCRC64NVME(crcs.get(req.key())).checksumType(ChecksumType.FULL_OBJECT);
                }
                return new ResponseInputStream<>(response.build(), in);
            }

            @Override
            public HeadObjectResponse blobMetadata(HeadObjectRequest req) {
                HeadObjectResponse r = super.blobMetadata(req);
                return r == null ? null : r.toBuilder().eTag(etags.get(req.key())).build();
            }
        };
        S3Proxy proxy = S3Proxy.builder().blobStore(store).endpoint(URI.create("http://127.0.0.1:" + port))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, identity, secret).build();
        proxy.start();
        for (int i = 0; i < 400 && !"STARTED".equals(proxy.getState()); i++) {
            Thread.sleep(25);
        }
        if (!"STARTED".equals(proxy.getState())) {
            System.err.println("S3Server: did not start (state " + proxy.getState() + ")");
            System.exit(1);
        }
        System.out.println("ready http://127.0.0.1:" + proxy.getPort() + " s3://" + bucket + "/ -> " + dir
                + (md5 ? " (ETags: MD5 of " + etags.size() + " objects" : " (no ETags")
                + (crc ? "; checksums: CRC64NVME of " + crcs.size() + ")" : "; no checksums)"));
        Thread.currentThread().join();
    }

    /**
     * Per file in {@code dir}, by name, in one read of it: its MD5 in hex and quoted (an ETag) into
     * {@code md5s}, its CRC64NVME in base64 (an {@code x-amz-checksum-crc64nvme}) into {@code crcs};
     * either may be null.
     */
    private static void digests(Path dir, Map<String, String> md5s, Map<String, String> crcs) throws IOException {
        if (md5s == null && crcs == null) {
            return;
        }
        byte[] buf = new byte[1 << 20];
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                MessageDigest md = newMd5();
                Crc64Nvme crc = new Crc64Nvme();
                try (InputStream in = Files.newInputStream(f)) {
                    for (int n; (n = in.read(buf)) > 0; ) {
                        if (md5s != null) {
                            md.update(buf, 0, n);
                        }
                        if (crcs != null) {
                            crc.update(buf, 0, n);
                        }
                    }
                }
                String name = f.getFileName().toString();
                if (md5s != null) {
                    md5s.put(name, "\"" + HexFormat.of().formatHex(md.digest()) + "\"");
                }
                if (crcs != null) {
                    crcs.put(name, Base64.getEncoder().encodeToString(crc.getChecksumBytes()));
                }
            }
        }
    }

    private static MessageDigest newMd5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
