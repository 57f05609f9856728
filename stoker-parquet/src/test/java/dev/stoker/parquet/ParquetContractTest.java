package dev.stoker.parquet;

import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.testing.LoaderContract;
import java.io.IOException;
import java.util.List;

/** The loader contract ({@link LoaderContract}) for Parquet: the rows of pyarrow's file, every column, zstd pages. */
class ParquetContractTest extends LoaderContract {
    @Override
    protected int batchSize() {
        return 512;
    }

    @Override
    protected LoaderBuilder builder() throws IOException {
        return Loader.builder(closedAfter(ParquetDataset.open(ParquetDatasetTest.fixture("zstd").toString(), ParquetDataset.Options.of().withCacheBytes(8 << 20))));
    }
}
