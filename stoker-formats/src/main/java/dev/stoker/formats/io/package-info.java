/**
 * The I/O the formats share; Stoker's own, exported only to its other modules.
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
 */
package dev.stoker.formats.io;
