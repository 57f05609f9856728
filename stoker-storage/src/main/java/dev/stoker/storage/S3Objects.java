package dev.stoker.storage;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.identity.spi.IdentityProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.retries.DefaultRetryStrategy;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.S3Utilities;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Objects in S3 or an S3-compatible store, named {@code s3://bucket/key}. By default the endpoint
 * comes from the system property {@code stoker.s3.endpoint} or {@code STOKER_S3_ENDPOINT},
 * {@code AWS_ENDPOINT_URL_S3}, {@code AWS_ENDPOINT_URL} (a custom endpoint is addressed
 * path-style, as MinIO and other S3-compatible servers expect); the region and credentials from
 * the AWS SDK's default chains ({@code us-east-1} when no region is configured). Retries are
 * Stoker's, not the SDK's: a read resumes from its last byte (see {@link RetryingSource}).
 *
 * <p>NOTE [S3 reads]: object reads (GET, HEAD) are plain HTTP requests through {@link Http},
 * addressed by the SDK's {@link S3Utilities} (its endpoint rules: virtual-hosted or path-style,
 * FIPS, dual-stack) and signed by its SigV4 signer ({@link AwsV4HttpSigner}); only listing goes
 * through the SDK's {@link S3Client}. The client's request pipeline cost more than the download
 * itself: staging the 546 MB of W2 from S3Proxy took the client 3.8–4.1 s of CPU through the
 * SDK against 1.3 s for the same bytes over plain HTTP, and a fresh process waited 0.5 s longer
 * for its first byte (building the client), time in which a cold epoch's workers have nothing
 * to decode. Integrity is what the SDK checked and more: a response's full-object
 * {@code x-amz-checksum-*} (asked for with {@code x-amz-checksum-mode}), else the MD5 in a
 * single-part ETag, is checked over the whole object, across resumed ranges.
 */
final class S3Objects {
    private static S3Client client;
    private static Access access;

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

