/** Batches to the GPU: pinned host memory and CUDA copies through the CUDA runtime, called over the FFM API. */
module dev.stoker.cuda {
    requires transitive dev.stoker.core;

    exports dev.stoker.cuda;
}
