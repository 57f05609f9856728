/**
 * LitData's optimized datasets ({@code index.json} and its {@code chunk-*.bin} files), read as
 * they are: {@link dev.stoker.formats.litdata.LitDataset}, the items' leaves
 * ({@link dev.stoker.formats.litdata.LitValues}) and the chunks' encryption
 * ({@link dev.stoker.formats.litdata.Fernet}).
 */
package dev.stoker.formats.litdata;
