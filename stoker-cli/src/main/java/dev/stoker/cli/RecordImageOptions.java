package dev.stoker.cli;

import picocli.CommandLine.Option;

/** The image flags of a record format: which field holds the encoded images, and the image options. */
final class RecordImageOptions extends ImageOptions {
    @Option(names = "--image", paramLabel = "FIELD", description = "The field of encoded images (JPEG, PNG) to decode, "
            + "crop and flip as --transform says, --label naming the field of integer labels (default: the fields themselves).")
    String image;
}
