/**
 * Benchmarks of the image kernels on one thread, each on its own: JPEG decoding
 * ({@link dev.stoker.bench.image.JpegDecodeBench}) and the resampling of random crops
 * ({@link dev.stoker.bench.image.ResampleBench}, vector against scalar), through the public
 * {@code Image.decode} and the resampler that stoker-formats keeps in its {@code io} package.
 */
package dev.stoker.bench.image;
