package dev.stoker.formats.image;

import dev.stoker.Collator;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.SampleContext;
import dev.stoker.Schema;
import dev.stoker.Transform;
import dev.stoker.formats.io.Resampler;
import dev.stoker.formats.tar.TarSample;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

/**
 * The image classification pipeline with torchvision's semantics, from a sample with a
 * {@code jpg} (or {@code jpeg}/{@code png}) field and a {@code cls} field to batch fields
 * {@code image} ([3, size, size]) and {@code label} (int64). The image decodes by its bytes, as
 * Pillow's does, whatever its field is called: JPEG (RGB, grayscale, CMYK) through
 * libjpeg-turbo, anything else through {@code javax.imageio}.
 *
 * <p>A pipeline is a composition of stages given as values, as torchvision's {@code Compose} or
 * a WebDataset pipeline is: decode, then a {@link Cropping} ({@link RandomResizedCrop} or
 * {@link ResizeCenterCrop}), a {@link HorizontalFlip}, and an {@link Output} ({@link Normalize}
 * to float32, or {@link Uint8} for the GPU to normalize). {@link #of} builds any of them;
 * {@link Encoded} leaves decoding to the GPU: the batch carries each JPEG's bytes with the crop and
 * flip chosen here (DALI's "mixed" decode, which the Python package runs with nvJPEG).
 * {@link #train} and {@link #eval} are torchvision's ImageNet recipes:
 * <ul>
 *   <li>{@link #train}: {@code RandomResizedCrop(size, scale=(0.08, 1), ratio=(3/4, 4/3))},
 *       {@code RandomHorizontalFlip()}, normalize.</li>
 *   <li>{@link #eval}: {@code Resize(size * 8 / 7)} + {@code CenterCrop(size)} (256/224), normalize.</li>
 * </ul>
 * The stages run fused in one transform: the crop is chosen before decoding, so that a JPEG
 * decodes only the crop's region, at the smallest DCT scale that still gives the crop its pixels
 * ({@link Jpeg#decodeCrop}), and the crop, the flip and the resize are one resampling pass (as
 * DALI fuses its decoder and crop).
 * Random choices come from the sample's seed ({@link SampleContext#seed()}: the loader's seed, the
 * epoch and the sample), so they do not depend on which worker ran them. The transform decodes
 * into its thread's image and resamples the crop to uint8 planes from a pool; the collator
 * writes those into the batch row and returns them (NOTE [Images]).
 */
public final class ImagePipeline {
    /** ImageNet's mean and std per channel (R, G, B): {@link Normalize#IMAGENET}'s, which hands out copies. */
    static final float[] MEAN = {0.485f, 0.456f, 0.406f};
    static final float[] STD = {0.229f, 0.224f, 0.225f};

    /**
     * What the transform hands the collator: the resampled image as uint8 planes R, G, B of size²
     * (with {@link Encoded}: the JPEG's bytes, and the crop chosen for it), and the label.
     */
    public record Prepared(byte[] chw, long label, String key, Crop crop) implements dev.stoker.Sized {
        /** A prepared image whose key is not kept. */
        public Prepared(byte[] chw, long label) {
            this(chw, label, null, null);
        }

        /** A decoded image. */
        public Prepared(byte[] chw, long label, String key) {
            this(chw, label, key, null);
        }

        @Override
        public long byteSize() {
            return chw.length + 8L + (key == null ? 0 : key.length());
        }
    }

    /** The fields an image may come in, in the order they are looked for: torchvision's image extensions. */
    static final java.util.List<String> IMAGE_FIELDS = java.util.List.of("jpg", "jpeg", "png", "bmp", "tif", "tiff", "webp",
            "ppm", "pgm");

    /** The fields of an {@link Encoded} batch: the JPEG's bytes, the crop (x, y, w, h) and the flip. */
    public static final String JPEG_FIELD = "jpeg";
    public static final String CROP_FIELD = "crop";
    public static final String FLIP_FIELD = "flip";

    /** The name of the field of sample keys ({@link #keys()}), as WebDataset names it. */
    public static final String KEY_FIELD = "__key__";

