/**
 * Other loaders' record formats, read as they are: the shared model of a record
 * ({@link dev.stoker.formats.records.RecordSource}, NOTE [Records]), the loader's view of it
 * ({@link dev.stoker.formats.records.RecordDataset}) and {@code stoker cat}'s JSON form
 * ({@link dev.stoker.formats.io.RecordJson}). The formats are in {@code .mds},
 * {@code .tfrecord} and {@code .riegeli}.
 */
package dev.stoker.formats.records;
