package dev.stoker.cli;

import dev.stoker.formats.io.TarGrouping;
import dev.stoker.formats.io.TarReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * What a tar shard holds, from one pass over its headers: samples (with their sorted fields, for
 * {@code stoker ls}), field counts, the first keys, and warnings about things WebDataset readers
 * will read differently from what was probably meant.
 */
public final class TarSummary {
    public long samples;
    public final Map<String, Long> fields = new TreeMap<>();
    public final List<String> keys = new ArrayList<>();
    public final List<String> warnings = new ArrayList<>();
    public long skippedMembers;
    /** With distributions: the bytes of each sample (its members' sizes summed), in shard order. */
    public long[] sampleBytes = new long[0];
    /** With distributions: samples per value of the {@code cls} field (trimmed text). */
    public final Map<String, Long> labels = new TreeMap<>();

    /** Scans a shard; {@code each} (may be null) sees every sample as key and sorted fields. */
    public static TarSummary of(Path shard, Consumer<String[]> each) throws IOException {
        return of(shard, each, false);
    }

    /** As {@link #of(Path, Consumer)}; with {@code distributions}, also sample sizes and labels (reads every member). */
    public static TarSummary of(Path shard, Consumer<String[]> each, boolean distributions) throws IOException {
        TarSummary s = new TarSummary();
        long[] sizes = new long[64];
        Set<String> seen = new HashSet<>();
        Set<String> dupes = new java.util.TreeSet<>();
        Set<String> dotted = new java.util.TreeSet<>();
        try (TarReader r = TarReader.open(shard)) {
            String key = null;
            List<String> current = new ArrayList<>();
            long bytes = 0;
            TarGrouping grouping = new TarGrouping(r.shard());
            for (TarReader.Member m; (m = r.next(distributions)) != null; ) {
                String[] kf = TarGrouping.keyAndField(m);
                if (kf == null) {
                    s.skippedMembers++;
                    continue;
                }
                boolean starts = grouping.starts(kf[0]);
                grouping.add(kf, m); // a field repeated within a sample fails here as in every loading path
                if (starts) {
                    if (key != null && distributions) {
                        sizes = add(sizes, (int) s.samples, bytes);
                    }
                    s.finish(key, current, each);
                    bytes = 0;
                    key = kf[0];
                    current = new ArrayList<>();
                    if (!seen.add(key)) {
                        dupes.add(key);
                    }
                }
                current.add(kf[1]);
                bytes += m.size();
                if (distributions && kf[1].equals("cls")) {
                    s.labels.merge(new String(m.data(), java.nio.charset.StandardCharsets.UTF_8).strip(), 1L, Long::sum);
                }
                if (kf[1].contains(".")) {
                    dotted.add(m.name());
                }
            }
            if (key != null && distributions) {
                sizes = add(sizes, (int) s.samples, bytes);
            }
            s.finish(key, current, each);
        }
        if (distributions) {
            s.sampleBytes = java.util.Arrays.copyOf(sizes, (int) s.samples);
        }
        if (!dotted.isEmpty()) {
            s.warnings.add(dotted.size() + " member names have more than one dot (e.g. '" + dotted.iterator().next()
                    + "'): the key ends at the first dot of the file name, so the rest becomes the field");
        }
        if (!dupes.isEmpty()) {
            s.warnings.add(dupes.size() + " keys appear in more than one place (e.g. '" + dupes.iterator().next()
                    + "'): each place is a separate sample");
        }
        if (s.skippedMembers > 0) {
            s.warnings.add(s.skippedMembers + " members belong to no sample (no dot in the file name, or __meta__ files)");
        }
        return s;
    }

    private static long[] add(long[] a, int i, long v) {
        if (i == a.length) {
            a = java.util.Arrays.copyOf(a, 2 * a.length);
        }
        a[i] = v;
        return a;
    }

    private void finish(String key, List<String> fieldsOfSample, Consumer<String[]> each) {
        if (key == null) {
            return;
        }
        samples++;
        if (keys.size() < 8) {
            keys.add(key);
        }
        for (String f : fieldsOfSample) {
            fields.merge(f, 1L, Long::sum);
        }
        if (each != null) {
            List<String> sorted = new ArrayList<>(fieldsOfSample);
            java.util.Collections.sort(sorted);
            each.accept(new String[] {key, String.join(",", sorted)});
        }
    }
}
