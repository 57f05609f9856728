/**
 * JSON lines and plain text.
 *
 * <p>A tour. {@link dev.stoker.formats.text.JsonlDataset} reads a JSON-lines file by index, one
 * sample per non-blank line, through a line index kept beside the file; {@code JsonLine} finds a
 * field's value in a line without building a tree.
 * {@link dev.stoker.formats.text.TextDocuments} reads the documents of a {@code .jsonl} or
 * {@code .txt} file front to back (gzip or zstd decompressed ahead of the parser), for tokenizing;
 * {@link dev.stoker.formats.text.TextStream} is those documents as a streaming dataset of
 * {@link dev.stoker.formats.text.Document}s, a plain file cut into newline-aligned ranges
 * ({@link dev.stoker.formats.text.TextRange}, which the Spark token job cuts its input into too).
 */
package dev.stoker.formats.text;
