package dev.stoker.parquet;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.zip.DataFormatException;
import java.util.zip.GZIPInputStream;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;

/**
 * Page decompression for reading, on maintained libraries directly: zstd-jni, snappy-java,
 * lz4-java (LZ4_RAW) and the JDK's inflater (GZIP). Parquet's own factory goes through Hadoop's
 * codec classes and builds a Hadoop {@code Configuration} (which parses XML) for every codec;
 * this one needs neither. LZO, BROTLI and Hadoop-framed LZ4 are refused with the codec's name.
 */
final class Codecs implements CompressionCodecFactory {
    static final Codecs INSTANCE = new Codecs();

    @Override
    public BytesInputCompressor getCompressor(CompressionCodecName codec) {
        throw new UnsupportedOperationException("Stoker reads Parquet; it does not write it");
    }

    @Override
    public BytesInputDecompressor getDecompressor(CompressionCodecName codec) {
        return switch (codec) {
            case UNCOMPRESSED -> new Decompressor(codec) {
                @Override
                int decompress(byte[] in, int inLength, byte[] out, int outLength) {
                    System.arraycopy(in, 0, out, 0, Math.min(inLength, outLength));
                    return inLength;
                }
            };
            case ZSTD -> new Decompressor(codec) {
                @Override
                int decompress(byte[] in, int inLength, byte[] out, int outLength) {
                    long n = com.github.luben.zstd.Zstd.decompressByteArray(out, 0, outLength, in, 0, inLength);
                    if (com.github.luben.zstd.Zstd.isError(n)) {
                        throw new IllegalStateException("zstd: " + com.github.luben.zstd.Zstd.getErrorName(n));
                    }
                    return (int) n;
                }
            };
            case SNAPPY -> new Decompressor(codec) {
                @Override
                int decompress(byte[] in, int inLength, byte[] out, int outLength) throws IOException {
                    return org.xerial.snappy.Snappy.uncompress(in, 0, inLength, out, 0);
                }
            };
            case LZ4_RAW -> new Decompressor(codec) {
                private final net.jpountz.lz4.LZ4SafeDecompressor lz4 = net.jpountz.lz4.LZ4Factory.fastestInstance().safeDecompressor();

                @Override
                int decompress(byte[] in, int inLength, byte[] out, int outLength) {
                    return lz4.decompress(in, 0, inLength, out, 0, outLength);
                }
            };
            case GZIP -> new Decompressor(codec) {
                @Override
                int decompress(byte[] in, int inLength, byte[] out, int outLength) throws IOException {
                    try (GZIPInputStream z = new GZIPInputStream(new java.io.ByteArrayInputStream(in, 0, inLength), 1 << 16)) {
                        int n = z.readNBytes(out, 0, outLength);
                        if (z.read() != -1) {
                            throw new IOException("gzip: more than the " + outLength + " bytes the page header announced");
                        }
                        return n;
                    }
                }
            };
            default -> throw new UnsupportedOperationException("Parquet codec " + codec + " is not supported (supported: "
                    + "UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4_RAW)");
        };
    }

    @Override
    public void release() {
    }

    /** Decompresses whole pages between byte arrays; a page that does not come out at its announced size is an error. */
    private abstract static class Decompressor implements BytesInputDecompressor {
        private final CompressionCodecName codec;

        Decompressor(CompressionCodecName codec) {
            this.codec = codec;
        }

        abstract int decompress(byte[] in, int inLength, byte[] out, int outLength) throws IOException, DataFormatException;

        @Override
        public BytesInput decompress(BytesInput bytes, int uncompressedSize) throws IOException {
            byte[] in = bytes.toByteArray();
            byte[] out = new byte[uncompressedSize];
            run(in, in.length, out, uncompressedSize);
            return BytesInput.from(out);
        }

        @Override
        public void decompress(ByteBuffer input, int compressedSize, ByteBuffer output, int decompressedSize) throws IOException {
            byte[] in = new byte[compressedSize];
            input.get(in);
            byte[] out = new byte[decompressedSize];
            run(in, compressedSize, out, decompressedSize);
            output.put(out);
        }

        private void run(byte[] in, int inLength, byte[] out, int outLength) throws IOException {
            int n;
            try {
                n = decompress(in, inLength, out, outLength);
            } catch (IOException e) {
                throw new IOException(codec + " page: " + e.getMessage(), e);
            } catch (Exception e) {
                throw new IOException(codec + " page: " + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()), e);
            }
            if (n != outLength) {
                throw new IOException(codec + " page: " + n + " bytes decompressed, the page header says " + outLength);
            }
        }

        @Override
        public void release() {
        }
    }
}
