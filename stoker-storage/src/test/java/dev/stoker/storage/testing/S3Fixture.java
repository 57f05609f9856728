package dev.stoker.storage.testing;

import dev.stoker.storage.S3Objects;
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
 * every module that reads from S3.
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
        S3Objects.useClient(s3);
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
        S3Objects.useClient(null);
        s3.close();
        proxy.stop();
    }
}
