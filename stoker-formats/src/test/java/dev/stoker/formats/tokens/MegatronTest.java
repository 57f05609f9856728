package dev.stoker.formats.tokens;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Megatron-LM indexed datasets: the published layout, read and written. */
class MegatronTest {
    @TempDir
    Path tmp;

    static List<List<Long>> documents(Megatron m) {
        List<List<Long>> out = new ArrayList<>();
        for (long s = 0; s < m.sequences(); s++) {
            List<Long> doc = new ArrayList<>();
            for (int i = 0; i < m.sequenceLength(s); i++) {
                doc.add(m.token(m.sequenceStart(s) + i));
            }
            out.add(doc);
        }
        return out;
    }

    @Test
    void readsTheFixtureWrittenToThePublishedLayout() throws IOException {
        JsonNode want = Fixtures.expected().get("megatron").get("docs");
        try (Megatron m = Megatron.open(Fixtures.dir().resolve("megatron/docs"))) {
            assertEquals(DType.UINT16, m.dtype());
            assertEquals(want.get("sequences").asLong(), m.sequences());
            assertEquals(want.get("documents").asLong(), m.documents());
            assertEquals(want.get("tokens").asLong(), m.tokens());
            List<List<Long>> expected = new ArrayList<>();
            for (JsonNode d : want.get("docs")) {
                List<Long> doc = new ArrayList<>();
                d.forEach(t -> doc.add(t.asLong()));
                expected.add(doc);
            }
            assertEquals(expected, documents(m));
        }
    }

    @Test
    void writesWhatItReadsAndWhatThePublishedReaderReads() throws Exception {
        Path prefix = tmp.resolve("out");
        int[][] docs = {{5, 6, 7}, {}, {65535, 0, 1, 2}, {42}};
        try (MegatronWriter w = new MegatronWriter(prefix, DType.UINT16)) {
            for (int[] d : docs) {
                w.add(d, d.length);
            }
        }
        try (Megatron m = Megatron.open(prefix)) {
            assertEquals(4, m.sequences());
            assertEquals(4, m.documents());
            assertEquals(List.of(List.of(5L, 6L, 7L), List.of(), List.of(65535L, 0L, 1L, 2L), List.of(42L)), documents(m));
        }
        assumeTrue(Fixtures.numpyAvailable(), "python3 with numpy is not installed: skipping the layout check");
        // the reader side of Megatron's layout, in numpy: header, lengths, pointers, document index
        String out = Fixtures.python("""
                import numpy as np, struct, sys
                p = sys.argv[1]
                b = open(p + '.idx', 'rb').read()
                assert b[:9] == b'MMIDIDX\\x00\\x00'
                version, = struct.unpack('<Q', b[9:17]); code = b[17]
                n, d = struct.unpack('<QQ', b[18:34])
                sizes = np.frombuffer(b, dtype='<i4', count=n, offset=34)
                ptrs = np.frombuffer(b, dtype='<i8', count=n, offset=34 + 4 * n)
                docs = np.frombuffer(b, dtype='<i8', count=d, offset=34 + 12 * n)
                data = np.memmap(p + '.bin', dtype='<u2', mode='r')
                seqs = [data[pt // 2: pt // 2 + s].tolist() for s, pt in zip(sizes, ptrs)]
                print(version, code, n, d, docs.tolist(), seqs)
                """, prefix.toString());
        assertEquals("1 8 4 5 [0, 1, 2, 3, 4] [[5, 6, 7], [], [65535, 0, 1, 2], [42]]", out.strip());
    }

    @Test
    void anAbandonedWriterLeavesNoFileThatLooksComplete() throws IOException {
        Path prefix = tmp.resolve("half");
        MegatronWriter w = new MegatronWriter(prefix, DType.UINT16);
        w.add(new int[] {1, 2, 3}, 3);
        w.abandon();
        try (var files = Files.list(tmp)) {
            assertEquals(List.of(), files.toList());
        }
    }

    /** Three documents of 3, 2 and 4 uint16 tokens: sizes at byte 34, pointers at byte 46 (0, 6, 10), .bin of 18 bytes. */
    private Path threeDocuments() throws IOException {
        Path prefix = tmp.resolve("three");
        try (MegatronWriter w = new MegatronWriter(prefix, DType.UINT16)) {
            w.add(new int[] {1, 2, 3}, 3);
            w.add(new int[] {4, 5}, 2);
            w.add(new int[] {6, 7, 8, 9}, 4);
        }
        return prefix;
    }

