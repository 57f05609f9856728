package dev.stoker.storage;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.retries.DefaultRetryStrategy;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.ServerSideEncryption;

/**
 * Objects in S3 or an S3-compatible store, named {@code s3://bucket/key}. One client serves the
 * process; by default it is built from the environment: the endpoint from the system property
 * {@code stoker.s3.endpoint} or {@code STOKER_S3_ENDPOINT}, {@code AWS_ENDPOINT_URL_S3},
 * {@code AWS_ENDPOINT_URL} (a custom endpoint is addressed path-style, as MinIO and other
 * S3-compatible servers expect); the region and credentials from the AWS SDK's default chains
 * ({@code us-east-1} when no region is configured). Retries are Stoker's, not the SDK's: a read
 * resumes from its last byte (see {@link RetryingSource}).
 */
public final class S3Objects {
    private static S3Client client;

    private S3Objects() {
    }

    /** Bucket and key of an {@code s3://} location. */
    public record Location(String bucket, String key) {
        public static Location parse(String location) {
            if (!location.startsWith("s3://")) {
                throw new IllegalArgumentException(location + ": not an s3:// location");
            }
            String rest = location.substring("s3://".length());
            int slash = rest.indexOf('/');
            String bucket = slash < 0 ? rest : rest.substring(0, slash);
            if (bucket.isEmpty()) {
                throw new IllegalArgumentException(location + ": expected s3://bucket/key");
            }
            return new Location(bucket, slash < 0 ? "" : rest.substring(slash + 1));
        }

        @Override
        public String toString() {
            return "s3://" + bucket + "/" + key;
        }
    }

    /** Uses {@code c} for every S3 access from now on (the caller keeps ownership of it). */
    public static synchronized void useClient(S3Client c) {
        client = c;
    }

    static synchronized S3Client client() {
        if (client == null) {
            client = fromEnvironment();
        }
        return client;
    }

    private static S3Client fromEnvironment() {
        // the JDK's HttpURLConnection under the SDK: less CPU per download than the Apache client
        // (staging W2 from S3Proxy: 3.8-4.1 s against 4.8-5.0 s, JVM start included), and CPU is
        // what a download takes from decoding
        var b = S3Client.builder()
                .httpClientBuilder(software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient.builder())
                .overrideConfiguration(o -> o.retryStrategy(DefaultRetryStrategy.doNotRetry()));
        String endpoint = firstSet(System.getProperty("stoker.s3.endpoint"), System.getenv("STOKER_S3_ENDPOINT"),
                System.getenv("AWS_ENDPOINT_URL_S3"), System.getenv("AWS_ENDPOINT_URL"));
        if (endpoint != null) {
            b.endpointOverride(URI.create(endpoint)).forcePathStyle(true);
        }
        Region region;
        try {
            region = DefaultAwsRegionProviderChain.builder().build().getRegion();
        } catch (SdkClientException e) {
            region = Region.US_EAST_1;
        }
        return b.region(region).build();
    }

    private static String firstSet(String... values) {
        for (String v : values) {
            if (v != null && !v.isBlank()) {
                return v;
            }
        }
        return null;
    }

    /** A stream of the object's bytes that retries and resumes, each read waiting at most {@link Storage#readTimeout()}. */
    public static RetryingSource open(String location, RetryingSource.Retry retry) {
        return open(location, retry, Storage.readTimeout());
    }

    /** A stream of the object's bytes that retries and resumes; a read that waits longer than {@code timeout} is retried. */
    public static RetryingSource open(String location, RetryingSource.Retry retry, Duration timeout) {
        return new Source(Location.parse(location), retry, timeout);
    }

    /** Every object under an {@code s3://bucket/prefix} (or matching a glob, see {@link Storage#list}), in key order. */
    public static List<String> list(String prefix) throws IOException {
        return list(prefix, 1000).stream().map(Storage.Entry::location).toList();
    }

    /** Every object under an {@code s3://bucket/prefix} with its size, in key order, {@code pageSize} keys a request. */
    static List<Storage.Entry> list(String location, int pageSize) throws IOException {
        int glob = Storage.firstWildcard(location);
        String prefix = glob < 0 ? location : location.substring(0, glob);
        java.util.regex.Pattern keep = glob < 0 ? null : java.util.regex.Pattern.compile(Storage.globToRegex(location));
        Location at = Location.parse(prefix);
        List<Storage.Entry> out = new ArrayList<>();
        try {
            var pages = client().listObjectsV2Paginator(ListObjectsV2Request.builder()
                    .bucket(at.bucket()).prefix(at.key()).maxKeys(pageSize).build());
            for (S3Object o : pages.contents()) {
                String name = new Location(at.bucket(), o.key()).toString();
                if (keep == null || keep.matcher(name).matches()) {
                    out.add(new Storage.Entry(name, o.size()));
                }
            }
        } catch (SdkException e) {
            throw new IOException(prefix + ": listing failed after " + out.size() + " objects: " + e.getMessage(), e);
        }
        return out;
    }

