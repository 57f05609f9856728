package dev.stoker.cli;

import static dev.stoker.cli.MainTest.stoker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EstimateCommandTest {
    @TempDir
    Path tmp;

    @Test
    void theIssuesExample() {
        MainTest.Outcome o = stoker("estimate", "--tokens", "100B", "--per-step", "1M", "--steps-per-sec", "0.5",
                "--loader", "500K");
        assertEquals(0, o.code(), o.err());
        assertTrue(o.out().contains("training time with data always ready: 2.3 days"), o.out());
        assertTrue(o.out().contains("loading on the training thread (each step waits for its data): 4.6 days"), o.out());
    }

    @Test
    void aSlowLoaderIsNamedTheBottleneck() {
        MainTest.Outcome o = stoker("estimate", "--tokens", "100B", "--per-step", "1M", "--steps-per-sec", "0.5",
                "--loader", "250K");
        assertTrue(o.out().contains("the loader is the bottleneck: even ahead, the accelerator waits 50% of the time"), o.out());
        assertTrue(o.out().contains("needs 2.00x its throughput"), o.out());
    }

    @Test
    void readsTheLoadersThroughputFromBenchOutput() throws IOException {
        Path bench = tmp.resolve("b.jsonl");
        Files.writeString(bench, "{\"source\":\"tokens\",\"workers\":1,\"samplesPerSec\":10,\"tokensPerSec\":2.0E6}\n"
                + "{\"source\":\"tokens\",\"workers\":2,\"samplesPerSec\":20,\"tokensPerSec\":4.0E6}\n");
        MainTest.Outcome o = stoker("estimate", "--tokens", "1T", "--per-step", "4M", "--steps-per-sec", "1", "--bench", bench.toString());
        assertEquals(0, o.code(), o.err());
        assertTrue(o.out().contains("with the loader at 4M tokens/s"), o.out());
        assertTrue(o.out().contains("keeps up when it loads ahead (1.00x to spare)"), o.out());
        assertEquals(2, stoker("estimate", "--tokens", "lots", "--per-step", "1M", "--steps-per-sec", "1").code());
        assertEquals(2, stoker("estimate", "--per-step", "1M", "--steps-per-sec", "1").code());
    }

    @Test
    void theImageCachesSizeFitAndSpeedUpAreEstimated() throws Exception {
        Path shard = tmp.resolve("img-000000.tar");
        try (var w = new dev.stoker.formats.io.TarWriter(shard)) {
            for (int i = 0; i < 12; i++) {
                var img = new java.awt.image.BufferedImage(96, 64, java.awt.image.BufferedImage.TYPE_INT_RGB);
                for (int x = 0; x < 96; x++) {
                    img.setRGB(x, (x + i) % 64, 0x10ff40);
                }
                var out = new java.io.ByteArrayOutputStream();
                javax.imageio.ImageIO.write(img, "jpg", out);
                w.write("s" + i, java.util.Map.of("jpg", out.toByteArray(), "cls", ("" + i).getBytes()));
            }
        }
        MainTest.Outcome o = stoker("estimate", "cache", shard.toString(), "--size", "32", "--probe", "8");
        assertEquals(0, o.code(), o.err());
        // 12 images of 96 x 64 at 4 bytes a pixel: 294,912 bytes
        assertTrue(o.out().contains("12 images; kept whole: about 0.00 GB (from 12 headers)") && o.out().contains("fits"), o.out());
        assertTrue(o.out().contains("expected speed-up of the epochs after the first: "), o.out());
        o = stoker("estimate", "cache", shard.toString(), "--cache-bytes", "1000");
        assertTrue(o.out().contains("does not fit"), o.out());
        o = stoker("estimate", "cache", shard.toString(), "--cache-max-side", "48", "--probe", "4", "--size", "16");
        assertTrue(o.out().contains("kept at a longer side of at most 48") && o.out().contains("other data"), o.out());
        o = stoker("estimate", "--tokens", "1B");
        assertEquals(2, o.code());
        assertTrue(o.err().contains("--per-step and --steps-per-sec"), o.err());
    }
}
