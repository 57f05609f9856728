package dev.stoker.formats.image;

/** Images for tests outside this package (the resampler's, in {@code io}). */
public final class TestImages {
    private TestImages() {
    }

    /** A new image with room for {@code w} × {@code h} pixels, their bytes not yet set. */
    public static Image sized(int w, int h) {
        Image img = new Image();
        img.reset(w, h);
        return img;
    }
}
