package dev.stoker.sources;

import dev.stoker.Collator;
import dev.stoker.Dataset;
import dev.stoker.Loader;
import dev.stoker.StreamingDataset;
import dev.stoker.formats.image.ImageCache;
import dev.stoker.formats.image.ImagePipeline;
import dev.stoker.formats.tar.TarSample;
import dev.stoker.sources.Schema.Choices;
import dev.stoker.sources.Schema.Format;
import dev.stoker.sources.Schema.Min;
import java.io.IOException;
import java.util.List;

/**
 * How the samples of an image source become batches: torchvision's transforms as values. Null is
 * the default.
 *
 * @param transform  {@code train}: RandomResizedCrop, flip, normalize; {@code eval}: Resize,
 *                   CenterCrop, normalize; {@code none}: each member a field of its own, as bytes
 *                   ({@code train224} and {@code eval224} are {@code train} and {@code eval})
 * @param size       the side of the square crop (224)
 * @param scale      train: the crop's share of the image's area, min and max (0.08, 1)
 * @param ratio      train: the crop's aspect ratio, min and max, drawn log-uniform (3/4, 4/3)
 * @param flip       the probability of a horizontal flip (0.5 for train, 0 for eval)
 * @param resize     eval: the shorter side before the center crop (the size times 8/7)
 * @param label      {@code cls} (the {@code .cls} member, -1 where a sample has none), another
 *                   member holding one integer, {@code json:FIELD} (an integer field of the
 *                   {@code .json} member), or {@code none} (no label field)
 * @param keys       each batch carries its samples' keys, as the field {@code __key__}
 * @param members    none: the members to take, each a field (null: those of the first sample; a
 *                   sample without one of them, or then with others, is bad data)
 * @param imageDtype {@code float32}, normalized by ImageNet's mean and std; {@code uint8}, the pixels
 * @param decodeOn   {@code cpu} (null): the workers decode; {@code device}: the batches carry each
 *                   JPEG's bytes with its crop and flip ({@link ImagePipeline.Encoded}), for the
 *                   GPU to decode (the Python package's {@code decode_on="cuda"})
 * @param imageCache {@code ram}: decoded images kept in memory between epochs, by sample
 *                   ({@link ImageCache}); {@code disk}: in one mapped file in
 *                   {@code $XDG_CACHE_HOME/stoker/images} (default {@code ~/.cache/stoker/images}),
 *                   shared by the node's processes and kept across runs; a path (with a
 *                   {@code /}): the file in that folder; null: none. For shards and folders read by index
 * @param imageCacheMaxSide with {@code imageCache}: images kept at the DCT scale whose longer side is the
 *                   largest at most this (a change of the data, as FFCV's {@code max_resolution});
 *                   null: each at the DCT scale its crop decodes at without a cache (a large
 *                   image's train crops may keep it at two), and the batches are those of the
 *                   pipeline without a cache, to the bit
 * @param imageCacheBytes with {@code imageCache}: the bound of the kept pixels (default: in memory, half
 *                   of this machine's memory; on disk, the estimate and a quarter more); a cache
 *                   estimated past it, or past the disk's free space, is refused with the numbers
 */