    /** Where the pipeline takes its {@code size × size} crop from. */
    public sealed interface Cropping permits RandomResizedCrop, ResizeCenterCrop {
        /** The side of the square the crop is resized to. */
        int size();
    }

    /**
     * torchvision's {@code RandomResizedCrop(size, scale, ratio)}: a random area in
     * {@code [scaleMin, scaleMax]} of the image with a log-uniform aspect ratio in
     * {@code [ratioMin, ratioMax]}.
     */
    public record RandomResizedCrop(int size, double scaleMin, double scaleMax, double ratioMin, double ratioMax)
            implements Cropping {
        public RandomResizedCrop {
            if (size < 1 || !(scaleMin > 0 && scaleMin <= scaleMax && scaleMax <= 1) || !(ratioMin > 0 && ratioMin <= ratioMax)) {
                throw new IllegalArgumentException("RandomResizedCrop(size " + size + ", scale [" + scaleMin + ", " + scaleMax
                        + "], ratio [" + ratioMin + ", " + ratioMax + "]): need size >= 1, 0 < scaleMin <= scaleMax <= 1 and"
                        + " 0 < ratioMin <= ratioMax");
            }
        }

        /** torchvision's defaults: scale (0.08, 1), ratio (3/4, 4/3). */
        public static RandomResizedCrop of(int size) {
            return new RandomResizedCrop(size, 0.08, 1.0, 3.0 / 4, 4.0 / 3);
        }
    }

    /** torchvision's {@code Resize(resize)} (the shorter side) then {@code CenterCrop(size)}. */
    public record ResizeCenterCrop(int resize, int size) implements Cropping {
        public ResizeCenterCrop {
            if (size < 1 || resize < size) {
                throw new IllegalArgumentException("ResizeCenterCrop(resize " + resize + ", size " + size
                        + "): need 1 <= size <= resize");
            }
        }
    }

    /** torchvision's {@code RandomHorizontalFlip(p)}: mirror the crop with probability {@code p} (0: never). */
    public record HorizontalFlip(double p) {
        public static final HorizontalFlip NONE = new HorizontalFlip(0);

        public HorizontalFlip {
            if (!(p >= 0 && p <= 1)) {
                throw new IllegalArgumentException("HorizontalFlip(" + p + "): p must be in [0, 1]");
            }
        }
    }

    /** What the batch's {@code image} field holds. */
    public sealed interface Output permits Normalize, Uint8, Encoded {
    }

    /** float32 CHW, {@code (x / 255 - mean[c]) / std[c]} per channel (torchvision's {@code ToTensor} + {@code Normalize}). */
    public record Normalize(float[] mean, float[] std) implements Output {
        /** ImageNet's mean and std. */
        public static final Normalize IMAGENET = new Normalize(MEAN, STD);

        public Normalize {
            if (mean.length != 3 || std.length != 3) {
                throw new IllegalArgumentException("Normalize: three means and three stds (R, G, B), got " + mean.length
                        + " and " + std.length);
            }
            for (float v : std) {
                if (!(v > 0)) {
                    throw new IllegalArgumentException("Normalize: every std must be > 0, got " + java.util.Arrays.toString(std));
                }
            }
            mean = mean.clone();
            std = std.clone();
        }

        @Override
        public float[] mean() {
            return mean.clone();
        }

        @Override
        public float[] std() {
            return std.clone();
        }
    }

    /**
     * uint8 CHW, the pixels 0..255 as FFCV and DALI hand them over: the GPU normalizes them, and
     * the copy to it moves a quarter of the bytes of float32.
     */
    public record Uint8() implements Output {
    }

    /**
     * The image not decoded, for a decoder where the batch goes (nvJPEG on the GPU): the field
     * {@code jpeg} holds each image's bytes as they are (variable-length), {@code crop} the crop
     * chosen here (float32 x, y, width, height, in the image's pixels) and {@code flip} whether to
     * mirror it (uint8 0 or 1). The crop and flip are drawn exactly as a decoding pipeline draws
     * them, from the same seeds, so the two give the same crops. JPEG images only: another kind
     * is an error naming the sample.
     */
    public record Encoded() implements Output {
    }

