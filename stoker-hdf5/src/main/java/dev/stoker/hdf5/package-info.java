/**
 * HDF5 files, as h5py writes them, read by index: {@link dev.stoker.hdf5.Hdf5Dataset} serves the
 * rows of one or more datasets of a file (contiguous or chunked, compressed or not) through jHDF,
 * decompressing each chunk once per pass.
 */
package dev.stoker.hdf5;
