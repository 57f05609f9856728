/**
 * Stoker's own machinery shared between its modules and not part of its API: the decoded-block
 * cache the Parquet, HDF5 and ROOT readers keep row groups and chunks in, and the keyed
 * {@link dev.stoker.internal.Permutation} behind the core's shuffles and the token packer's document
 * order. Exported only to those modules (module-info).
 */
package dev.stoker.internal;
