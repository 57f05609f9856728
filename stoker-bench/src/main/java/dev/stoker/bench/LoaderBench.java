package dev.stoker.bench;

import dev.stoker.Batch;
import dev.stoker.DirectDataset;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.SyntheticDataset;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One operation is one batch handed to the consumer, in the steady state of a long epoch:
 * orchestration cost per batch and, under {@code -prof gc}, bytes allocated per batch
 * ({@code gc.alloc.rate.norm}, which counts every thread, so the workers too).
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -jar stoker-bench/target/benchmarks.jar LoaderBench -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class LoaderBench {

    @Param({"0", "2"})
    int workers;

    @Param({"256"})
    int batch;

    @Param({"64"})
    int sampleBytes;

    /**
     * A control: when true, every sample also allocates a 64-byte array on the worker that reads
     * it, so the profiler must report about {@code batch * 80} bytes per batch. It shows that
     * worker threads' allocations are counted, so a zero in the normal run means zero.
     */
    @Param({"false"})
    boolean allocatingControl;

    static volatile Object sink;

    private Loader loader;
    private Iterator<Batch> it;

    @Setup(Level.Trial)
    public void setUp() {
        // far more samples than any run takes: every measured batch is a steady-state batch
        SyntheticDataset synthetic = new SyntheticDataset(1L << 40, sampleBytes, 0);
        DirectDataset data = !allocatingControl ? synthetic : new DirectDataset() {
            @Override
            public long size() {
                return synthetic.size();
            }

            @Override
            public Schema schema() {
                return synthetic.schema();
            }

            @Override
            public void read(long index, Row row) {
                sink = new byte[64];
                synthetic.read(index, row);
            }
        };
        LoaderBuilder b = Loader.builder(data).batchSize(batch).workers(workers).shuffle().seed(1);
        loader = (workers > 0 ? b.prefetch(2 * workers) : b).build();
        it = loader.iterator();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        loader.close();
    }

    @Benchmark
    public long nextBatch() {
        Batch b = it.next();
        return b.index(0) + b.size();
    }
}
