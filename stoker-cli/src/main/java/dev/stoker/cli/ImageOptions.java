package dev.stoker.cli;

import dev.stoker.sources.Images;
import java.util.List;
import picocli.CommandLine.Option;

/** The flags of {@link Images}. */
class ImageOptions {
    @Option(names = "--transform", paramLabel = "train|eval|none",
            description = "train (or train224): RandomResizedCrop + flip + normalize (default); eval (or eval224): Resize "
                    + "+ CenterCrop + normalize; none: the raw fields.")
    String transform;

    @Option(names = "--size", paramLabel = "N", description = "The side of the square crop (default 224).")
    Integer size;

    @Option(names = "--scale", paramLabel = "MIN,MAX", split = ",", description = "train: the crop's share of the image's "
            + "area (default 0.08,1, torchvision's).")
    List<Double> scale;

    @Option(names = "--ratio", paramLabel = "MIN,MAX", split = ",", description = "train: the crop's aspect ratio, drawn "
            + "log-uniform (default 0.75,1.3333, torchvision's).")
    List<Double> ratio;

    @Option(names = "--flip", paramLabel = "P", description = "The probability of a horizontal flip (default: 0.5 for "
            + "train, 0 for eval).")
    Double flip;

    @Option(names = "--resize", paramLabel = "N", description = "eval: the shorter side before the center crop "
            + "(default: the size times 8/7, 256 for 224).")
    Integer resize;

    @Option(names = "--label", paramLabel = "cls|MEMBER|json:FIELD|none", description = "Where the label comes from: "
            + "cls (default: the .cls member, -1 where a sample has none), another member holding one integer (txt), an "
            + "integer field of the .json member (json:FIELD), or none (no label field); for a record format's --image, "
            + "the field of integer labels (default: none).")
    String label;

    @Option(names = "--keys", description = "Each batch carries its samples' keys, as the variable-length field __key__ "
            + "(WebDataset's name).")
    boolean keys;

    @Option(names = "--members", paramLabel = "NAME,...", split = ",", description = "none: the members each sample "
            + "gives, each a field of its own (default: those of the first sample; a sample without one of them, or, by "
            + "default, with others, is bad data).")
    List<String> members;

    @Option(names = "--image-dtype", paramLabel = "float32|uint8",
            description = "float32: normalized by ImageNet's mean and std (default); uint8: the pixels, "
                    + "for the GPU to normalize (a quarter of the bytes to copy).")
    String imageDtype;

    @Option(names = "--decode-on", paramLabel = "cpu|device", description = "cpu: the workers decode (default); device: "
            + "each batch carries the JPEGs' bytes (jpeg) with the crop (crop: x, y, w, h) and flip (flip) chosen for "
            + "them, for the GPU to decode (Python: decode_on=\"cuda\").")
    String decodeOn;

    @Option(names = {"--image-cache", "--cache"}, paramLabel = "ram|disk|DIR", description = "ram: keep the decoded images in memory between "
            + "epochs (by sample; shards and folders read by index): later epochs only crop, flip and resample. Each image is "
            + "kept at the DCT scale its crop decodes at without a cache, so the batches are those without one, to the bit. "
            + "disk: in one mapped file in "
            + "~/.cache/stoker/images ($XDG_CACHE_HOME), shared by the node's processes and kept for later runs; DIR: in that folder (a path with a /, ./kept; another word is refused).")
    String cache;

    @Option(names = {"--image-cache-max-side", "--cache-max-side"}, paramLabel = "N", description = "With --image-cache: keep each image at the DCT scale whose "
            + "longer side is the largest at most N (a change of the data, as FFCV's max_resolution).")
    Integer cacheMaxSide;

    @Option(names = {"--image-cache-bytes", "--cache-bytes"}, paramLabel = "BYTES", description = "With --image-cache: the bound of the kept pixels (default: "
            + "in memory, half of this machine's memory; on disk, the estimate and a quarter more); a cache estimated past "
            + "it, or past the disk's free space, is refused.")
    Long cacheBytes;

    Images spec() {
        return new Images(Images.Transform.of(transform), size, scale, ratio, flip, resize, label, keys, members, imageDtype, decodeOn, cache,
                cacheMaxSide, cacheBytes);
    }
}
