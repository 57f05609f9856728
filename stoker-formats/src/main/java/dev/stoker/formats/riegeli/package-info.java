/**
 * Riegeli/records files and the ArrayRecord files (Grain's format) made of them:
 * {@link dev.stoker.formats.riegeli.Riegeli} reads chunks, their HighwayHash
 * ({@link dev.stoker.formats.riegeli.HighwayHash}) checked, and
 * {@link dev.stoker.formats.riegeli.ArrayRecordFile} (NOTE [ArrayRecord]) finds a record by index.
 */
package dev.stoker.formats.riegeli;
