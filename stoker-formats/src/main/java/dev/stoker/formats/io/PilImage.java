package dev.stoker.formats.io;

import dev.stoker.DType;
import dev.stoker.formats.records.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A PIL image as MDS's and LitData's {@code pil} encodings store it: {@code u32 width, u32 height,
 * u32 len(mode), mode, raw pixels}. Modes L, RGB and RGBA become a uint8 tensor of shape
 * {@code [height, width(, channels)]}; other modes their raw bytes.
 */
public final class PilImage {
    private PilImage() {
    }

    /** The image's value; IllegalArgumentException when the bytes are not one. */
    public static Object decode(byte[] b) {
        if (b.length < 12) {
            throw new IllegalArgumentException("a PIL image of " + b.length + " bytes ends inside its header");
        }
        ByteBuffer h = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        long w = Integer.toUnsignedLong(h.getInt(0));
        long ht = Integer.toUnsignedLong(h.getInt(4));
        long modeLen = Integer.toUnsignedLong(h.getInt(8));
        if (modeLen > b.length - 12) {
            throw new IllegalArgumentException("a PIL image ends inside its mode");
        }
        String mode = new String(b, 12, (int) modeLen, StandardCharsets.US_ASCII);
        byte[] raw = Arrays.copyOfRange(b, 12 + (int) modeLen, b.length);
        int channels = switch (mode) {
            case "L" -> 1;
            case "RGB" -> 3;
            case "RGBA" -> 4;
            default -> 0;
        };
        if (channels == 0) {
            return raw;
        }
        if (w * ht * channels != raw.length) {
            throw new IllegalArgumentException("a " + w + "x" + ht + " " + mode + " image needs " + w * ht * channels
                    + " bytes; the value has " + raw.length);
        }
        long[] shape = channels == 1 ? new long[] {ht, w} : new long[] {ht, w, channels};
        return new Tensor(DType.UINT8, shape, raw);
    }
}
