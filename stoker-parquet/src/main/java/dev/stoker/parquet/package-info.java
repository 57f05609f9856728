/**
 * Parquet files as datasets, from any store.
 *
 * <p>A tour. {@link dev.stoker.parquet.ParquetDataset} is a file's rows as samples, its projected
 * columns as batch fields, with a row filter ({@link dev.stoker.parquet.Where}) pushed down to the
 * row groups' statistics. Hardwood reads the metadata; {@code ParquetInput} reads byte ranges from
 * the file's location, {@code ChunkDecoder} decodes a column chunk's pages into {@code Values}
 * (plain zstd pages decompressed in place), and {@code Slabs} reuses the decoded row groups'
 * memory.
 */
package dev.stoker.parquet;
