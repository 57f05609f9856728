package dev.stoker.cli;

import dev.stoker.sources.LocalCopies;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/**
 * {@code stoker ls SHARD...}: one line per sample, in shard order: KEY, a tab, its fields sorted.
 * Another loader's format (an MDS or LitData folder, Arrow, TFRecord, ArrayRecord files) lists
 * each record's index as its key.
 */
@Command(name = "ls", description = "List the samples of tar shards: KEY<TAB>FIELD,FIELD,... (fields sorted), in shard order "
        + "(for other loaders' formats, the record's index as its key).")
final class LsCommand implements Callable<Integer> {
    @Parameters(paramLabel = "SHARD", arity = "1..*", description = "Tar shards or brace patterns (train-{000000..000009}.tar), "
            + "local paths or http(s):// and s3:// URLs (read through the cache).")
    List<String> shards;

    @picocli.CommandLine.Mixin
    CacheOptions cache;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        List<String> expanded = Main.expand(shards);
        try (LocalCopies files = new LocalCopies(expanded, cache.spec())) {
            List<Path> local = files.paths();
            for (int i = 0; i < local.size(); i++) {
                String records = RecordSummary.format(local.get(i));
                if (records != null) { // another loader's format: each record's index and fields
                    RecordSummary.list(local.get(i), records, out);
                    continue;
                }
                if (!Files.isRegularFile(local.get(i))) {
                    throw new NoSuchFileException(expanded.get(i));
                }
                TarSummary.of(local.get(i), kf -> out.append(kf[0]).append('\t').append(kf[1]).append('\n'));
            }
        }
        out.flush();
        return 0;
    }
}
