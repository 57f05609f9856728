/**
 * MosaicML Streaming's MDS datasets ({@code index.json} and {@code shard.NNNNN.mds} files), read
 * as they are: {@link dev.stoker.formats.mds.MdsDataset} (NOTE [MDS]) and its columns'
 * encodings, {@link dev.stoker.formats.mds.MdsColumn}.
 */
package dev.stoker.formats.mds;
