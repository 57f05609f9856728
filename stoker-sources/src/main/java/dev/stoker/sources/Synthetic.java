package dev.stoker.sources;

import dev.stoker.Loader;
import dev.stoker.SyntheticDataset;
import dev.stoker.sources.Schema.Min;

/**
 * {@code samples} samples of {@code sampleBytes} bytes each, a pure function of the sample's
 * index, each costing {@code workUs} microseconds of CPU as a decoder would.
 */
public record Synthetic(@Min(0) long samples, @Min(1) int sampleBytes, @Min(0) double workUs) implements SourceSpec {
    public Synthetic {
        SpecException.atLeast("samples", samples, 0);
        SpecException.atLeast("sample_bytes", sampleBytes, 1);
        if (!(workUs >= 0)) {
            throw new SpecException("work_us", "must be >= 0, got " + workUs);
        }
    }

    /** A million samples of 64 bytes, no work. */
    public static Synthetic of() {
        return new Synthetic(1_000_000, 64, 0);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws java.io.IOException {
        SyntheticDataset data = new SyntheticDataset(samples, sampleBytes, Math.round(workUs * 1000));
        return Recipe.open(kind(), r -> r.base(() -> Loader.builder(data)));
    }
}