    /**
     * How object requests reach the store: the objects' URLs, the credentials and region to sign
     * with. The signer is thread-safe and holds no state.
     *
     * <p>A bucket in another region than the configured one answers with a redirect (301 or 307,
     * or 400 to a request signed for the wrong region) that names its region in
     * {@code x-amz-bucket-region}: the request is made again, addressed and signed for that
     * region, which is kept for the bucket's later requests (as the SDK's cross-region access
     * does). Datasets are often read from a public bucket in another region.
     */
    private record Access(S3Utilities urls, IdentityProvider<? extends AwsCredentialsIdentity> credentials, Region region,
                          Map<String, Region> bucketRegions) {
        private static final AwsV4HttpSigner SIGNER = AwsV4HttpSigner.create();

        Access(S3Utilities urls, IdentityProvider<? extends AwsCredentialsIdentity> credentials, Region region) {
            this(urls, credentials, region, new ConcurrentHashMap<>());
        }

        /**
         * The response to {@code method} on the object, its headers (and {@code extra} ones)
         * signed: the connection, its status read ({@link HttpURLConnection#getResponseCode}).
         */
        HttpURLConnection open(String method, Location at, UnaryOperator<SdkHttpRequest.Builder> extra, int readMillis)
                throws IOException {
            for (int attempt = 1; ; attempt++) {
                Region r = bucketRegions.getOrDefault(at.bucket(), region);
                HttpURLConnection c = connect(method, at, r, extra, readMillis);
                int code = c.getResponseCode();
                String elsewhere = c.getHeaderField("x-amz-bucket-region");
                if (attempt < 3 && (code == 301 || code == 307 || code == 400) && elsewhere != null
                        && !elsewhere.isBlank() && !elsewhere.trim().equals(r.id())) {
                    Http.errorBody(c); // read to its end, so that the connection can be reused
                    bucketRegions.put(at.bucket(), Region.of(elsewhere.trim()));
                    continue;
                }
                return c;
            }
        }

        private HttpURLConnection connect(String method, Location at, Region r, UnaryOperator<SdkHttpRequest.Builder> extra,
                                          int readMillis) throws IOException {
            URI uri;
            AwsCredentialsIdentity identity;
            SdkHttpRequest signed;
            try {
                uri = urls.getUrl(b -> b.bucket(at.bucket()).key(at.key()).region(r)).toURI();
                SdkHttpRequest request = extra.apply(SdkHttpRequest.builder().method(SdkHttpMethod.fromValue(method)).uri(uri))
                        .build();
                identity = credentials.resolveIdentity().join();
                signed = SIGNER.sign(q -> q.identity(identity).request(request)
                        .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "s3")
                        .putProperty(AwsV4HttpSigner.REGION_NAME, r.id())
                        // S3 signs the path as sent: encoded once, never normalized (unlike other services)
                        .putProperty(AwsV4HttpSigner.DOUBLE_URL_ENCODE, false)
                        .putProperty(AwsV4HttpSigner.NORMALIZE_PATH, false)
                        .putProperty(AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, false)).request();
            } catch (SdkException | java.util.concurrent.CompletionException | java.net.URISyntaxException e) {
                throw new IOException("cannot sign a request: " + e.getMessage(), e);
            }
            HttpURLConnection c = Http.connect(uri, method, readMillis);
            c.setInstanceFollowRedirects(false); // the signature holds for this host only: see open
            signed.forEachHeader((name, values) -> {
                if (!name.equalsIgnoreCase("Host")) { // the connection sends the same one itself
                    c.setRequestProperty(name, String.join(",", values));
                }
            });
            return c;
        }
    }

    /** Uses {@code c} for every S3 access from now on (the caller keeps ownership of it); null: the environment's again. */
    public static synchronized void useClient(S3Client c) {
        client = c;
        access = c == null ? null
                : new Access(c.utilities(), c.serviceClientConfiguration().credentialsProvider(),
                        c.serviceClientConfiguration().region());
    }

    static synchronized S3Client client() {
        if (client == null) {
            URI endpoint = endpoint();
            var b = S3Client.builder()
                    .httpClientBuilder(software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient.builder())
                    .overrideConfiguration(o -> o.retryStrategy(DefaultRetryStrategy.doNotRetry()))
                    .crossRegionAccessEnabled(true)
                    .region(region());
            if (endpoint != null) {
                b.endpointOverride(endpoint).forcePathStyle(true);
            }
            client = b.build();
        }
        return client;
    }

    private static synchronized Access access() {
        if (access == null) {
            URI endpoint = endpoint();
            Region region = region();
            var urls = S3Utilities.builder().region(region);
            if (endpoint != null) {
                urls.endpoint(endpoint).s3Configuration(S3Configuration.builder().pathStyleAccessEnabled(true).build());
            }
            access = new Access(urls.build(), DefaultCredentialsProvider.builder().build(), region);
        }
        return access;
    }

    private static URI endpoint() {
        String endpoint = firstSet(System.getProperty("stoker.s3.endpoint"), System.getenv("STOKER_S3_ENDPOINT"),
                System.getenv("AWS_ENDPOINT_URL_S3"), System.getenv("AWS_ENDPOINT_URL"));
        return endpoint == null ? null : URI.create(endpoint);
    }

    private static Region region() {
        try {
            return DefaultAwsRegionProviderChain.builder().build().getRegion();
        } catch (SdkClientException e) {
            return Region.US_EAST_1;
        }
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
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("a read timeout must be positive: " + timeout);
        }
        return new Source(Location.parse(location), retry, timeout);
    }

    /** Every object under an {@code s3://bucket/prefix} (or matching a glob, see {@link Storage#list}), in key order. */
    public static List<String> list(String prefix) throws IOException {
        return list(prefix, 1000).stream().map(Storage.Entry::location).toList();
    }

    /** Every object under an {@code s3://bucket/prefix} with its size, in key order, {@code pageSize} keys a request. */
    static List<Storage.Entry> list(String location, int pageSize) throws IOException {
        int glob = Locations.firstWildcard(location);
        String prefix = glob < 0 ? location : location.substring(0, glob);
        Pattern keep = glob < 0 ? null : Pattern.compile(Locations.globToRegex(location));
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
    static long size(String location, java.util.function.Consumer<String> version) throws IOException {
        return Http.headSize(access().open("HEAD", Location.parse(location), b -> b, 30_000), location, "S3", version);
    }

    private static final class Source extends RetryingSource {
        private final Location at;
        private final int millis;

        Source(Location at, Retry retry, Duration timeout) {
            super(at.toString(), retry);
            this.at = at;
            this.millis = Http.millis(timeout);
        }

        @Override
        protected InputStream openAt(long position) throws IOException {
            String pinned = version();
            HttpURLConnection c = access().open("GET", at, b -> {
                b.putHeader("x-amz-checksum-mode", "ENABLED");
                if (pinned != null && pinned.startsWith("ETag ")) {
                    b.putHeader("If-Match", pinned.substring("ETag ".length())); // NOTE [One version]
                } else if (pinned != null && pinned.startsWith("Last-Modified ")) {
                    b.putHeader("If-Unmodified-Since", pinned.substring("Last-Modified ".length()));
                }
                String range = rangeHeader(position);
                return range != null ? b.putHeader("Range", range) : b;
            }, millis);
            int code = c.getResponseCode();
            if (code == 412 && pinned != null) {
                Http.errorBody(c);
                throw changed(null);
            }
            if (code != 200 && code != 206) {
                throw Http.failure(c, code, "S3 " + code + errorCode(Http.errorBody(c))
                        + (code == 301 ? " (the bucket is in another region, which the answer does not name: set AWS_REGION to it)" : ""));
            }
            try {
                String etag = c.getHeaderField("ETag");
                learnVersion(etag == null ? null : "ETag " + etag);
            } catch (Permanent e) {
                c.disconnect(); // do not read the rest of another object
                throw e;
            }
            Http.checkBody(c, code, position, "S3");
            RetryingSource.Digest digest = announced(c::getHeaderField);
            if (digest != null) {
                learnDigest(digest);
            }
            learnLength(Http.objectLength(c, code));
            return Http.body(c, code, position, millis);
        }
    }

    private static final Pattern ERROR_CODE = Pattern.compile("<Code>([^<]{1,100})</Code>");

    /** " NoSuchKey" from an S3 error body, "" if it has no code. */
    static String errorCode(String body) {
        Matcher m = ERROR_CODE.matcher(body);
        return m.find() ? " " + m.group(1) : "";
    }

    private static final String[] CHECKSUMS = {"CRC64NVME", "CRC32C", "CRC32", "SHA256", "SHA1"};

    /**
     * What a response announces of the whole object's bytes: its full-object
     * {@code x-amz-checksum-*} (a composite one, of a multipart upload's parts, covers parts, not
     * the object), else the MD5 in its ETag. A single-part upload's ETag is the hex MD5 of its
     * bytes, unless the object is encrypted with a KMS or customer key; a multipart upload's
     * ({@code "hash-parts"}) is a digest of its parts' digests, which cannot be checked without
     * the part sizes. Null when there is nothing to check.
     */
    static RetryingSource.Digest announced(UnaryOperator<String> header) {
        boolean composite = "COMPOSITE".equalsIgnoreCase(header.apply("x-amz-checksum-type"));
        for (String algorithm : CHECKSUMS) {
            String name = "x-amz-checksum-" + algorithm.toLowerCase(Locale.ROOT);
            String value = header.apply(name);
            if (value != null && !composite && !value.contains("-")) {
                try {
                    return new RetryingSource.Digest(algorithm, HexFormat.of().formatHex(Base64.getDecoder().decode(value.trim())), name);
                } catch (IllegalArgumentException e) {
                    // not base64: nothing to check against
                }
            }
        }
        String tag = header.apply("ETag") == null ? "" : header.apply("ETag").replace("\"", "");
        String sse = header.apply("x-amz-server-side-encryption");
        boolean keyed = header.apply("x-amz-server-side-encryption-customer-algorithm") != null
                || (sse != null && sse.startsWith("aws:kms"));
        if (keyed || !tag.matches("[0-9a-fA-F]{32}")) {
            return null;
        }
        return new RetryingSource.Digest("MD5", tag.toLowerCase(Locale.ROOT), "ETag");
    }
}
