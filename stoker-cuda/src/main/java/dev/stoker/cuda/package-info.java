/**
 * Batches to a GPU from the JVM. {@link dev.stoker.cuda.Cuda} is the CUDA runtime called through the
 * FFM API; {@link dev.stoker.cuda.PinnedAllocator} makes batch memory page-locked so that
 * {@link dev.stoker.cuda.DeviceCopier} can copy it to the device asynchronously while the next
 * batch is filled. A missing runtime or device is a {@link dev.stoker.cuda.CudaException} that says
 * so.
 */
package dev.stoker.cuda;
