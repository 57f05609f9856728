package dev.stoker.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.stoker.Batch;
import dev.stoker.Field;
import dev.stoker.Loader;
import dev.stoker.formats.records.Numbers;
import dev.stoker.formats.io.RecordJson;
import dev.stoker.formats.records.RecordSource;
import dev.stoker.formats.records.Tensor;
import dev.stoker.sources.LoaderSpec;
import dev.stoker.sources.Recipe;
import dev.stoker.sources.SourceSpec;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.ValueLayout;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code stoker cat SOURCE PATH...}: samples in storage order, one JSON object per line
 * ({@link RecordJson}'s form). A record format's records are printed as the format holds them
 * (structs and lists kept); every other source's samples as its loader's fields, a row of each.
 * The sources and their flags are {@code stoker bench}'s.
 */
@Command(name = "cat", description = "Print samples in storage order, one JSON object per line: what a user types to see their data.")
final class CatCommand implements Runnable {
    @Option(names = "--limit", paramLabel = "N", description = "Print at most N samples (default: all).",
            scope = CommandLine.ScopeType.INHERIT)
    long limit = Long.MAX_VALUE;

    @Option(names = "--skip", paramLabel = "N", defaultValue = "0", description = "Skip the first N samples (default ${DEFAULT-VALUE}).",
            scope = CommandLine.ScopeType.INHERIT)
    long skip;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a source is needed (for example: mds DIR)");
    }

    /** Prints {@code source}'s samples {@code [skip, skip + limit)} to {@code out}, padded as {@code options} say. */
    int print(SourceSpec source, LoaderSpec options, PrintWriter out) throws IOException {
        if (limit < 0 || skip < 0) {
            throw new Main.UsageException("--limit and --skip take counts >= 0");
        }
        LoaderSpec sequential = storageOrder(64).toBuilder().pad(options.pad()).stack(options.stack()).stackDtype(options.stackDtype())
                .padValue(options.padValue()).lengths(options.lengths()).mask(options.mask()).build();
        boolean padded = !options.pad().isEmpty() || !options.stack().isEmpty();
        try (Recipe recipe = source.open(sequential);
             JsonGenerator g = new JsonFactory().createGenerator(out).setRootValueSeparator(null)) {
            g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            if (recipe.records().isPresent() && !padded) { // padded: as the loader makes the samples
                RecordSource records = recipe.records().get();
                long end = Math.min(records.size(), limit == Long.MAX_VALUE ? Long.MAX_VALUE : skip + limit);
                for (long i = skip; i < end; i++) {
                    line(g, out, records.get(i));
                }
                return 0;
            }
            long seen = 0;
            long printed = 0;
            try (Loader loader = sequential.start(recipe.builder(sequential), null).build()) {
                Iterator<Batch> it = loader.iterator();
                while (printed < limit && it.hasNext()) {
                    try (Batch b = it.next()) {
                        for (int r = 0; r < b.size() && printed < limit; r++, seen++) {
                            if (seen >= skip) {
                                line(g, out, row(recipe, b, r));
                                printed++;
                            }
                        }
                    }
                }
            }
        }
        return 0;
    }

    /** A loader's options that read a source in storage order, on the calling thread, in batches of {@code batch}. */
    static LoaderSpec storageOrder(int batch) {
        return LoaderSpec.builder().batchSize(batch).workers(0).order(LoaderSpec.Order.SEQUENTIAL).build();
    }

    private static void line(JsonGenerator g, PrintWriter out, Map<String, ?> record) throws IOException {
        RecordJson.write(g, record);
        g.flush();
        out.println();
    }

    /**
     * Row {@code r} of a batch as field name -> value: a tensor's row, or a variable field's value
     * as the source means it ({@link Recipe#shown}: a string's text), else its bytes.
     */
    private static Map<String, Object> row(Recipe recipe, Batch b, int r) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int f = 0; f < b.schema().size(); f++) {
            Field field = b.schema().field(f);
            byte[] bytes = b.bytes(f, r).toArray(ValueLayout.JAVA_BYTE);
            Object shown = field.isVariable() && !field.isRagged() ? recipe.shown(field.name(), bytes) : null;
            out.put(field.name(), shown != null ? shown
                    : field.isRagged() ? new Numbers(field.dtype(), bytes) // a list of numbers: a JSON array
                    : field.isVariable() ? bytes : new Tensor(field.dtype(), field.shape(), bytes));
        }
        return out;
    }
}