public record Images(Transform transform, @Min(1) Integer size, @Min(0) List<Double> scale, @Min(0) List<Double> ratio,
                     @Min(0) Double flip, @Min(1) Integer resize, String label, boolean keys, List<String> members,
                     @Choices({"float32", "uint8"}) String imageDtype,
                     @Format("place") @Choices({"cpu", "device"}) String decodeOn,
                     @Format(value = "folder", words = {"ram", "disk"}) String imageCache, @Min(1) Integer imageCacheMaxSide,
                     @Min(1) Long imageCacheBytes) {

    /** The recipe ({@code transform}): torchvision's training or evaluation transforms, or none. */
    public enum Transform implements Specs.Word {
        /** RandomResizedCrop, a flip, ImageNet's normalize. */
        TRAIN,
        /** Resize, CenterCrop, ImageNet's normalize. */
        EVAL,
        /** No decoding: each member a field of its own, as bytes. */
        NONE,
        /** {@link #TRAIN}, under the name the command line once had for it. */
        TRAIN224,
        /** {@link #EVAL}, under the name the command line once had for it. */
        EVAL224;

        /** The transform named {@code word} ({@code train}, ...). */
        public static Transform of(String word) {
            return Specs.Word.of(Transform.class, "transform", word);
        }

        /** A training crop: {@link #TRAIN} or {@link #TRAIN224}. */
        boolean train() {
            return this == TRAIN || this == TRAIN224;
        }
    }

    /** Training crops of 224 with torchvision's defaults: each option its default. */
    public static final Images DEFAULT = new Images(null, null, null, null, null, null, null, false, null, null, null, null, null,
            null);

    public Images {
        transform = transform == null ? Transform.TRAIN : transform;
        if (size != null) {
            SpecException.atLeast("size", size, 1);
        }
        if (resize != null) {
            SpecException.atLeast("resize", resize, 1);
        }
        if (flip != null && !(flip >= 0 && flip <= 1)) {
            throw new SpecException("flip", "must be a probability in [0, 1], got " + flip);
        }
        scale = pair("scale", scale);
        ratio = pair("ratio", ratio);
        members = members == null ? null : List.copyOf(members);
        if (imageDtype != null) {
            SpecException.oneOf("image_dtype", imageDtype, "float32", "uint8");
        }
        if (decodeOn != null) {
            SpecException.oneOf("decode_on", decodeOn, "cpu", "device");
        }
        if (imageCache != null) {
            SpecException.modeOrFolder("image_cache", imageCache, "ram", "disk");
            if ("device".equals(decodeOn)) {
                throw SpecException.naming("image_cache", "keeps decoded images; with {decode_on} device the workers decode none");
            }
        } else if (imageCacheMaxSide != null || imageCacheBytes != null) {
            throw SpecException.naming(imageCacheMaxSide != null ? "image_cache_max_side" : "image_cache_bytes", "is for {image_cache} (ram, disk or a folder)");
        }
        if (imageCacheMaxSide != null) {
            SpecException.atLeast("image_cache_max_side", imageCacheMaxSide, 1);
        }
        if (imageCacheBytes != null && imageCacheBytes < 1) {
            throw new SpecException("image_cache_bytes", "must be >= 1, got " + imageCacheBytes);
        }
        if (transform == Transform.NONE) {
            if (decodeOn != null || imageCache != null) {
                throw SpecException.naming(decodeOn != null ? "decode_on" : "image_cache", "is for {transform} train or eval (none decodes nothing)");
            }
            if (imageDtype != null || size != null || scale != null || ratio != null || flip != null || resize != null
                    || label != null) { // keys apply: the samples' keys beside their members
                throw SpecException.naming(null, "{image_dtype}, {size}, {scale}, {ratio}, {flip}, {resize} and {label} are "
                        + "for {transform} train or eval, not none");
            }
        } else if (members != null) {
            throw SpecException.naming("members", "is for {transform} none (train and eval decode the image member)");
        }
        if (transform.train() && resize != null) {
            throw SpecException.naming("resize", "is for {transform} eval (train crops at random: {scale}, {ratio})");
        }
        if ((transform == Transform.EVAL || transform == Transform.EVAL224) && (scale != null || ratio != null)) {
            throw SpecException.naming(null, "{scale} and {ratio} are for {transform} train (eval resizes: {resize})");
        }
    }

    /** Training crops of {@code size}, flipped half the time, normalized: torchvision's ImageNet recipe. */
    public static Images train(int size) {
        return new Images(Transform.TRAIN, size, null, null, null, null, null, false, null, null, null, null, null, null);
    }

    /** Resize to {@code size} × 8/7, center crop of {@code size}, normalized. */
    public static Images eval(int size) {
        return new Images(Transform.EVAL, size, null, null, null, null, null, false, null, null, null, null, null, null);
    }

    /** No decoding: each member a field of its own. */
    public static Images none() {
        return new Images(Transform.NONE, null, null, null, null, null, null, false, null, null, null, null, null, null);
    }

    /** The same, the label taken from {@code label} ({@code cls}, a member, {@code json:FIELD}, {@code none}). */
    public Images withLabel(String label) {
        return new Images(transform, size, scale, ratio, flip, resize, label, keys, members, imageDtype, decodeOn, imageCache,
                imageCacheMaxSide, imageCacheBytes);
    }

    /**
     * The same with an image cache: {@code ram}, {@code disk} or a folder (null: none), its images'
     * longer side at most {@code maxSide}, its pixels {@code bytes} at most (null: the defaults).
     */
    public Images withImageCache(String cache, Integer maxSide, Long bytes) {
        return new Images(transform, size, scale, ratio, flip, resize, label, keys, members, imageDtype, decodeOn, cache, maxSide,
                bytes);
    }

    private static List<Double> pair(String option, List<Double> value) {
        if (value == null) {
            return null;
        }
        if (value.size() != 2 || value.contains(null) || !(value.get(0) > 0 && value.get(0) <= value.get(1))) {
            throw new SpecException(option, "takes MIN,MAX (two numbers, 0 < MIN <= MAX), got " + value);
        }
        return List.copyOf(value);
    }

    /** The loader over an indexed dataset of samples. */
    void serve(Recipe r, Dataset<TarSample> data) throws IOException {
        if (transform == Transform.NONE) {
            Collator<TarSample> raw = members(() -> data.size() > 0 ? data.get(0) : null);
            r.base(() -> Loader.builder(data, raw));
            return;
        }
        ImagePipeline p = cached(r, pipeline(), data);
        r.base(() -> Loader.builder(data, p.transform(), p.collator()));
    }

    /** {@code p} with this spec's image cache over {@code data}, estimated first; {@code p} itself without one. */
    ImagePipeline cached(Recipe r, ImagePipeline p, Dataset<TarSample> data) throws IOException {
        if (imageCache == null) {
            return p;
        }
        int maxSide = imageCacheMaxSide == null ? 0 : imageCacheMaxSide;
        long estimate = ImageCache.estimate(data, maxSide);
        java.nio.file.Path folder = cacheFolder();
        long bound = imageCacheBytes != null ? imageCacheBytes : folder == null ? ImageCache.defaultBytes() : estimate + estimate / 4 + (64L << 20);
        if (estimate > bound) {
            throw SpecException.naming("image_cache", String.format(java.util.Locale.ROOT, "would keep about %,d bytes of decoded "
                    + "images (%,d samples, estimated from their headers), more than its bound of %,d bytes ({image_cache_bytes}): "
                    + "raise the bound, or keep smaller images with {image_cache_max_side}", estimate, data.size(), bound));
        }
        if (folder == null) {
            return p.cached(report(r, new ImageCache(data.size(), bound, maxSide)));
        }
        // the file is named by the data's content fingerprint; a source without one (an image
        // folder) by its name and size (each entry is checked against its sample's bytes anyway)
        long key = data.fingerprint() != 0 ? data.fingerprint()
                : (31L * data.name().hashCode() + data.size()) * 0x9E3779B97F4A7C15L | 1;
        java.nio.file.Path existing = folder.resolve(ImageCache.fileName(key, maxSide));
        java.nio.file.Path store = java.nio.file.Files.isDirectory(folder) ? folder : folder.getParent();
        long usable = store == null || !java.nio.file.Files.exists(store) ? Long.MAX_VALUE
                : java.nio.file.Files.getFileStore(store).getUsableSpace();
        if (!java.nio.file.Files.exists(existing) && estimate > usable) {
            throw SpecException.naming("image_cache", String.format(java.util.Locale.ROOT, "would keep about %,d bytes of decoded "
                    + "images (%,d samples, estimated from their headers) in %s, which has %,d bytes free: free some, give"
                    + " another folder, or keep smaller images with {image_cache_max_side}", estimate, data.size(), folder, usable));
        }
        return p.cached(report(r, ImageCache.onDisk(folder, key, data.size(), bound, maxSide)));
    }

    /** {@code cache}, its figures reported after a run: what it kept, read back, left out, and a cap's change of the data. */
    private ImageCache report(Recipe r, ImageCache cache) {
        r.report(() -> String.format(java.util.Locale.ROOT, "image cache %s: %,d images kept (%,d of %,d bytes), %,d read "
                + "back, %,d not kept (past its bound)%s%s", cache.file() != null ? cache.file() : "in memory",
                cache.entries(), cache.bytes(), cache.maxBytes(), cache.hits(), cache.refused(),
                cache.dropped() > 0 ? ", " + cache.dropped() + " found damaged and decoded again" : "",
                cache.maxSide() > 0 ? "; kept at a longer side of at most " + cache.maxSide() + " (a change of the data)" : "")
                + (cache.replaced() != null ? "; the file there failed its check (" + cache.replaced() + ") and was made again" : "")
                + (cache.lostAt() >= -1 ? "; its file was cut short under this process" + (cache.lostAt() >= 0 ? " to "
                + cache.lostAt() + " bytes" : "") + " and used no more (its images decoded)" : ""));
        return cache;
    }

    /** The folder of a disk cache ({@code disk}: the user's cache, else the path given); null for {@code ram}. */
    java.nio.file.Path cacheFolder() {
        return switch (imageCache) {
            case "ram" -> null;
            case "disk" -> dev.stoker.storage.io.UserCache.dir("images");
            default -> java.nio.file.Path.of(imageCache);
        };
    }

    /** The same over a stream of shards (compressed ones have no random access). */
    void serve(Recipe r, StreamingDataset<TarSample> data) throws IOException {
        if (imageCache != null) {
            throw SpecException.naming("image_cache", "keeps images by sample index: for shards read by index (without "
                    + "{stream}, and not compressed)");
        }
        if (transform == Transform.NONE) {
            Collator<TarSample> raw = members(() -> {
                if (data.shards() == 0) {
                    return null;
                }
                try (var reader = data.open(0)) {
                    return reader.next();
                } catch (IOException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IOException(data.shardName(0) + ": " + e.getMessage(), e);
                }
            });
            r.base(() -> Loader.builder(data, raw));
            return;
        }
        ImagePipeline p = pipeline();
        r.base(() -> Loader.builder(data, p.transform(), p.collator()));
    }

    /** The image pipeline these options describe. */
    public ImagePipeline pipeline() {
        if (transform == Transform.NONE) {
            throw new SpecException("transform", "none has no image pipeline");
        }
        boolean train = transform.train();
        int side = size != null ? size : 224;
        try {
            ImagePipeline.Cropping cropping = train
                    ? new ImagePipeline.RandomResizedCrop(side, scale != null ? scale.get(0) : 0.08, scale != null ? scale.get(1) : 1.0,
                    ratio != null ? ratio.get(0) : 3.0 / 4, ratio != null ? ratio.get(1) : 4.0 / 3)
                    : new ImagePipeline.ResizeCenterCrop(resize != null ? resize : side * 8 / 7, side);
            var hflip = new ImagePipeline.HorizontalFlip(flip != null ? flip : train ? 0.5 : 0);
            ImagePipeline.Output output = "uint8".equals(imageDtype) ? new ImagePipeline.Uint8() : ImagePipeline.Normalize.IMAGENET;
            ImagePipeline p = ImagePipeline.of(cropping, hflip, output).label(labelOf());
            if ("device".equals(decodeOn)) {
                p = p.encoded();
            }
            return keys ? p.keys() : p;
        } catch (SpecException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new SpecException(null, e.getMessage());
        }
    }

    private ImagePipeline.Label labelOf() {
        if (label == null || label.equals("cls")) {
            return ImagePipeline.Label.CLS;
        }
        if (label.equals("none")) {
            return ImagePipeline.Label.NONE;
        }
        if (label.startsWith("json:")) {
            return ImagePipeline.Label.json("json", label.substring(5));
        }
        if (!label.matches("[A-Za-z0-9_.-]+")) {
            throw new SpecException("label", "must be cls, a member name, json:FIELD or none, got '" + label + "'");
        }
        return ImagePipeline.Label.member(label);
    }

    /** A sample, for the member names of the "none" transform when none are given. */
    @FunctionalInterface
    private interface FirstSample {
        TarSample get() throws IOException;
    }

    private Collator<TarSample> members(FirstSample first) throws IOException {
        if (members != null) {
            return new TarMembers(members, true, keys);
        }
        TarSample s = first.get();
        if (s == null) {
            throw SpecException.naming("members", "must be given for {transform} none over no samples (what a sample holds)");
        }
        return new TarMembers(new java.util.ArrayList<>(s.fields().keySet()), false, keys);
    }
}
