package dev.stoker.storage;

import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A response body whose every read must return within a time limit. A read that waits longer (a
 * server or network that stalls mid-body) closes the body and fails with a
 * {@link SocketTimeoutException}, which {@link RetryingSource} retries, resuming at the last byte
 * received. A body that trickles, however slowly, never times out as long as each read brings
 * something within the limit. S3 bodies (through the AWS SDK) are read through it, so that the
 * limit is the same whatever the SDK's client does; HTTP bodies use the socket's read timeout
 * instead ({@link HttpSource}).
 */
final class ReadTimeout extends InputStream {
    // NOTE [Watchdog]: each read arms a timer on one shared scheduler thread and disarms it when
    // the read returns; a timer that fires closes the body, and closing unblocks a reader waiting
    // for bytes. The thread is a daemon and ends after a few idle seconds, so nothing outlives the
    // reads. A timer that fires just as a read returns closes the body early: the next read then
    // fails as timed out, and the retry resumes at the right byte all the same.
    private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

    private final InputStream body;
    private final Duration limit;
    private volatile boolean expired;

    ReadTimeout(InputStream body, Duration limit) {
        if (limit.isNegative() || limit.isZero()) {
            throw new IllegalArgumentException("a read timeout must be positive: " + limit);
        }
        this.body = body;
        this.limit = limit;
    }

    private static ScheduledThreadPoolExecutor watchdog() {
        var w = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "stoker-read-timeout");
            t.setDaemon(true);
            return t;
        });
        w.setRemoveOnCancelPolicy(true);
        w.setKeepAliveTime(5, TimeUnit.SECONDS);
        w.allowCoreThreadTimeOut(true);
        return w;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        ScheduledFuture<?> alarm = WATCHDOG.schedule(this::expire, limit.toNanos(), TimeUnit.NANOSECONDS);
        int n;
        try {
            n = body.read(b, off, len);
        } catch (IOException e) {
            throw expired ? timedOut(e) : e;
        } finally {
            alarm.cancel(false);
        }
        if (n < 0 && expired) {
            throw timedOut(null);
        }
        return n;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xFF;
    }

    private void expire() {
        expired = true;
        try {
            body.close();
        } catch (IOException | RuntimeException ignored) {
            // the read it unblocks reports the timeout
        }
    }

    private SocketTimeoutException timedOut(IOException cause) {
        var e = new SocketTimeoutException("read timed out: no bytes for " + limit.toMillis() + " ms");
        e.initCause(cause);
        return e;
    }

    @Override
    public void close() throws IOException {
        body.close();
    }
}
