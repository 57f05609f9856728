package dev.stoker.cuda;

/** CUDA is missing, or a CUDA call failed: the message says which and why. */
public final class CudaException extends RuntimeException {
    public CudaException(String message) {
        super(message);
    }

    public CudaException(String message, Throwable cause) {
        super(message, cause);
    }
}
