package dev.stoker.bench;

import dev.stoker.storage.TestTransport;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.zip.Checksum;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import software.amazon.awssdk.checksums.DefaultChecksumAlgorithm;
import software.amazon.awssdk.checksums.SdkChecksum;

/**
 * What checking a download costs: one MiB through each digest a response can announce, one
 * thread. CRC64NVME is Stoker's ({@code Crc64Nvme}, reached through the test-jar's
 * {@link TestTransport}: the SDK computes it only with its CRT native library); the others are
 * the SDK's ({@code CRC32C}, {@code CRC32}: the JDK's intrinsics; {@code MD5}, {@code SHA256}: the
 * JDK's message digests). Scores in MiB/s.
 *
 * <pre>java -jar stoker-bench/target/benchmarks.jar ChecksumBench</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ChecksumBench {

    @Param({"CRC64NVME", "CRC32C", "MD5", "SHA256"})
    String algorithm;

    private final byte[] data = new byte[1 << 20];
    private Checksum checksum;

    @Setup
    public void setUp() {
        new SplittableRandom(1).nextBytes(data);
        checksum = switch (algorithm) {
            case "CRC64NVME" -> TestTransport.crc64Nvme();
            case "CRC32C" -> SdkChecksum.forAlgorithm(DefaultChecksumAlgorithm.CRC32C);
            case "MD5" -> SdkChecksum.forAlgorithm(DefaultChecksumAlgorithm.MD5);
            case "SHA256" -> SdkChecksum.forAlgorithm(DefaultChecksumAlgorithm.SHA256);
            default -> throw new IllegalArgumentException(algorithm);
        };
    }

    /** One MiB into the running checksum (its state is the benchmark's): the score is MiB/s. */
    @Benchmark
    public void mebibyte() {
        checksum.update(data, 0, data.length);
    }
}
