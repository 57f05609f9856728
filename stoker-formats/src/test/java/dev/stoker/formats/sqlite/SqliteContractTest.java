package dev.stoker.formats.sqlite;

import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.testing.LoaderContract;
import java.util.List;

/** The loader contract ({@link LoaderContract}) for SQLite events: ragged pulse features and truth scalars. */
class SqliteContractTest extends LoaderContract {
    @Override
    protected LoaderBuilder builder() throws Exception {
        return Loader.builder(closedAfter(new SqliteEvents(SqliteEventsTest.databases().resolve("unordered.db"), "pulses",
                "truth", "event_no", List.of("dom_x", "charge", "string"), List.of("energy"), null)));
    }

    @Override
    protected int batchSize() {
        return 32;
    }
}