    /** The index of {@code prefix} with the little-endian long at {@code at} set to {@code value}. */
    private static void patchLong(Path prefix, int at, long value) throws IOException {
        Path idx = Path.of(prefix + ".idx");
        byte[] b = Files.readAllBytes(idx);
        java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(at, value);
        Files.write(idx, b);
    }

    @Test
    void overlappingSequencePointersAreRefusedNamingTheEntryAndItsOffset() throws IOException {
        Path prefix = threeDocuments();
        patchLong(prefix, 46 + 8, 2); // sequence 1 inside sequence 0
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> Megatron.open(prefix));
        assertTrue(e.getMessage().startsWith(prefix + ".idx: ") && e.getMessage().contains("sequence 1 starts at byte 2")
                && e.getMessage().contains("expected 6"), e.getMessage());
        assertEquals(46 + 8, e.offset());
    }

    @Test
    void aGapBetweenSequencesIsRefused() throws IOException {
        Path prefix = threeDocuments();
        patchLong(prefix, 46 + 16, 12); // sequence 2 two bytes past the end of sequence 1
        Files.write(Path.of(prefix + ".bin"), new byte[2], java.nio.file.StandardOpenOption.APPEND);
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> Megatron.open(prefix));
        assertTrue(e.getMessage().contains("sequence 2 starts at byte 12") && e.getMessage().contains("expected 10"), e.getMessage());
        assertEquals(46 + 16, e.offset());
    }

    @Test
    void aFirstPointerOtherThanZeroIsRefused() throws IOException {
        Path prefix = threeDocuments();
        patchLong(prefix, 46, 2);
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> Megatron.open(prefix));
        assertTrue(e.getMessage().contains("sequence 0 starts at byte 2") && e.getMessage().contains("expected 0"), e.getMessage());
    }

    @Test
    void sequenceLengthsThatDisagreeWithThePointersAreRefused() throws IOException {
        Path prefix = threeDocuments();
        Path idx = Path.of(prefix + ".idx");
        byte[] b = Files.readAllBytes(idx);
        b[34] = 2; // sequence 0: 2 tokens, but sequence 1 still starts 3 tokens in
        Files.write(idx, b);
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> Megatron.open(prefix));
        assertTrue(e.getMessage().contains("sequence 1 starts at byte 6") && e.getMessage().contains("expected 4"), e.getMessage());
    }

    @Test
    void dataPastTheLastSequenceIsRefused() throws IOException {
        Path prefix = threeDocuments();
        Files.write(Path.of(prefix + ".bin"), new byte[4], java.nio.file.StandardOpenOption.APPEND);
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> Megatron.open(prefix));
        assertTrue(e.getMessage().startsWith(prefix + ".idx: ") && e.getMessage().contains("end at byte 18")
                && e.getMessage().contains("22 bytes"), e.getMessage());
    }

    @Test
    void corruptIndexesAreNamed() throws IOException {
        Path prefix = tmp.resolve("bad");
        Files.copy(Fixtures.dir().resolve("megatron/docs.bin"), Path.of(prefix + ".bin"));
        byte[] idx = Files.readAllBytes(Fixtures.dir().resolve("megatron/docs.idx"));
        Files.write(Path.of(prefix + ".idx"), java.util.Arrays.copyOf(idx, idx.length - 8));
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> Megatron.open(prefix));
        assertTrue(e.getMessage().startsWith(prefix + ".idx: truncated index"), e.getMessage());

        byte[] code = idx.clone();
        code[17] = 42;
        Files.write(Path.of(prefix + ".idx"), code);
        e = assertThrows(CorruptShardException.class, () -> Megatron.open(prefix));
        assertTrue(e.getMessage().contains("unknown dtype code 42") && e.offset() == 17, e.getMessage());

        Files.write(Path.of(prefix + ".idx"), idx);
        Files.write(Path.of(prefix + ".bin"), new byte[10]);
        e = assertThrows(CorruptShardException.class, () -> Megatron.open(prefix));
        assertTrue(e.getMessage().contains("does not fit"), e.getMessage());
    }
}
