package dev.stoker.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;

/** A PNG of a bench sweep: throughput (bars) and the consumer's wait, the accelerator's idle time, per configuration. */
final class SweepPlot {
    private SweepPlot() {
    }

    static void write(Path file, String source, List<BenchRunner.Result> results) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<String> labels = new ArrayList<>();
        List<Double> rates = new ArrayList<>();
        List<Double> idle = new ArrayList<>();
        for (BenchRunner.Result r : results) {
            labels.add("w" + r.workersLabel() + " p" + r.prefetchLabel());
            rates.add(r.samplesPerSec());
            idle.add(100 * r.waitFraction());
        }
        CategoryChart chart = new CategoryChartBuilder().width(900).height(500)
                .title("stoker bench " + source + ": throughput and accelerator idle time")
                .xAxisTitle("configuration (workers, prefetch)").yAxisTitle("samples/s").build();
        chart.getStyler().setLegendVisible(true);
        chart.setYAxisGroupTitle(1, "accelerator idle (%)");
        chart.getStyler().setYAxisGroupPosition(1, org.knowm.xchart.style.Styler.YAxisPosition.Right);
        chart.getStyler().setOverlapped(false);
        chart.addSeries("samples/s", labels, rates);
        CategorySeries wait = chart.addSeries("accelerator idle %", labels, idle);
        wait.setYAxisGroup(1);
        PngFile.write(file, BitmapEncoder.getBufferedImage(chart));
    }
}
