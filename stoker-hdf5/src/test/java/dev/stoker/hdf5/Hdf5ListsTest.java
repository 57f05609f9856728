package dev.stoker.hdf5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.DType;
import dev.stoker.Field;
import dev.stoker.Loader;
import dev.stoker.Padding;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Variable-length datasets that h5py wrote (fixtures/hdf5/make_ragged_h5.py): each list a formula of the index. */
@Timeout(60)
class Hdf5ListsTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @Test
    void listsOfNumbersAreRaggedFieldsWithTheirValues() throws Exception {
        try (Hdf5Dataset d = new Hdf5Dataset(Hdf5DatasetTest.fixture("ragged.h5"), List.of("/id", "/hits", "/hitsz"));
             Loader l = Loader.builder(d).batchSize(8).workers(2).shuffle().build()) {
            Field hits = d.schema().field(1);
            assertTrue(hits.isRagged() && hits.dtype() == DType.FLOAT32, hits.toString());
            assertTrue(d.schema().field(2).isRagged() && d.schema().field(2).dtype() == DType.INT64);
            BitSet seen = new BitSet();
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    long i = b.data(0).getAtIndex(I64, r);
                    seen.set((int) i);
                    MemorySegment h = b.bytes(1, r);
                    assertEquals(4L * (i % 5), h.byteSize(), "hits[" + i + "]");
                    for (int j = 0; j < i % 5; j++) {
                        assertEquals(i + j, h.getAtIndex(F32, j));
                    }
                    MemorySegment z = b.bytes(2, r);
                    assertEquals(8L * (i % 4), z.byteSize(), "hitsz[" + i + "]");
                    for (int j = 0; j < i % 4; j++) {
                        assertEquals(i * 3 - j, z.getAtIndex(I64, j));
                    }
                }
            }
            assertEquals(100, seen.cardinality());
        }
    }

    @Test
    void listsArePaddedByTheLoader() throws Exception {
        try (Hdf5Dataset d = new Hdf5Dataset(Hdf5DatasetTest.fixture("ragged.h5"), List.of("/id", "/hits"));
             Loader l = Loader.builder(d).padding(Padding.of().pad("hits", 3).lengths(true)).batchSize(100).build()) {
            Batch b = l.iterator().next();
            for (int r = 0; r < 100; r++) {
                long i = b.data(0).getAtIndex(I64, r);
                assertEquals(Math.min(i % 5, 3), b.data(2).getAtIndex(I64, r));
                for (int j = 0; j < 3; j++) {
                    assertEquals(j < i % 5 ? i + j : 0f, b.data(1).getAtIndex(F32, 3L * r + j));
                }
            }
            assertEquals(20, l.stats().truncatedSamples()); // i % 5 == 4
        }
    }

    @Test
    void stringsAreStillRefusedNamingTheDataset() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Hdf5Dataset(Hdf5DatasetTest.fixture("ragged.h5"), List.of("/names")));
        assertTrue(e.getMessage().contains("/names is not a numeric dataset"), e.getMessage());
    }
}
