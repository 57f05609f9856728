package dev.stoker.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A bucket in another region than the configured one. S3Proxy has no regions, so a loopback
 * HTTP server answers as S3 does: a request signed for the wrong region gets 301
 * PermanentRedirect with the bucket's region in {@code x-amz-bucket-region} (and no Location);
 * one signed for the right region gets the object.
 */
class S3RegionTest {
    static final byte[] DATA = StorageTest.random(70_000, 21);
    static final Pattern SCOPE = Pattern.compile("Credential=[^/]+/\\d{8}/([^/]+)/s3/aws4_request");
    static HttpServer server;
    static S3Client s3;
    /** The region each request was signed for, with its method and path. */
    static final List<String> seen = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", S3RegionTest::handle);
        server.start();
        s3 = S3Client.builder().region(Region.US_EAST_1).forcePathStyle(true)
                .endpointOverride(URI.create("http://127.0.0.1:" + server.getAddress().getPort()))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("stoker-test", "stoker-secret")))
                .build();
        S3Objects.useClient(s3);
    }

    @AfterAll
    static void stop() {
        S3Objects.useClient(null);
        s3.close();
        server.stop(0);
    }

    static void handle(HttpExchange x) throws IOException {
        try (x) {
            String auth = x.getRequestHeaders().getFirst("Authorization");
            Matcher m = SCOPE.matcher(auth == null ? "" : auth);
            String region = m.find() ? m.group(1) : "unsigned";
            String path = x.getRequestURI().getPath();
            seen.add(x.getRequestMethod() + " " + path + " " + region);
            String bucketRegion = path.startsWith("/eu-data/") ? "eu-west-1" : path.startsWith("/nowhere/") ? null : "us-east-1";
            if (bucketRegion == null || !bucketRegion.equals(region)) {
                byte[] body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>PermanentRedirect</Code><Message>The bucket"
                        + " you are attempting to access must be addressed using the specified endpoint.</Message></Error>")
                        .getBytes(StandardCharsets.UTF_8);
                if (bucketRegion != null) {
                    x.getResponseHeaders().add("x-amz-bucket-region", bucketRegion);
                }
                x.sendResponseHeaders(301, x.getRequestMethod().equals("HEAD") ? -1 : body.length);
                if (!x.getRequestMethod().equals("HEAD")) {
                    x.getResponseBody().write(body);
                }
                return;
            }
            x.getResponseHeaders().add("ETag", "\"v1\"");
            x.getResponseHeaders().add("Content-Length", Integer.toString(DATA.length));
            if (x.getRequestMethod().equals("HEAD")) {
                x.sendResponseHeaders(200, -1);
                return;
            }
            x.sendResponseHeaders(200, DATA.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(DATA);
            }
        }
    }

    @Test
    void aBucketInAnotherRegionIsReadThereAndRememberedForItsNextRequests() throws IOException {
        seen.clear();
        try (RetryingSource in = S3Objects.open("s3://eu-data/a.tar", StorageTest.FAST)) {
            assertArrayEquals(DATA, in.readAllBytes());
        }
        assertEquals(List.of("GET /eu-data/a.tar us-east-1", "GET /eu-data/a.tar eu-west-1"), seen);
        seen.clear();
        assertEquals(DATA.length, S3Objects.size("s3://eu-data/b.tar", v -> { }));
        try (RetryingSource in = S3Objects.open("s3://eu-data/b.tar", StorageTest.FAST)) {
            assertArrayEquals(DATA, in.readAllBytes());
        }
        assertEquals(List.of("HEAD /eu-data/b.tar eu-west-1", "GET /eu-data/b.tar eu-west-1"), seen, "straight to eu-west-1");
        seen.clear();
        assertEquals(DATA.length, S3Objects.size("s3://us-data/c.tar", v -> { }));
        assertEquals(List.of("HEAD /us-data/c.tar us-east-1"), seen, "other buckets keep the configured region");
    }

    @Test
    void aRedirectThatNamesNoRegionIsAnErrorNamingTheObjectAndTheCode() throws IOException {
        try (RetryingSource in = S3Objects.open("s3://nowhere/x.tar", StorageTest.FAST)) {
            IOException e = assertThrows(IOException.class, in::readAllBytes);
            assertTrue(e.getMessage().startsWith("s3://nowhere/x.tar: ") && e.getMessage().contains("S3 301 PermanentRedirect"),
                    e.getMessage());
        }
    }
}
