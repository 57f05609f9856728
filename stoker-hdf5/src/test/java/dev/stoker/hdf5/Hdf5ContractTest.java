package dev.stoker.hdf5;

import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.testing.LoaderContract;
import java.io.IOException;
import java.util.List;

/** The loader contract ({@link LoaderContract}) for HDF5: the rows of h5py's file, chunked and compressed. */
class Hdf5ContractTest extends LoaderContract {
    @Override
    protected LoaderBuilder builder() throws IOException {
        return Loader.builder(closedAfter(new Hdf5Dataset(Hdf5DatasetTest.fixture("default.h5"), List.of("/x", "/y"))));
    }
}
