/**
 * Images: decoded, cropped, resized, flipped and normalized into batch rows.
 *
 * <p>A tour. {@link dev.stoker.formats.image.Jpeg} decodes JPEGs with libjpeg-turbo through the FFM
 * API (other formats through ImageIO) into an {@link dev.stoker.formats.image.Image}, for a crop
 * only the crop's region (through {@code src/main/c}'s small libjpeg library, where it was built);
 * {@link dev.stoker.formats.io.Resampler} resizes a {@link dev.stoker.formats.image.Crop} of it
 * with torchvision's antialiased kernels (vectorized where the Vector API is there).
 * {@link dev.stoker.formats.image.ImagePipeline} composes these steps from value configs (a
 * cropping, a flip, an output) into a {@link dev.stoker.Transform} and its collator, with
 * torchvision's train and eval recipes ready made; {@link dev.stoker.formats.image.ImageFolder}
 * reads torchvision's {@code ImageFolder} layout.
 */
package dev.stoker.formats.image;
