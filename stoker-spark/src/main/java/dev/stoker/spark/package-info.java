/**
 * {@code stoker prepare ... --spark MASTER}: preparing datasets as Spark jobs
 * ({@link dev.stoker.spark.Main}): token files ({@link dev.stoker.spark.SparkTokens}) and tar
 * shards ({@link dev.stoker.spark.SparkShards}), each task's output published whole by the driver
 * (NOTE [Task commit]) and what was published told by {@link dev.stoker.spark.Published}.
 */
package dev.stoker.spark;
