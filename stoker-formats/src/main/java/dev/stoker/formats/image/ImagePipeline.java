package dev.stoker.formats.image;

import dev.stoker.Collator;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.SampleContext;
import dev.stoker.Schema;
import dev.stoker.Transform;
import dev.stoker.formats.TarSample;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * The image classification pipeline with torchvision's semantics, from a sample with a
 * {@code jpg} (or {@code jpeg}/{@code png}) field and a {@code cls} field to batch fields
 * {@code image} (float32 [3, size, size], ImageNet mean/std) and {@code label} (int64). The image
 * decodes by its bytes, as Pillow's does, whatever its field is called: JPEG (RGB, grayscale,
 * CMYK) through libjpeg-turbo, anything else through {@code javax.imageio}.
 *
 * <ul>
 *   <li>{@link #train}: {@code RandomResizedCrop(size, scale=(0.08, 1), ratio=(3/4, 4/3))},
 *       {@code RandomHorizontalFlip()}, normalize.</li>
 *   <li>{@link #eval}: {@code Resize(size * 8 / 7)} + {@code CenterCrop(size)} (256/224), normalize.</li>
 * </ul>
 * Either gives float32 CHW normalized by ImageNet's mean and std, or, {@link #uint8()}, the
 * pixels as uint8 CHW for the GPU to normalize.
 * Random choices come from the sample's seed ({@link SampleContext#seed()}: the loader's seed, the
 * epoch and the sample), so they do not depend on which worker ran them. The transform decodes
 * (at a reduced DCT scale when the crop allows) into its thread's image and resamples the crop to
 * uint8 planes from a pool; the collator normalizes those into the batch row and returns them
 * (NOTE [Images]).
 */
public final class ImagePipeline {
    public static final float[] MEAN = {0.485f, 0.456f, 0.406f};
    public static final float[] STD = {0.229f, 0.224f, 0.225f};

    /** What the transform hands the collator: the resampled image as uint8 planes R, G, B of size², and the label. */
    public record Prepared(byte[] chw, long label) implements dev.stoker.Sized {
        @Override
        public long byteSize() {
            return chw.length + 8L;
        }
    }

    private final int size;
    private final boolean train;
    private final boolean uint8;
    // NOTE [Images]: a transform's planes travel with their sample until the collator has
    // normalized them (with a streaming dataset, on another thread, much later), then go back to
    // this pool; so none is reused while a sample still needs it, and the steady state allocates none.
    private final java.util.concurrent.ArrayBlockingQueue<byte[]> planes = new java.util.concurrent.ArrayBlockingQueue<>(4096);
    private final ThreadLocal<Image> images = ThreadLocal.withInitial(Image::new);
    private final ThreadLocal<Resampler> resamplers = ThreadLocal.withInitial(Resampler::new);
    private final Schema schema;

    private ImagePipeline(int size, boolean train, boolean uint8) {
        this.size = size;
        this.train = train;
        this.uint8 = uint8;
        this.schema = Schema.of(Field.tensor("image", uint8 ? DType.UINT8 : DType.FLOAT32, 3, size, size),
                Field.scalar("label", DType.INT64));
        // load libjpeg-turbo and bind its functions now, as building a pipeline should, rather
        // than in the first sample, where one worker does it (60-80 ms) while the others wait
        Jpeg.native_();
    }

    public static ImagePipeline train(int size) {
        return new ImagePipeline(size, true, false);
    }

    public static ImagePipeline eval(int size) {
        return new ImagePipeline(size, false, false);
    }

    /**
     * The same pipeline with images as uint8 CHW (pixels 0..255, not normalized), as FFCV and DALI
     * hand them over: the GPU normalizes them ({@code (x / 255 - MEAN) / STD}), and the copy to it
     * moves a quarter of the bytes of float32.
     */
    public ImagePipeline uint8() {
        return new ImagePipeline(size, train, true);
    }

    /** Decode, and choose the crop. */
    public Transform<TarSample, Prepared> transform() {
        return (s, ctx) -> {
            MemorySegment bytes = s.fields().get("jpg");
            if (bytes == null) {
                bytes = s.fields().get("jpeg");
            }
            if (bytes == null) {
                bytes = s.fields().get("png");
            }
            if (bytes == null) {
                throw new IllegalArgumentException(s.url() + ": sample '" + s.key() + "' has no jpg, jpeg or png field (it has "
                        + s.fields().keySet() + ")");
            }
            String name = s.url() + ":" + s.key();
            Image img = images.get();
            Crop crop;
            // by the bytes, not the field's name: a PNG named .jpg (ImageNet has one) decodes as Pillow decodes it
            if (!Image.isJpeg(bytes)) {
                Jpeg.decodeImageIo(bytes, img, name);
                crop = choose(img.width(), img.height(), ctx);
            } else {
                long dims = Jpeg.dimensions(bytes, name);
                int w = (int) (dims >>> 32);
                int h = (int) dims;
                crop = choose(w, h, ctx);
                // the smallest DCT scale that still gives the crop at least `size` pixels each way
                int minW = (int) Math.ceil(w * Math.min(1.0, size / crop.w()));
                int minH = (int) Math.ceil(h * Math.min(1.0, size / crop.h()));
                Jpeg.decode(bytes, minW, minH, img, name);
                if (img.width() != w || img.height() != h) {
                    crop = crop.scaled((double) img.width() / w, (double) img.height() / h);
                }
            }
            byte[] polled = planes.poll();
            byte[] chw = polled != null ? polled : new byte[3 * size * size];
            resamplers.get().resize(img, crop, size, chw);
            return new Prepared(chw, label(s));
        };
    }

    private Crop choose(int w, int h, SampleContext ctx) {
        if (train) {
            return Crop.randomResized(w, h, new SplittableRandom(ctx.seed()), 0.08, 1.0, 3.0 / 4, 4.0 / 3, 0.5);
        }
        return Crop.center(w, h, size * 8 / 7, size);
    }

    private static long label(TarSample s) throws CorruptShardException {
        return s.fields().containsKey("cls") ? dev.stoker.formats.Fields.integer(s, "cls") : -1;
    }

    /** Normalize into the row. */
    public Collator<Prepared> collator() {
        return new Collator<>() {
            @Override
            public Schema schema() {
                return schema;
            }

            @Override
            public void write(Prepared p, Row row) {
                if (uint8) {
                    resamplers.get().toUint8(p.chw(), size, row.column(0), row.offset(0));
                } else {
                    resamplers.get().normalize(p.chw(), size, MEAN, STD, row.column(0), row.offset(0));
                }
                row.putLong(1, 0, p.label());
                planes.offer(p.chw()); // a full pool lets them go to the garbage collector
            }
        };
    }
}
