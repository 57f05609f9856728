/**
 * {@code stoker prepare ... --spark MASTER}: preparing datasets as Spark jobs
 * ({@link dev.stoker.spark.Main}): token files ({@link dev.stoker.spark.SparkTokens}) and tar
 * shards ({@link dev.stoker.spark.SparkShards}), each task's output published whole
 * ({@link dev.stoker.spark.TaskCommit}), in the session {@link dev.stoker.spark.SparkJobs} makes.
 */
package dev.stoker.spark;
