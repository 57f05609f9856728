/**
 * Where a dataset's bytes live: local files, HTTP(S) and S3-compatible object stores behind one
 * {@link dev.stoker.storage.Store} interface, with retries, a bounded shard cache and the
 * shard-pattern syntax ({@code train-{000000..000146}.tar}).
 */
module dev.stoker.storage {
    requires java.net.http;
    requires software.amazon.awssdk.auth;
    requires software.amazon.awssdk.checksums;
    requires software.amazon.awssdk.checksums.spi;
    requires software.amazon.awssdk.core;
    requires software.amazon.awssdk.http;
    requires software.amazon.awssdk.http.auth.aws;
    requires software.amazon.awssdk.http.auth.spi;
    requires software.amazon.awssdk.http.urlconnection;
    requires software.amazon.awssdk.identity.spi;
    requires software.amazon.awssdk.regions;
    requires software.amazon.awssdk.retries;
    requires software.amazon.awssdk.services.s3;

    exports dev.stoker.storage;
    exports dev.stoker.storage.io to dev.stoker.core, dev.stoker.formats, dev.stoker.sources, dev.stoker.cli;
}