    /**
     * Where a sample's label comes from: {@link #CLS} (a {@code .cls} member holding one integer,
     * -1 for a sample without one: WebDataset's and the image folder's convention), an integer
     * member of one's choosing ({@link #member}), an integer field of a JSON member
     * ({@link #json}), or {@link #NONE} (no label field). A chosen member or field that a sample
     * lacks or that holds no integer is an error naming the sample.
     */
    public sealed interface Label permits Label.Cls, Label.Member, Label.Json, Label.None {
        Label CLS = new Cls();
        Label NONE = new None();

        /** The integer text of member {@code name} (for example {@code "txt"}). */
        static Label member(String name) {
            return new Member(name);
        }

        /** The integer field {@code field} of JSON member {@code member} (for example {@code "json"}, {@code "label"}). */
        static Label json(String member, String field) {
            return new Json(member, field);
        }

        /** The default: {@code .cls} when the sample has it, else -1. */
        record Cls() implements Label {
        }

        record Member(String name) implements Label {
            public Member {
                if (name == null || name.isEmpty()) {
                    throw new IllegalArgumentException("a label member needs a name");
                }
            }
        }

        record Json(String member, String field) implements Label {
            public Json {
                if (member == null || member.isEmpty() || field == null || field.isEmpty()) {
                    throw new IllegalArgumentException("a JSON label needs a member and a field");
                }
            }
        }

        /** No label: the batches hold the image alone. */
        record None() implements Label {
        }
    }

    private static final com.fasterxml.jackson.core.JsonFactory JSON = new com.fasterxml.jackson.core.JsonFactory();

    private final Cropping cropping;
    private final HorizontalFlip flip;
    private final Output output;
    private final Label label;
    private final boolean keys;
    private final int size;
    private final float[] mean;
    private final float[] std;
    // NOTE [Images]: a transform's planes travel with their sample until the collator has
    // normalized them (with a streaming dataset, on another thread, much later), then go back to
    // this pool; so none is reused while a sample still needs it, and the steady state allocates none.
    private final java.util.concurrent.ArrayBlockingQueue<byte[]> planes = new java.util.concurrent.ArrayBlockingQueue<>(4096);
    private final ThreadLocal<Image> images = ThreadLocal.withInitial(Image::new);
    /** Decoded images kept between epochs, or null (NOTE [Image cache]). */
    private final ImageCache cache;
    /** A view of a cached image, per thread. */
    private final ThreadLocal<Image> views = ThreadLocal.withInitial(Image::new);
    private final ThreadLocal<Resampler> resamplers = ThreadLocal.withInitial(Resampler::new);
    private final Schema schema;

    private ImagePipeline(Cropping cropping, HorizontalFlip flip, Output output, Label label, boolean keys) {
        this(cropping, flip, output, label, keys, null);
    }

    private ImagePipeline(Cropping cropping, HorizontalFlip flip, Output output, Label label, boolean keys, ImageCache cache) {
        this.cache = cache;
        this.keys = keys;
        this.cropping = java.util.Objects.requireNonNull(cropping, "cropping");
        this.flip = java.util.Objects.requireNonNull(flip, "flip");
        this.output = java.util.Objects.requireNonNull(output, "output");
        this.label = java.util.Objects.requireNonNull(label, "label");
        this.size = cropping.size();
        boolean uint8 = output instanceof Uint8;
        this.mean = output instanceof Normalize n ? n.mean : null;
        this.std = output instanceof Normalize n ? n.std : null;
        java.util.List<Field> fields = new java.util.ArrayList<>();
        if (output instanceof Encoded) {
            fields.addAll(java.util.List.of(Field.bytes(JPEG_FIELD, 128 << 10), Field.tensor(CROP_FIELD, DType.FLOAT32, 4),
                    Field.scalar(FLIP_FIELD, DType.UINT8)));
        } else {
            fields.add(Field.tensor("image", uint8 ? DType.UINT8 : DType.FLOAT32, 3, size, size));
        }
        if (!(label instanceof Label.None)) {
            fields.add(Field.scalar("label", DType.INT64));
        }
        if (keys) {
            fields.add(Field.bytes(KEY_FIELD, 64));
        }
        this.schema = Schema.of(fields.toArray(Field[]::new));
        // load libjpeg-turbo and bind its functions now, as building a pipeline should, rather
        // than in the first sample, where one worker does it (60-80 ms) while the others wait
        Jpeg.native_();
    }

