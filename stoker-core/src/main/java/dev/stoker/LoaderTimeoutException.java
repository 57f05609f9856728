package dev.stoker;

/** The consumer waited longer than the loader's timeout for a batch; the message says which. */
public final class LoaderTimeoutException extends LoaderException {
    LoaderTimeoutException(String message, String source) {
        super(message, source, -1, null);
    }
}
