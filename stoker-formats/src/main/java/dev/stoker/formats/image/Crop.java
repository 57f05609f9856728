package dev.stoker.formats.image;

import java.util.SplittableRandom;

/**
 * A crop of an image (in its pixels) and whether to mirror it, chosen with torchvision's rules.
 */
public record Crop(double x, double y, double w, double h, boolean flip) {

    /**
     * torchvision's {@code RandomResizedCrop.get_params}: up to ten tries of an area in
     * {@code scale} of the image and a log-uniform aspect ratio in {@code ratio}; failing that,
     * the central crop of the nearest allowed ratio. {@code flip} with probability {@code pFlip}.
     */
    public static Crop randomResized(int width, int height, SplittableRandom r, double scaleMin, double scaleMax,
                                     double ratioMin, double ratioMax, double pFlip) {
        double area = (double) width * height;
        double logMin = Math.log(ratioMin);
        double logMax = Math.log(ratioMax);
        for (int attempt = 0; attempt < 10; attempt++) {
            double target = area * (scaleMin + (scaleMax - scaleMin) * r.nextDouble());
            double aspect = Math.exp(logMin + (logMax - logMin) * r.nextDouble());
            int w = (int) Math.round(Math.sqrt(target * aspect));
            int h = (int) Math.round(Math.sqrt(target / aspect));
            if (w > 0 && w <= width && h > 0 && h <= height) {
                int i = r.nextInt(height - h + 1);
                int j = r.nextInt(width - w + 1);
                return new Crop(j, i, w, h, r.nextDouble() < pFlip);
            }
        }
        double inRatio = (double) width / height;
        int w;
        int h;
        if (inRatio < ratioMin) {
            w = width;
            h = (int) Math.round(w / ratioMin);
        } else if (inRatio > ratioMax) {
            h = height;
            w = (int) Math.round(h * ratioMax);
        } else {
            w = width;
            h = height;
        }
        w = Math.max(1, w);
        h = Math.max(1, h);
        return new Crop((width - w) / 2, (height - h) / 2, w, h, r.nextDouble() < pFlip);
    }

    /** torchvision's {@code Resize(resize)} then {@code CenterCrop(size)}, as one crop of the original. */
    public static Crop center(int width, int height, int resize, int size) {
        double scale = (double) resize / Math.min(width, height);
        double cw = Math.min(width, size / scale);
        double ch = Math.min(height, size / scale);
        return new Crop((width - cw) / 2, (height - ch) / 2, cw, ch, false);
    }

    /** This crop, mirrored. */
    Crop mirrored() {
        return new Crop(x, y, w, h, !flip);
    }

    /** This crop in an image scaled by {@code sx} across and {@code sy} down. */
    Crop scaled(double sx, double sy) {
        return new Crop(x * sx, y * sy, w * sx, h * sy, flip);
    }
}
