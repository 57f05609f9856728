package dev.stoker.bench.image;

import dev.stoker.formats.image.Image;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
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

/**
 * JPEG decodes per second on one thread, full size, into RGBX: up to 1,000 {@code .jpg} files of
 * a directory, held in memory; by default the W3 images of gen_data.py (256×256, quality 90).
 * {@code -p dir=DIR} takes another, e.g. the members of {@code images-000000.tar} extracted, the
 * files PIL decodes in phys_limits.py's {@code jpeg_decode}.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -jar stoker-bench/target/benchmarks.jar JpegDecodeBench</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class JpegDecodeBench {

    @Param({"/tmp/stoker-bench/small-files/class_0"})
    String dir;

    private MemorySegment[] jpegs;
    private final Image image = new Image();
    private int next;

    @Setup
    public void setUp() throws IOException {
        try (var files = Files.list(Path.of(dir))) {
            jpegs = files.sorted().filter(p -> p.toString().toLowerCase(java.util.Locale.ROOT).endsWith(".jpg")).limit(1000).map(p -> {
                try {
                    byte[] b = Files.readAllBytes(p);
                    MemorySegment s = Arena.global().allocate(b.length);
                    MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
                    return s;
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).toArray(MemorySegment[]::new);
        }
        if (jpegs.length == 0) {
            throw new IllegalArgumentException(dir + ": no .jpg files");
        }
    }

    @Benchmark
    public int decode() throws IOException {
        MemorySegment j = jpegs[next++ % jpegs.length];
        Image.decode(j, image, "bench"); // a JPEG: libjpeg-turbo where it is installed
        return image.width();
    }
}
