package dev.stoker.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;

/**
 * A distribution {@code stoker inspect --plot} draws and {@code --json} lists: counts per
 * category (labels, shards) or per bin of a histogram (sizes, lengths).
 */
record Distribution(String name, String title, String x, List<String> labels, long[] counts) {

    /** Counts per category, in the map's order (at most {@code max} categories; the rest summed as "other"). */
    static Distribution categories(String name, String title, String x, Map<String, Long> counts, int max) {
        List<String> labels = new ArrayList<>();
        List<Long> values = new ArrayList<>();
        long other = 0;
        for (var e : counts.entrySet()) {
            if (labels.size() < max) {
                labels.add(e.getKey());
                values.add(e.getValue());
            } else {
                other += e.getValue();
            }
        }
        if (other > 0) {
            labels.add("other");
            values.add(other);
        }
        return new Distribution(name, title, x, labels, values.stream().mapToLong(Long::longValue).toArray());
    }

    /**
     * A histogram of {@code values} in {@code bins} equal bins between their minimum and maximum
     * (a bin is labelled by its lower edge), or one bin when they are all equal.
     */
    static Distribution histogram(String name, String title, String x, long[] values, int bins) {
        if (values.length == 0) {
            return new Distribution(name, title, x, List.of(), new long[0]);
        }
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (long v : values) {
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        int n = max == min ? 1 : (int) Math.min(bins, max - min + 1);
        double width = (max - min + 1) / (double) n;
        long[] counts = new long[n];
        for (long v : values) {
            counts[(int) Math.min(n - 1, (v - min) / width)]++;
        }
        List<String> labels = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            labels.add(Long.toString(min + (long) Math.ceil(i * width)));
        }
        return new Distribution(name, title, x, labels, counts);
    }

    void json(JsonGenerator g) throws IOException {
        g.writeObjectFieldStart(name);
        g.writeArrayFieldStart("labels");
        for (String l : labels) {
            g.writeString(l);
        }
        g.writeEndArray();
        g.writeArrayFieldStart("counts");
        for (long c : counts) {
            g.writeNumber(c);
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** Draws the distributions as bar charts, one under another, into one PNG. */
    static void plot(Path file, List<Distribution> all) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<BufferedImage> images = new ArrayList<>();
        for (Distribution d : all) {
            if (d.labels.isEmpty()) {
                continue;
            }
            CategoryChart chart = new CategoryChartBuilder().width(900).height(360).title(d.title)
                    .xAxisTitle(d.x).yAxisTitle("count").build();
            chart.getStyler().setLegendVisible(false);
            chart.getStyler().setXAxisLabelRotation(d.labels.size() > 12 ? 90 : 0);
            List<Double> ys = new ArrayList<>();
            for (long c : d.counts) {
                ys.add((double) c);
            }
            chart.addSeries(d.name, d.labels, ys);
            images.add(BitmapEncoder.getBufferedImage(chart));
        }
        if (images.isEmpty()) {
            throw new IOException("nothing to plot: these files have no distribution stoker inspect draws "
                    + "(tar shards: sample sizes, labels, samples per shard; Megatron datasets: document lengths)");
        }
        int height = images.stream().mapToInt(BufferedImage::getHeight).sum();
        BufferedImage page = new BufferedImage(900, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = page.createGraphics();
        int y = 0;
        for (BufferedImage i : images) {
            g.drawImage(i, 0, y, null);
            y += i.getHeight();
        }
        g.dispose();
        PngFile.write(file, page);
    }
}
