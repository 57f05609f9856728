package dev.stoker.bench.image;

import dev.stoker.formats.image.Crop;
import dev.stoker.formats.image.Image;
import dev.stoker.formats.io.Resampler;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
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
 * RandomResizedCrop(224) resampling on one thread, as the train224 transform does it (crop to
 * 8-bit planes, not the normalizing), over the crops torchvision's rules draw from a W3 image:
 * the Vector API's horizontal pass against the scalar one ({@code -Dstoker.scalar=true}).
 *
 * <pre>java --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector -jar stoker-bench/target/benchmarks.jar ResampleBench</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class ResampleBench {
    private static final int SIZE = 224;

    @Param({"/tmp/stoker-bench/small-files/class_0/img_00000.jpg"})
    String file;

    private final Image image = new Image();
    private final Crop[] crops = new Crop[256];
    private final byte[] planes = new byte[3 * SIZE * SIZE];
    private Resampler resampler;
    private int next;

    @Setup
    public void setUp() throws IOException {
        byte[] b = Files.readAllBytes(Path.of(file));
        MemorySegment s = Arena.global().allocate(b.length);
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
        Image.decode(s, image, file);
        SplittableRandom r = new SplittableRandom(7);
        for (int i = 0; i < crops.length; i++) {
            crops[i] = Crop.randomResized(image.width(), image.height(), r, 0.08, 1.0, 0.75, 4.0 / 3, 0.5);
        }
        resampler = new Resampler();
    }

    private byte resize() {
        resampler.resize(image, crops[next++ & (crops.length - 1)], SIZE, planes);
        return planes[SIZE];
    }

    @Benchmark
    @Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
    public byte vector() {
        return resize();
    }

    @Benchmark
    @Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
            "-Dstoker.scalar=true"})
    public byte scalar() {
        return resize();
    }
}
