/**
 * Bytes by location: local files, HTTP(S), S3-compatible stores and memory, behind one interface.
 *
 * <p>A tour. {@link dev.stoker.storage.Storage} opens, sizes, lists and reads ranges of any
 * location, and {@link dev.stoker.storage.Store} is what it mounts under a prefix: what every
 * format reads through. {@link dev.stoker.storage.Locations} says what a location is without
 * opening it (remote or local, a listing or one object, its name) and words it for a user, secrets
 * redacted. Remote reads are {@code RetryingSource}s ({@code HttpSource}, {@code S3Objects}) that
 * retry and resume where they were cut, and the test-jar's {@code testing.MemoryStore} injects
 * faults for tests. {@link dev.stoker.storage.ShardCache} keeps downloaded shards within a byte
 * limit shared by every process, {@link dev.stoker.storage.Stager} copies a dataset to fast local
 * storage, and {@link dev.stoker.storage.ShardPattern} expands WebDataset's brace patterns.
 * Checksums ({@code Crc64Nvme}) are S3's own. The files Stoker writes for itself (published
 * whole, temporaries removed on every way out, folders of the user's own) are in {@code .io}.
 */
package dev.stoker.storage;
