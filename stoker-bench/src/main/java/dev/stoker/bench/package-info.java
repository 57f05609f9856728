/**
 * JMH benchmarks of Stoker's kernels (checksums, the loader's hand-offs, the shard cache's
 * efficiency; resampling and JPEG decoding in {@code .image}) and {@code S3Server}, the loopback
 * S3 server the {@code bench/} scripts read remote data from.
 */
package dev.stoker.bench;
