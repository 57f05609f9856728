/**
 * What the formats share with each other and with Stoker's other modules (the sources, the
 * command line, the Spark jobs, the benchmarks); Stoker's own, exported only to its other modules.
 *
 * <p>A tour. {@link dev.stoker.formats.io.MappedFile} maps a file for reading by index, and
 * {@link dev.stoker.formats.io.MappedInputStream} reads one front to back through that mapping.
 * {@link dev.stoker.formats.io.Compression} is the one place where a file's first bytes are sniffed
 * for gzip ({@link dev.stoker.formats.io.Gunzip}, ISA-L when the system has it), zstd or lz4, and
 * {@link dev.stoker.formats.io.ReadAhead} runs a decompressor on a thread of its own, ahead of the
 * parser. {@link dev.stoker.formats.io.Sidecar} keeps an index beside the file it describes (or in
 * the user's cache), and {@link dev.stoker.formats.io.Fingerprints} proves that it still belongs
 * there. Files are written as {@link dev.stoker.storage.io.PendingFile}s: under a hidden name until
 * they are complete.
 *
 * <p>Tar archives member by member: {@link dev.stoker.formats.io.TarReader} and
 * {@link dev.stoker.formats.io.TarWriter}, {@link dev.stoker.formats.io.TarGrouping} (WebDataset's
 * rule for grouping members into samples, one rule for the tar package's readers, {@code ls} and
 * {@code inspect}) and {@link dev.stoker.formats.io.RemoteShards} (shards read by index through a
 * shard cache). Text for tokenizing: {@link dev.stoker.formats.io.JsonLine},
 * {@link dev.stoker.formats.io.TextDocuments}, {@link dev.stoker.formats.io.TextRange} and
 * {@link dev.stoker.formats.io.TokenPreparer} (a corpus tokenized once, for {@code stoker prepare}
 * and the Spark job). Records: {@link dev.stoker.formats.io.RecordJson} ({@code stoker cat}'s JSON,
 * which the interop tests compare with the other loaders' writers), {@link dev.stoker.formats.io.PilImage}
 * (MDS's and LitData's PIL images) and {@link dev.stoker.formats.io.ArrowFiles} (the Arrow files a
 * path names). Images: {@link dev.stoker.formats.io.Resampler} resizes a crop with torchvision's
 * antialiased kernels ({@code ResampleKernels}, {@code VectorKernels}: NOTE [Vector API]).
 */
package dev.stoker.formats.io;
