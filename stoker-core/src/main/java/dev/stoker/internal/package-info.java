/**
 * Stoker's own machinery shared between its modules and not part of its API: the decoded-block
 * cache the Parquet and HDF5 readers keep row groups and chunks in. Exported only to those
 * modules (module-info).
 */
package dev.stoker.internal;
