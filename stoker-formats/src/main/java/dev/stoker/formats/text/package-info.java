/**
 * JSON lines and plain text.
 *
 * <p>A tour. {@link dev.stoker.formats.text.JsonlDataset} reads a JSON-lines file by index, one
 * sample per non-blank line, through a line index kept beside the file;
 * {@link dev.stoker.formats.text.TextStream} is a file's documents as a streaming dataset of
 * {@link dev.stoker.formats.text.Document}s, a plain file cut into newline-aligned ranges. What
 * they share with the token preparation and the Spark token job is in {@code .io}:
 * {@link dev.stoker.formats.io.JsonLine} finds a field's value in a line without building a
 * tree, {@link dev.stoker.formats.io.TextDocuments} reads the documents of a {@code .jsonl} or
 * {@code .txt} file front to back (gzip or zstd decompressed ahead of the parser), for
 * tokenizing, and {@link dev.stoker.formats.io.TextRange} is a newline-aligned piece of a file.
 */
package dev.stoker.formats.text;
