/** HDF5 datasets (h5py's files) read by index through jHDF, in a module of their own so that jHDF comes only with it. */
module dev.stoker.hdf5 {
    requires transitive dev.stoker.core;
    requires dev.stoker.formats;
    requires io.jhdf;

    exports dev.stoker.hdf5;
}
