package dev.stoker.cli;

import dev.stoker.storage.Stager;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code stoker stage SRC DEST}: copies a dataset to fast local storage, checking free space first. */
@Command(name = "stage", description = "Copies a dataset to fast local storage (for example /dev/shm) with progress and a free-space check; "
        + "files already there with the right size are kept, so an interrupted staging resumes.")
final class StageCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "SRC", description = "A local file or directory, a brace pattern of local or remote shards, "
            + "an http(s):// URL, or an s3://bucket/prefix (or glob: s3://bucket/train/*.tar).")
    String source;

    @Parameters(index = "1", paramLabel = "DEST", description = "The directory to copy into.")
    Path dest;

    @Option(names = "--json", description = "Print one JSON object instead of a sentence.")
    boolean json;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        List<Stager.Item> items;
        try {
            items = Stager.plan(source);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageException(e.getMessage());
        }
        long total = items.stream().mapToLong(Stager.Item::size).sum();
        long start = System.nanoTime();
        ProgressBar bar = !json && System.console() != null
                ? new ProgressBarBuilder().setTaskName("stage").setInitialMax(total).setStyle(ProgressBarStyle.ASCII)
                .setUpdateIntervalMillis(200).setUnit(" MB", 1_000_000).showSpeed().build()
                : null;
        Stager.Result r;
        try {
            r = Stager.stage(items, dest, n -> {
                if (bar != null) {
                    bar.stepBy(n);
                }
            });
        } finally {
            if (bar != null) {
                bar.close();
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.printf(Locale.ROOT, "{\"files\":%d,\"copied\":%d,\"kept\":%d,\"bytes_copied\":%d,\"bytes_total\":%d,\"seconds\":%.3f}%n",
                    r.files(), r.copied(), r.kept(), r.bytesCopied(), r.bytesTotal(), seconds);
        } else {
            out.printf(Locale.ROOT, "staged %d files (%.1f MB) in %s: %d copied, %d already there; %.2f s, %.0f MB/s%n",
                    r.files(), r.bytesTotal() / 1e6, dest, r.copied(), r.kept(), seconds,
                    r.bytesCopied() / 1e6 / Math.max(seconds, 1e-9));
        }
        return 0;
    }
}
