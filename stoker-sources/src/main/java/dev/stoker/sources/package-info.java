/**
 * Sources as values. Each {@link dev.stoker.sources.SourceSpec} (tokens, JSON lines, tar shards,
 * an image folder, HDF5, Parquet, named arrays, synthetic, ...) is a record of plain data; {@code open} turns it, with
 * a {@link dev.stoker.sources.LoaderSpec}, into a {@link dev.stoker.sources.Recipe} of loader
 * builders; {@link dev.stoker.sources.Specs} reads and writes both as JSON.
 */
package dev.stoker.sources;