    /** Decode, then {@code cropping}, {@code flip} and {@code output}: a pipeline of one's own. */
    public static ImagePipeline of(Cropping cropping, HorizontalFlip flip, Output output) {
        return new ImagePipeline(cropping, flip, output, Label.CLS, false);
    }

    /** The same pipeline with labels from {@code label}. */
    public ImagePipeline label(Label label) {
        return new ImagePipeline(cropping, flip, output, label, keys, cache);
    }

    /** The same pipeline with each batch carrying its samples' keys, UTF-8, as the variable-length field {@value #KEY_FIELD}. */
    public ImagePipeline keys() {
        return new ImagePipeline(cropping, flip, output, label, true, cache);
    }

    /** torchvision's ImageNet training transform: RandomResizedCrop(size), RandomHorizontalFlip(), Normalize. */
    public static ImagePipeline train(int size) {
        return of(RandomResizedCrop.of(size), new HorizontalFlip(0.5), Normalize.IMAGENET);
    }

    /** torchvision's ImageNet evaluation transform: Resize(size * 8 / 7), CenterCrop(size), Normalize. */
    public static ImagePipeline eval(int size) {
        return of(new ResizeCenterCrop(size * 8 / 7, size), HorizontalFlip.NONE, Normalize.IMAGENET);
    }

    /** The same pipeline with {@link Uint8} output: the GPU normalizes ({@code (x / 255 - MEAN) / STD}). */
    public ImagePipeline uint8() {
        return new ImagePipeline(cropping, flip, new Uint8(), label, keys, cache);
    }

    /** The same pipeline with {@link Encoded} output: JPEG bytes with their crops, decoded on the GPU. */
    public ImagePipeline encoded() {
        if (cache != null) {
            throw new IllegalArgumentException("an image cache keeps decoded images; a pipeline that hands JPEGs over to "
                    + "the device decodes none");
        }
        return new ImagePipeline(cropping, flip, new Encoded(), label, keys);
    }

    /**
     * The same pipeline keeping its decoded images in {@code cache} between epochs (NOTE [Image
     * cache]): each image is decoded whole once, at the DCT scale its crop decodes at without a
     * cache (or at the cache's capped scale), and every later epoch crops and resamples the kept
     * pixels: the batches are those without a cache, to the bit (capped: other data).
     */
    public ImagePipeline cached(ImageCache cache) {
        java.util.Objects.requireNonNull(cache, "cache");
        if (output instanceof Encoded) {
            throw new IllegalArgumentException("an image cache keeps decoded images; a pipeline that hands JPEGs over to "
                    + "the device decodes none");
        }
        return new ImagePipeline(cropping, flip, output, label, keys, cache);
    }

    public Cropping cropping() {
        return cropping;
    }

    public HorizontalFlip flip() {
        return flip;
    }

    public Output output() {
        return output;
    }

