package dev.stoker.formats.io;

import dev.stoker.CorruptRecordException;
import dev.stoker.DType;
import dev.stoker.ErrorPolicy;
import dev.stoker.formats.tokens.MegatronWriter;
import dev.stoker.formats.tokens.Tokenizer;
import dev.stoker.storage.io.PendingFile;
import dev.stoker.formats.npy.Npy;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Text and JSON lines to token files: each document is tokenized and followed by the tokenizer's
 * end-of-text id, and the documents are written in input order as a raw {@code .bin}, a
 * one-dimensional {@code .npy}, or a Megatron indexed dataset.
 *
 * <p>NOTE [Prepare]: the reading thread cuts the input into chunks of documents; workers tokenize
 * chunks in parallel; the writer takes finished chunks strictly in order, at most a bounded number
 * ahead. So the output is the same bytes for any number of workers, and memory stays bounded.
 * Output goes to temporary files renamed into place at the end: an interrupted run never leaves a
 * file that looks complete.
 */
public final class TokenPreparer {

    /** Output formats. */
    public enum Format {
        BIN, NPY, MEGATRON;

        /** {@code bin}, {@code npy} or {@code megatron}, as the command line names them. */
        public static Format named(String name) {
            return switch (name) {
                case "bin" -> BIN;
                case "npy" -> NPY;
                case "megatron" -> MEGATRON;
                default -> throw new IllegalArgumentException("--format must be bin, npy or megatron, got '" + name + "'");
            };
        }
    }

    /** What a run did. */
    public record Summary(long documents, long tokens, long skipped, double seconds, List<Path> outputs) {
        public double tokensPerSecond() {
            return seconds == 0 ? 0 : tokens / seconds;
        }
    }

    private static final int CHUNK_CHARS = 1 << 20;

    private final Tokenizer tokenizer;
    private final Format format;
    private final String field;
    private final ErrorPolicy errors;
    private final int workers;
    private final AtomicLong bytesRead = new AtomicLong();
    private final AtomicLong tokensWritten = new AtomicLong();

