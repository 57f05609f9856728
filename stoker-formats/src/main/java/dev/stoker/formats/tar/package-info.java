/**
 * WebDataset tar shards: read by index, streamed from any store, and written.
 *
 * <p>A tour. {@link dev.stoker.formats.io.TarReader} reads the members of a tar archive (ustar,
 * GNU, PAX; compressed or not), and {@link dev.stoker.formats.io.TarGrouping} is WebDataset's rule
 * that groups them into {@link dev.stoker.formats.tar.TarSample}s, one rule for every reader.
 * {@link dev.stoker.formats.tar.TarDataset} reads local uncompressed shards by index, through a
 * stored {@code TarIndex} of where each member lies; {@link dev.stoker.formats.tar.TarShards}
 * streams shards from any location (and {@link dev.stoker.formats.io.RemoteShards} reads remote
 * ones by index through a shard cache). {@link dev.stoker.formats.tar.Fields} decodes a sample's
 * common fields ({@code cls}, {@code txt}, {@code json}, {@code npy}).
 * {@link dev.stoker.formats.io.TarWriter} and {@link dev.stoker.formats.tar.ShardWriter} write
 * shards that WebDataset reads.
 */
package dev.stoker.formats.tar;
