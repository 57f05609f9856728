/**
 * CERN ROOT files read in pure Java, through {@link dev.stoker.storage.Storage} (a local file mapped,
 * an http(s):// or s3:// object by ranged reads). {@link dev.stoker.root.RootFile} is the file
 * layer: the header (small and large), the {@link dev.stoker.root.Key}s of each
 * {@link dev.stoker.root.Directory}, and ROOT's compressed blocks (zlib, LZ4 with its XXH64
 * checksum, ZSTD, LZMA, stored). {@link dev.stoker.root.RootFile#table} opens a tree of numeric
 * columns as a {@link dev.stoker.root.RootTable}: a TTree's branches, or an RNTuple's fields,
 * whose values arrive little-endian with element offsets for variable-length lists.
 */
package dev.stoker.root;
