/**
 * Arrow IPC files (the stream format Hugging Face {@code datasets} writes, and the file format),
 * read as they are, mapped, rows by index: {@link dev.stoker.formats.arrow.ArrowFile} and the
 * set of them a dataset is, {@link dev.stoker.formats.io.ArrowFiles}; the columns' types,
 * {@link dev.stoker.formats.arrow.ArrowType}, and values, {@link dev.stoker.formats.arrow.ArrowColumn}.
 */
package dev.stoker.formats.arrow;
