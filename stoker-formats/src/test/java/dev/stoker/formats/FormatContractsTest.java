package dev.stoker.formats;

import dev.stoker.Collator;
import dev.stoker.DType;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.formats.image.ImageFolder;
import dev.stoker.formats.npy.Npy;
import dev.stoker.formats.tar.TarDataset;
import dev.stoker.formats.tar.TarSample;
import dev.stoker.formats.tar.TarShards;
import dev.stoker.formats.io.TarWriter;
import dev.stoker.formats.text.JsonlDataset;
import dev.stoker.formats.text.TextStream;
import dev.stoker.formats.tokens.Megatron;
import dev.stoker.formats.tokens.PackedSequences;
import dev.stoker.formats.tokens.TokenFile;
import dev.stoker.formats.tokens.TokenStagesTest;
import dev.stoker.formats.tokens.TokenWindows;
import dev.stoker.formats.tokens.Tokens;
import dev.stoker.testing.LoaderContract;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.io.TempDir;

/**
 * The loader contract ({@link LoaderContract}) run against every format of this module, read by
 * index and streamed: one small dataset of each, written here or taken from the fixtures that
 * numpy and Megatron-LM wrote.
 */
class FormatContractsTest {
    @TempDir
    static Path tmp;
    static List<Path> shards = new ArrayList<>();
    static Path jsonl;
    static Path images;

    @BeforeAll
    static void write() throws IOException {
        Random r = new Random(17);
        for (int s = 0; s < 4; s++) {
            Path p = tmp.resolve("c-" + s + ".tar");
            try (TarWriter w = new TarWriter(p)) {
                for (int i = 0; i < 6 + 3 * s; i++) {
                    byte[] b = new byte[20 + r.nextInt(200)];
                    r.nextBytes(b);
                    w.write("s" + s + "-" + i, Map.of("bin", b, "cls", Integer.toString(i % 5).getBytes(StandardCharsets.US_ASCII)));
                }
            }
            shards.add(p);
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 60; i++) {
            b.append("{\"text\": \"document ").append(i).append(' ').append("word ".repeat(r.nextInt(12))).append("\"}\n");
        }
        jsonl = Files.writeString(tmp.resolve("c.jsonl"), b);
        images = tmp.resolve("images");
        for (String cls : List.of("ant", "bee")) {
            Path d = Files.createDirectories(images.resolve(cls));
            for (int i = 0; i < 9; i++) {
                byte[] img = new byte[30 + r.nextInt(100)];
                r.nextBytes(img);
                Files.write(d.resolve(cls + i + ".jpg"), img);
            }
        }
    }

    /** A tar sample as its key and fields, in the batch: what tells samples apart. */
    static byte[] raw(TarSample s) {
        StringBuilder b = new StringBuilder(s.key());
        for (String f : new java.util.TreeSet<>(s.fields().keySet())) {
            b.append('/').append(f).append('=').append(java.util.HexFormat.of().formatHex(s.field(f).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    @Nested
    class TarReadByIndex extends LoaderContract {
        @Override
        protected LoaderBuilder builder() throws IOException {
            return Loader.builder(closedAfter(new TarDataset(shards)), (s, c) -> raw(s), Collator.bytes("raw", 1024));
        }
    }

    @Nested
    class TarStreamed extends LoaderContract {
        @Override
        protected LoaderBuilder builder() {
            return Loader.builder(new TarShards(shards), (s, c) -> raw(s), Collator.bytes("raw", 1024));
        }
    }

    @Nested
    class ImageFolderReadByIndex extends LoaderContract {
        @Override
        protected LoaderBuilder builder() throws IOException {
            return Loader.builder(new ImageFolder(images), (s, c) -> raw(s), Collator.bytes("raw", 1024));
        }
    }

    @Nested
    class JsonLinesReadByIndex extends LoaderContract {
        @Override
        protected LoaderBuilder builder() throws IOException {
            JsonlDataset d = closedAfter(new JsonlDataset(jsonl));
            return Loader.builder(d, d.text("text"), Collator.bytes("text", 128));
        }
    }

    @Nested
    class JsonLinesTokenizedAsTheyStream extends LoaderContract {
        @Override
        protected LoaderBuilder builder() throws IOException {
            return TokenStagesTest.Packed.bytes(jsonl, 16, 256).builder(DType.INT64);
        }
    }

    @Nested
    class JsonLinesDocumentsStreamed extends LoaderContract {
        @Override
        protected LoaderBuilder builder() throws IOException {
            TextStream documents = new TextStream(List.of(jsonl), "text", 256);
            return Loader.builder(documents, (d, c) -> d.toByteArray(), Collator.bytes("text", 128));
        }
    }

    @Nested
    class TokenFileWindows extends LoaderContract {
        @Override
        protected LoaderBuilder builder() throws IOException {
            Path bin = tmp.resolve("tokens.bin");
            if (!Files.exists(bin)) {
                byte[] b = new byte[2 * 1000];
                new Random(3).nextBytes(b);
                Files.write(bin, b);
            }
            return Loader.builder(TokenWindows.disjoint(closedAfter(TokenFile.open(bin, DType.UINT16)), 24, DType.INT64));
        }
    }

    @Nested
    class NumpyTokenWindows extends LoaderContract {
        @Override
        protected LoaderBuilder builder() throws IOException {
            return Loader.builder(TokenWindows.overlapping(Tokens.of(closedAfter(Npy.read(Fixtures.npy("tokens_u2.npy")))), 4, DType.INT32));
        }
    }

    @Nested
    class MegatronPacked extends LoaderContract {
        @Override
        protected LoaderBuilder builder() throws IOException {
            Megatron m = closedAfter(Megatron.open(Fixtures.dir().resolve("megatron/docs.idx")));
            return Loader.builder(new PackedSequences(m, 2, 0, 7, DType.INT64));
        }
    }
}
