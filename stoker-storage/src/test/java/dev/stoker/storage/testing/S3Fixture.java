package dev.stoker.storage.testing;

import dev.stoker.storage.TestTransport;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.stream.Stream;
import org.gaul.s3proxy.blobstore.ForwardingBlobStore;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.services.s3.model.ChecksumType;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import java.net.URI;
import java.nio.file.Path;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A real S3-compatible server (S3Proxy over a folder) on loopback with one bucket, which
 * {@code s3://} locations are read from (signed requests) until it is closed: for the tests of
 * every module that reads from S3, and ({@link #serveFolder}) for the benchmarks' S3 server.
 */
public final class S3Fixture implements AutoCloseable {
    private final S3Proxy proxy;
    private final S3Client s3;
    private final String bucket;

    private S3Fixture(S3Proxy proxy, S3Client s3, String bucket) {
        this.proxy = proxy;
        this.s3 = s3;
        this.bucket = bucket;
    }

    /** Serves {@code bucket} from {@code dir}, and points S3 reads at it. */
    public static S3Fixture start(Path dir, String bucket) throws Exception {
        S3Proxy proxy = S3Proxy.builder().blobStore(new FilesystemNio2BlobStore(dir.toString()))
                .endpoint(URI.create("http://127.0.0.1:0"))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, "stoker-test", "stoker-secret").build();
        proxy.start();
        for (int i = 0; i < 200 && !"STARTED".equals(proxy.getState()); i++) {
            Thread.sleep(25);
        }
        S3Client s3 = S3Client.builder().endpointOverride(URI.create("http://127.0.0.1:" + proxy.getPort()))
                .forcePathStyle(true).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("stoker-test", "stoker-secret")))
                .build();
        TestTransport.useS3Client(s3);
        s3.createBucket(b -> b.bucket(bucket));
        return new S3Fixture(proxy, s3, bucket);
    }

    public void put(String key, byte[] data) {
        s3.putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(data));
    }

    /** {@code s3://BUCKET/key}. */
    public String location(String key) {
        return "s3://" + bucket + "/" + key;
    }

    @Override
    public void close() throws Exception {
        TestTransport.useS3Client(null);
        s3.close();
        proxy.stop();
    }

    /**
     * S3Proxy serving the files of {@code dir} as {@code bucket} on {@code port} of loopback
     * (the benchmarks' server, {@code dev.stoker.bench.S3Server}), with signed requests by
     * {@code identity}/{@code secret}; each object's ETag is its MD5 ({@code md5}) and a whole
     * object's response carries its CRC64NVME ({@code crc}), as S3 gives them. Started; the caller
     * checks its state and stops it.
     */
    public static S3Proxy serveFolder(Path dir, int port, String bucket, String identity, String secret, boolean md5,
                                      boolean crc) throws Exception {
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
        return proxy;
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
                software.amazon.awssdk.checksums.SdkChecksum crc = TestTransport.crc64Nvme();
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
