package dev.stoker.sources;

import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.Sampler;
import dev.stoker.formats.records.RecordSource;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * An opened source: builders of its loader, and what it holds open until it is closed (mapped
 * files, a shard cache, local copies of remote files). Each {@link #builder} starts from the
 * source as it was opened, so a host may build one loader after another (a sweep of
 * configurations; the Python bridge rebuilding a pass).
 */
public final class Recipe implements AutoCloseable {
    private final String name;
    private Supplier<LoaderBuilder> base;
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final List<Supplier<String>> reports = new ArrayList<>();
    private final java.util.Map<String, Double> figures = new java.util.LinkedHashMap<>();
    private Sampler sampler;
    private int shardBuffer;
    private double tokensPerSample;
    private RecordSource records;
    private java.util.function.BiFunction<String, byte[], Object> shown = (field, bytes) -> null;

    private Recipe(String name) {
        this.name = name;
    }

    /** A builder of the loader with {@code loader}'s options set; where it starts is the caller's ({@link LoaderSpec#start}). */
    public LoaderBuilder builder(LoaderSpec loader) {
        LoaderBuilder b = loader.applyTo(base.get(), sampler);
        if (shardBuffer > 0 && b.streams() && !Integer.valueOf(0).equals(loader.workers())) {
            b.shardBuffer(shardBuffer);
        }
        return b;
    }

    /** The source's kind, as its spec names it ({@code tokens}, {@code shards}, ...). */
    public String name() {
        return name;
    }

    /** Tokens a sample holds, for sources of token windows; 0 otherwise. */
    public double tokensPerSample() {
        return tokensPerSample;
    }

    /**
     * The records as the format holds them, for a source of a record format (MDS, TFRecord,
     * ArrayRecord): what {@code stoker cat} prints, structs and lists kept; empty for other sources.
     */
    public Optional<RecordSource> records() {
        return Optional.ofNullable(records);
    }

    /**
     * A variable-size field's value as a reader of the source means it, for {@code stoker cat}
     * (a Parquet string's text, an INT96 timestamp, a decimal); null when its bytes are the value.
     */
    public Object shown(String field, byte[] bytes) {
        return shown.apply(field, bytes);
    }

    /** Sets how {@link #shown} reads a field's bytes. */
    void shown(java.util.function.BiFunction<String, byte[], Object> values) {
        this.shown = values;
    }

    /**
     * Lines about what the source did, for after a run (a shard cache's hits and downloads, bytes
     * fetched), the secrets of the URLs they name as {@code ***} ({@link dev.stoker.storage.Storage#redact}).
     */
    public List<String> report() {
        return reports.stream().map(Supplier::get).map(dev.stoker.storage.Locations::redact).toList();
    }

    /**
     * Figures the source adds to a loader's stats, by name (the root source's
     * {@code filesPerBatch}: the distinct files a shuffled batch draws from, on average).
     */
    public java.util.Map<String, Double> figures() {
        return java.util.Collections.unmodifiableMap(figures);
    }

    /** Closes what the source holds, last opened first. Idempotent. */
    @Override
    public void close() throws IOException {
        IOException failure = null;
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = e instanceof IOException io ? io : new IOException(e.getMessage(), e);
                }
            }
        }
        resources.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /** Where each {@link #builder} starts: a fresh builder over the opened source. */
    Recipe base(Supplier<LoaderBuilder> base) {
        this.base = base;
        return this;
    }

    /** An order of the source's own (random windows, row-group blocks), in place of the loader spec's. */
    Recipe sampler(Sampler sampler) {
        this.sampler = sampler;
        return this;
    }

    /** Samples each shard read ahead may hold, for a stream read by workers. */
    Recipe shardBuffer(int samples) {
        this.shardBuffer = samples;
        return this;
    }

    Recipe records(RecordSource records) {
        this.records = records;
        return this;
    }

    Recipe tokensPerSample(double tokens) {
        this.tokensPerSample = tokens;
        return this;
    }

    Recipe figure(String name, double value) {
        figures.put(name, value);
        return this;
    }

    Recipe report(Supplier<String> line) {
        reports.add(line);
        return this;
    }

    /** Holds {@code resource} open until {@link #close()}. */
    <T extends AutoCloseable> T hold(T resource) {
        resources.add(resource);
        return resource;
    }

    /**
     * A recipe named {@code name}, filled by {@code body} (its base builder, what it holds); when
     * {@code body} fails, what it had opened is closed: nothing outlives a failed open.
     */
    static Recipe open(String name, Body body) throws IOException {
        Recipe r = new Recipe(name);
        try {
            body.fill(r);
        } catch (IOException | RuntimeException | Error e) {
            try {
                r.close();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        if (r.base == null) {
            throw new IllegalStateException(name + ": the opener set no builder");
        }
        return r;
    }

    /** Fills a recipe as its source opens. */
    @FunctionalInterface
    interface Body {
        void fill(Recipe recipe) throws IOException;
    }
}
