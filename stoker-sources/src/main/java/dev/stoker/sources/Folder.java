package dev.stoker.sources;

import dev.stoker.formats.image.ImageFolder;
import dev.stoker.storage.Locations;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * An image folder ({@code root/CLASS/IMAGE.jpg}), as torchvision's ImageFolder: local, or an S3
 * prefix ({@code s3://bucket/train/}), each image read by one request; made batches by {@code images}.
 */
public record Folder(String path, Images images) implements SourceSpec {
    public Folder {
        images = images == null ? Images.DEFAULT : images;
    }

    /** The folder at {@code path}, with training crops of 224. */
    public static Folder of(String path) {
        return new Folder(path, Images.DEFAULT);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        if (path == null || path.isEmpty()) {
            throw new SpecException("path", "must name the folder");
        }
        if (!Locations.isRemote(path) && !Files.isDirectory(Path.of(path))) {
            throw new NoSuchFileException(path);
        }
        return Recipe.open(kind(), r -> images.serve(r, new ImageFolder(path)));
    }
}