    /**
     * {@code errors} for a malformed line: {@link ErrorPolicy#FAIL} stops the run naming the file
     * and line, {@link ErrorPolicy#SKIP_SAMPLE} leaves the line out and
     * {@link ErrorPolicy#SKIP_SHARD} the rest of its file, counted in {@link Summary#skipped()}.
     */
    public TokenPreparer(Tokenizer tokenizer, Format format, String field, ErrorPolicy errors, int workers) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, got " + workers);
        }
        this.tokenizer = tokenizer;
        this.format = format;
        this.field = field;
        this.errors = java.util.Objects.requireNonNull(errors, "errors");
        this.workers = workers;
    }

    /** Bytes of input read so far (compressed), for progress. */
    public long bytesRead() {
        return bytesRead.get();
    }

    public long tokensWritten() {
        return tokensWritten.get();
    }

    /** The token type of the output: the tokenizer's, int32 for Megatron when ids need 32 bits. */
    public DType outputType() {
        DType t = tokenizer.tokenType();
        return format == Format.MEGATRON && t == DType.UINT32 ? DType.INT32 : t;
    }

    /** The files a run with {@code prefix} writes. */
    public List<Path> outputs(Path prefix) {
        String p = strip(prefix.toString());
        return switch (format) {
            case BIN -> List.of(Path.of(p + ".bin"));
            case NPY -> List.of(Path.of(p + ".npy"));
            case MEGATRON -> List.of(Path.of(p + ".bin"), Path.of(p + ".idx"));
        };
    }

    private static String strip(String p) {
        for (String ext : new String[] {".bin", ".npy", ".idx"}) {
            if (p.endsWith(ext)) {
                return p.substring(0, p.length() - ext.length());
            }
        }
        return p;
    }

    /** Tokenizes {@code inputs} in order into the files {@link #outputs} names for {@code prefix}. */
    public Summary run(List<Path> inputs, Path prefix) throws IOException {
        return runRanges(inputs.stream().map(TextRange::whole).toList(), prefix);
    }

    /**
     * Tokenizes the pieces of files {@code inputs} in order ({@link TextRange#cut}): the same
     * bytes as {@link #run} over the whole files, for any cut.
     */
    public Summary runRanges(List<TextRange> inputs, Path prefix) throws IOException {
        return run(prefix, chunks -> {
            long skipped = 0;
            for (TextRange input : inputs) {
                try (TextDocuments docs = input.open(field, bytesRead)) {
                    while (true) {
                        String d;
                        try {
                            d = docs.next();
                        } catch (CorruptRecordException e) {
                            if (errors == ErrorPolicy.FAIL) {
                                throw e;
                            }
                            skipped++;
                            if (errors == ErrorPolicy.SKIP_SHARD) {
                                break;
                            }
                            continue;
                        }
                        if (d == null) {
                            break;
                        }
                        chunks.add(d);
                    }
                    chunks.flush();
                }
            }
            return skipped;
        });
    }

    /**
     * Tokenizes {@code documents} in order (a table's text column, say): the same bytes as
     * {@link #runRanges} over files holding the same documents. A null document is refused.
     */
    public Summary runDocuments(java.util.Iterator<String> documents, Path prefix) throws IOException {
        return run(prefix, chunks -> {
            long n = 0;
            while (documents.hasNext()) {
                String d = documents.next();
                if (d == null) {
                    throw new IllegalArgumentException(prefix + ": document " + n + " is null (no text)");
                }
                chunks.add(d);
                n++;
            }
            chunks.flush();
            return 0;
        });
    }

    /** Documents handed to the tokenizing workers in chunks of about {@link #CHUNK_CHARS}. */
    private interface Chunks {
        void add(String document) throws IOException;

        /** Submits the chunk so far: at the end of each input. */
        void flush() throws IOException;
    }

    /** A source of documents feeding {@link Chunks}; returns how many malformed ones it skipped. */
    @FunctionalInterface
    private interface Feed {
        long into(Chunks chunks) throws IOException;
    }

    private Summary run(Path prefix, Feed feed) throws IOException {
        long t0 = System.nanoTime();
        List<Path> outs = outputs(prefix);
        Sink sink = switch (format) {
            case BIN -> new RawSink(outs.get(0), outputType(), false);
            case NPY -> new RawSink(outs.get(0), outputType(), true);
            case MEGATRON -> new MegatronSink(new MegatronWriter(Path.of(strip(prefix.toString())), outputType()));
        };
        ExecutorService pool = Executors.newFixedThreadPool(workers, r -> {
            Thread t = new Thread(r, "stoker-tokenize");
            t.setDaemon(true);
            return t;
        });
        long[] documents = {0};
        long skipped;
        boolean ok = false;
        try {
            ArrayDeque<Future<int[][]>> window = new ArrayDeque<>();
            skipped = feed.into(new Chunks() {
                private List<String> chunk = new ArrayList<>();
                private long chars;

                @Override
                public void add(String d) throws IOException {
                    chunk.add(d);
                    chars += d.length();
                    if (chars >= CHUNK_CHARS) {
                        flush();
                    }
                }

                @Override
                public void flush() throws IOException {
                    documents[0] += submit(pool, window, chunk, sink);
                    chunk = new ArrayList<>();
                    chars = 0;
                }
            });
            while (!window.isEmpty()) {
                write(window.poll(), sink);
            }
            sink.finish();
            ok = true;
        } finally {
            pool.shutdownNow();
            if (!ok) {
                sink.abandon();
            }
        }
        return new Summary(documents[0], tokensWritten.get(), skipped, (System.nanoTime() - t0) / 1e9, outs);
    }

    private int submit(ExecutorService pool, ArrayDeque<Future<int[][]>> window, List<String> chunk, Sink sink)
            throws IOException {
        if (chunk.isEmpty()) {
            return 0;
        }
        List<String> docs = chunk;
        window.add(pool.submit(() -> {
            int[][] out = new int[docs.size()][];
            for (int i = 0; i < out.length; i++) {
                out[i] = tokenizer.encode(docs.get(i));
            }
            return out;
        }));
        while (window.size() > 2 * workers) {
            write(window.poll(), sink);
        }
        return docs.size();
    }

    private void write(Future<int[][]> f, Sink sink) throws IOException {
        int[][] docs;
        try {
            docs = f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IOException("tokenizing failed: " + e.getCause(), e.getCause());
        }
        for (int[] d : docs) {
            sink.document(d, tokenizer.endOfText());
            tokensWritten.addAndGet(d.length + 1L);
        }
    }

    private interface Sink {
        void document(int[] tokens, int endOfText) throws IOException;

        void finish() throws IOException;

        void abandon() throws IOException;
    }

    /** Raw tokens, or a .npy whose header is written last (its size is known only at the end). */
    private static final class RawSink implements Sink {
        private static final int NPY_HEADER = 128;
        private final PendingFile file;
        private final DType type;
        private final boolean npy;
        private final ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        private long count;

        RawSink(Path target, DType type, boolean npy) throws IOException {
            this.file = new PendingFile(target);
            this.type = type;
            this.npy = npy;
            if (npy) {
                file.out().write(new byte[NPY_HEADER]); // room for the header, written at the end
            }
        }

        @Override
        public void document(int[] tokens, int endOfText) throws IOException {
            for (int t : tokens) {
                put(t);
            }
            put(endOfText);
            count += tokens.length + 1L;
        }

        private void put(int t) throws IOException {
            if (buf.remaining() < 4) {
                flush();
            }
            if (type == DType.UINT16) {
                buf.putShort((short) t);
            } else {
                buf.putInt(t);
            }
        }

        private void flush() throws IOException {
            file.out().write(buf.array(), 0, buf.position());
            buf.clear();
        }

        @Override
        public void finish() throws IOException {
            flush();
            if (npy) {
                file.out().flush();
                file.writeAt(ByteBuffer.wrap(Npy.header(type, new long[] {count}, NPY_HEADER)), 0);
            }
            file.commit();
        }

        @Override
        public void abandon() throws IOException {
            file.abandon();
        }
    }

    private record MegatronSink(MegatronWriter writer) implements Sink {
        @Override
        public void document(int[] tokens, int endOfText) throws IOException {
            int[] withEot = java.util.Arrays.copyOf(tokens, tokens.length + 1);
            withEot[tokens.length] = endOfText;
            writer.add(withEot, withEot.length);
        }

        @Override
        public void finish() throws IOException {
            writer.close();
        }

        @Override
        public void abandon() throws IOException {
            writer.abandon();
        }
    }
}
