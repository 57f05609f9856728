package dev.stoker.cli;

import dev.stoker.formats.ShardPattern;
import dev.stoker.formats.TarSummary;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code stoker ls SHARD...}: one line per sample, in shard order: KEY, a tab, its fields sorted. */
@Command(name = "ls", description = "List the samples of tar shards: KEY<TAB>FIELD,FIELD,... (fields sorted), in shard order.")
final class LsCommand implements Callable<Integer> {
    @Parameters(paramLabel = "SHARD", arity = "1..*", description = "Tar shards or brace patterns (train-{000000..000009}.tar).")
    List<String> shards;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        for (String pattern : shards) {
            List<String> expanded;
            try {
                expanded = ShardPattern.expand(pattern);
            } catch (IllegalArgumentException e) {
                throw new Main.UsageException(e.getMessage());
            }
            for (String s : expanded) {
                Path p = Path.of(s);
                if (!Files.isRegularFile(p)) {
                    throw new NoSuchFileException(s);
                }
                TarSummary.of(p, kf -> out.append(kf[0]).append('\t').append(kf[1]).append('\n'));
            }
        }
        out.flush();
        return 0;
    }
}