    /** Decode, and choose the crop. */
    public Transform<TarSample, Prepared> transform() {
        return (s, ctx) -> {
            String kind = imageField(s);
            MemorySegment bytes = kind == null ? null : s.fields().get(kind);
            if (bytes == null) {
                throw new IllegalArgumentException(s.url() + ": sample '" + s.key() + "' has no image field (one of "
                        + String.join(", ", IMAGE_FIELDS) + "; it has " + s.fields().keySet() + ")");
            }
            if (!Image.isJpeg(bytes) && !kind.equals("png") && !javax.imageio.ImageIO.getImageReadersBySuffix(kind).hasNext()) {
                throw new CorruptShardException(s.url(), -1, "sample '" + s.key() + "': ." + kind + " images are not decoded "
                        + "here (torchvision reads them through Pillow): convert them, to JPEG or PNG");
            }
            String name = s.url() + ":" + s.key();
            if (output instanceof Encoded) {
                if (!Image.isJpeg(bytes)) {
                    throw new IllegalArgumentException(name + ": ." + kind + " is not a JPEG; decoding on the device takes "
                            + "JPEG images only (decode them here: decode=cpu)");
                }
                Jpeg.Header header = Jpeg.header(bytes, name);
                Image.checkPixels(header.width(), header.height(), name); // the device decodes what is handed over
                return new Prepared(bytes.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), label(s), keys ? s.key() : null,
                        choose(header.width(), header.height(), ctx));
            }
            if (cache != null) {
                return new Prepared(resampleCached(bytes, name, ctx), label(s), keys ? s.key() : null);
            }
            Image img = images.get();
            Crop crop;
            // by the bytes, not the field's name: a PNG named .jpg (ImageNet has one) decodes as Pillow decodes it
            if (!Image.isJpeg(bytes)) {
                Jpeg.decodeImageIo(bytes, img, name);
                crop = choose(img.width(), img.height(), ctx);
            } else {
                Jpeg.Header header = Jpeg.header(bytes, name);
                crop = Jpeg.decodeCrop(bytes, header, choose(header.width(), header.height(), ctx), size, img, name);
            }
            return new Prepared(resample(img, crop), label(s), keys ? s.key() : null);
        };
    }

    /** The first of {@link #IMAGE_FIELDS} that sample {@code s} has, or null. */
    static String imageField(TarSample s) {
        for (String k : IMAGE_FIELDS) {
            if (s.fields().containsKey(k)) {
                return k;
            }
        }
        return null;
    }

    /** {@code crop} of {@code img} resampled to uint8 planes of size², in planes from the pool (NOTE [Images]). */
    private byte[] resample(Image img, Crop crop) {
        byte[] polled = planes.poll();
        byte[] chw = polled != null ? polled : new byte[3 * size * size];
        resamplers.get().resize(img, crop, size, chw);
        return chw;
    }

    /**
     * The cached path (NOTE [Image cache]): the sample's image kept at the DCT scale the pipeline
     * without a cache decodes its crop at, or its whole decode at that scale (kept if there is
     * room), cropped and resampled; with a {@link ImageCache#maxSide}, the image kept at the
     * scale of that side, and the crop chosen in its pixels.
     */
    private byte[] resampleCached(MemorySegment bytes, String name, SampleContext ctx) throws java.io.IOException {
        // a JPEG decodes at a DCT scale through libjpeg-turbo; anything else, and without it any image, whole
        boolean scaled = Image.isJpeg(bytes) && Jpeg.native_();
        Jpeg.Header header = scaled ? Jpeg.header(bytes, name) : null;
        Crop crop = scaled && cache.maxSide() == 0 ? choose(header.width(), header.height(), ctx) : null;
        int eighths = !scaled ? 8 : crop != null ? Jpeg.cropEighths(header, crop, size) : cache.eighths(header.width(),
                header.height());
        Image img = views.get();
        if (cache.get(ctx.index(), eighths, bytes, img)) {
            try {
                return resample(img, cropIn(img, header, crop, ctx));
            } catch (InternalError e) {
                cache.readFailed(e); // NOTE [Cut short while mapped]: then decoded, below
            }
        }
        img = images.get();
        if (Image.isJpeg(bytes)) {
            Jpeg.decodeWhole(bytes, eighths, img, name);
        } else {
            Jpeg.decodeImageIo(bytes, img, name);
        }
        cache.put(ctx.index(), eighths, bytes, img);
        return resample(img, cropIn(img, header, crop, ctx));
    }

    /** In {@code img}'s pixels: {@code crop} (of the image {@code header} describes), or, if null, a crop chosen in them. */
    private Crop cropIn(Image img, Jpeg.Header header, Crop crop, SampleContext ctx) {
        return crop != null ? Jpeg.inDecoded(header, crop, img) : choose(img.width(), img.height(), ctx);
    }

    private Crop choose(int w, int h, SampleContext ctx) {
        return switch (cropping) {
            case RandomResizedCrop c -> Crop.randomResized(w, h, new SplittableRandom(ctx.seed()), c.scaleMin(), c.scaleMax(),
                    c.ratioMin(), c.ratioMax(), flip.p());
            case ResizeCenterCrop c -> {
                Crop crop = Crop.center(w, h, c.resize(), c.size());
                yield flip.p() > 0 && new SplittableRandom(ctx.seed()).nextDouble() < flip.p() ? crop.mirrored() : crop;
            }
        };
    }

    private long label(TarSample s) throws CorruptShardException {
        return switch (label) {
            case Label.Cls c -> s.fields().containsKey("cls") ? dev.stoker.formats.tar.Fields.integer(s, "cls") : -1;
            case Label.None n -> -1;
            case Label.Member m -> {
                if (!s.fields().containsKey(m.name())) {
                    throw new CorruptShardException(s.url(), -1, "sample '" + s.key() + "' has no ." + m.name()
                            + " member for its label (it has " + s.fields().keySet() + ")");
                }
                yield dev.stoker.formats.tar.Fields.integer(s, m.name());
            }
            case Label.Json j -> jsonLabel(s, j);
        };
    }

    private static long jsonLabel(TarSample s, Label.Json j) throws CorruptShardException {
        MemorySegment b = s.fields().get(j.member());
        String where = "sample '" + s.key() + "'";
        if (b == null) {
            throw new CorruptShardException(s.url(), -1, where + " has no ." + j.member() + " member for its label (it has "
                    + s.fields().keySet() + ")");
        }
        try (com.fasterxml.jackson.core.JsonParser p = JSON.createParser(b.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))) {
            if (p.nextToken() != com.fasterxml.jackson.core.JsonToken.START_OBJECT) {
                throw new CorruptShardException(s.url(), -1, where + ": ." + j.member() + " is not a JSON object");
            }
            while (p.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                String name = p.currentName();
                com.fasterxml.jackson.core.JsonToken t = p.nextToken();
                if (name.equals(j.field())) {
                    if (t != com.fasterxml.jackson.core.JsonToken.VALUE_NUMBER_INT
                            || p.getNumberType() == com.fasterxml.jackson.core.JsonParser.NumberType.BIG_INTEGER) {
                        throw new CorruptShardException(s.url(), -1, where + ": field '" + j.field() + "' of ." + j.member()
                                + " is " + p.getText() + ", not an integer label");
                    }
                    return p.getLongValue();
                }
                p.skipChildren();
            }
        } catch (java.io.IOException e) {
            if (e instanceof CorruptShardException c) {
                throw c;
            }
            throw new CorruptShardException(s.url(), -1, where + ": ." + j.member() + " is not JSON: " + e.getMessage());
        }
        throw new CorruptShardException(s.url(), -1, where + ": ." + j.member() + " has no field '" + j.field()
                + "' for its label");
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
                int next = 1;
                if (p.crop() != null) {
                    Crop c = p.crop();
                    row.append(0, p.chw());
                    row.putFloat(1, 0, (float) c.x());
                    row.putFloat(1, 1, (float) c.y());
                    row.putFloat(1, 2, (float) c.w());
                    row.putFloat(1, 3, (float) c.h());
                    row.putByte(2, 0, (byte) (c.flip() ? 1 : 0));
                    next = 3;
                } else if (mean == null) {
                    resamplers.get().toUint8(p.chw(), size, row.column(0), row.offset(0));
                } else {
                    resamplers.get().normalize(p.chw(), size, mean, std, row.column(0), row.offset(0));
                }
                if (!(label instanceof Label.None)) {
                    row.putLong(next++, 0, p.label());
                }
                if (keys) {
                    row.append(next, p.key() == null ? new byte[0] : p.key().getBytes(java.nio.charset.StandardCharsets.UTF_8));
                }
                if (p.crop() == null) {
                    planes.offer(p.chw()); // a full pool lets them go to the garbage collector
                }
            }
        };
    }
}