    /** The object's size in bytes. */
    static long size(String location) throws IOException {
        Location at = Location.parse(location);
        try {
            return client().headObject(b -> b.bucket(at.bucket()).key(at.key())).contentLength();
        } catch (S3Exception e) {
            throw new IOException(location + ": S3 " + e.statusCode(), e);
        } catch (SdkException e) {
            throw new IOException(location + ": " + e.getMessage(), e);
        }
    }

    private static final class Source extends RetryingSource {
        private final Location at;
        private final Duration timeout;

        Source(Location at, Retry retry, Duration timeout) {
            super(at.toString(), retry);
            this.at = at;
            this.timeout = timeout;
        }

        @Override
        protected InputStream openAt(long position) throws IOException {
            var req = GetObjectRequest.builder().bucket(at.bucket()).key(at.key());
            if (position > 0) {
                req.range("bytes=" + position + "-");
            }
            ResponseInputStream<GetObjectResponse> in;
            try {
                in = client().getObject(req.build());
            } catch (S3Exception e) {
                int code = e.statusCode();
                String what = "S3 " + code + (e.awsErrorDetails() == null ? "" : " " + e.awsErrorDetails().errorCode());
                if (code == 429 || code >= 500) {
                    throw new IOException(what, e);
                }
                throw new Permanent(what);
            } catch (SdkException e) {
                throw new IOException(e.getMessage(), e);
            }
            GetObjectResponse r = in.response();
            try {
                learnVersion(r.eTag());
            } catch (Permanent e) {
                in.abort();
                throw e;
            }
            RetryingSource.Digest md5 = md5(r);
            if (md5 != null) {
                learnDigest(md5);
            }
            String range = r.contentRange();
            if (range != null && range.lastIndexOf('/') > 0 && !range.endsWith("*")) {
                learnLength(Long.parseLong(range.substring(range.lastIndexOf('/') + 1).trim()));
            } else if (position == 0 && r.contentLength() != null) {
                learnLength(r.contentLength());
            }
            return new ReadTimeout(new Body(at.toString(), in), timeout);
        }
    }

    /**
     * The object's MD5 when its ETag is one: a single-part upload's ETag is the hex MD5 of its
     * bytes, unless the object is encrypted with a KMS or customer key; a multipart upload's
     * ({@code "hash-parts"}) is a digest of its parts' digests, which cannot be checked without
     * the part sizes, so it has none.
     */
    static RetryingSource.Digest md5(GetObjectResponse r) {
        String tag = r.eTag() == null ? "" : r.eTag().replace("\"", "");
        boolean keyed = r.sseCustomerAlgorithm() != null || r.serverSideEncryption() == ServerSideEncryption.AWS_KMS
                || r.serverSideEncryption() == ServerSideEncryption.AWS_KMS_DSSE;
        if (keyed || !tag.matches("[0-9a-fA-F]{32}")) {
            return null;
        }
        return new RetryingSource.Digest("MD5", tag.toLowerCase(java.util.Locale.ROOT), "ETag");
    }

    /**
     * A response body whose SDK errors are {@link IOException}s and whose early close aborts the
     * connection. The SDK checks an unranged body against its {@code x-amz-checksum-*} header (the
     * default since SDK 2.30) and fails its last read on a mismatch: that is a
     * {@link RetryingSource.DigestMismatch}, not a failure to retry, as every byte was delivered.
     */
    static final class Body extends FilterInputStream {
        private final String name;
        private final ResponseInputStream<GetObjectResponse> response;
        private boolean ended;

        Body(String name, ResponseInputStream<GetObjectResponse> response) {
            super(response);
            this.name = name;
            this.response = response;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                int n = super.read(b, off, len);
                ended |= n < 0;
                return n;
            } catch (SdkException e) {
                if (String.valueOf(e.getMessage()).contains("different checksum than expected")) {
                    throw new RetryingSource.DigestMismatch(name, "the SDK's check of x-amz-checksum failed: " + e.getMessage());
                }
                throw new IOException(e.getMessage(), e);
            }
        }

        @Override
        public void close() throws IOException {
            if (!ended) {
                response.abort(); // do not drain the rest of a large object to reuse the connection
            }
            super.close();
        }
    }
}
