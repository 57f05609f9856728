/**
 * Bytes by location: local files, HTTP(S), S3-compatible stores and memory, behind one interface.
 *
 * <p>A tour. {@link dev.stoker.storage.Storage} opens, sizes, lists and reads ranges of any
 * location, and {@link dev.stoker.storage.Store} is what it mounts under a prefix: what every
 * format reads through. Remote reads are {@link dev.stoker.storage.RetryingSource}s
 * ({@link dev.stoker.storage.HttpSource}, {@link dev.stoker.storage.S3Objects}) that retry and
 * resume where they were cut, and the test-jar's {@code testing.MemoryStore} injects faults for tests.
 * {@link dev.stoker.storage.ShardCache} keeps downloaded shards within a byte limit shared by every
 * process, {@link dev.stoker.storage.Stager} copies a dataset to fast local storage, and
 * {@link dev.stoker.storage.ShardPattern} expands WebDataset's brace patterns. Checksums
 * ({@link dev.stoker.storage.Crc64Nvme}) are S3's own; {@link dev.stoker.storage.Temporaries}
 * removes half-written files and a process's folders on every way out, and {@code Folders} keeps
 * what is trusted later in folders of the user's own (NOTE [Folders of one's own]).
 */
package dev.stoker.storage;
