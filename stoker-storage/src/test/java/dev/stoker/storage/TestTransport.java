package dev.stoker.storage;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.function.LongConsumer;
import software.amazon.awssdk.checksums.SdkChecksum;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The transport's package-private parts, open to the test-jar's fixtures ({@code testing.MemoryStore},
 * {@code testing.S3Fixture}) and to the benchmarks: a stream that retries and resumes as remote
 * reads do, the S3 client every {@code s3://} location is read with, and S3's CRC64NVME.
 */
public final class TestTransport {
    private TestTransport() {
    }

    /** An object's body from a position, as one request returns it. */
    public interface Body {
        /** The bytes from {@code position} on; tells {@code length} the object's whole length. */
        InputStream openAt(long position, LongConsumer length) throws IOException;
    }

    /**
     * The bytes {@code [offset, offset + length)} of {@code location} (to its end when
     * {@code length} is -1), each request made by {@code body}, retried and resumed from its last
     * byte as a remote read is (a {@code RetryingSource}).
     */
    public static InputStream retrying(String location, int attempts, Duration initialBackoff, Duration maxBackoff,
                                       Body body, long offset, long length) {
        return new RetryingSource(location, new RetryingSource.Retry(attempts, initialBackoff, maxBackoff)) {
            @Override
            protected InputStream openAt(long position) throws IOException {
                return body.openAt(position, this::learnLength);
            }
        }.range(offset, length);
    }

    /** A failure that is not retried (an object that does not exist). */
    public static IOException permanent(String message) {
        return new RetryingSource.Permanent(message);
    }

    /** Reads every {@code s3://} location with {@code client}; null goes back to the default. */
    public static void useS3Client(S3Client client) {
        S3Objects.useClient(client);
    }

    /** S3's CRC64NVME, as a download is checked with it. */
    public static SdkChecksum crc64Nvme() {
        return new Crc64Nvme();
    }
}
