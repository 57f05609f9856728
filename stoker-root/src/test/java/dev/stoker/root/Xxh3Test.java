package dev.stoker.root;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class Xxh3Test {
    /** XXH3_64bits of the bytes {@link #data} makes, from the reference library (libxxhash 0.8.3). */
    private static final long[][] REFERENCE = {
            {0, 0x2d06800538d394c2L},
            {1, 0x48846479fbd24c06L},
            {2, 0xf01dbff1290f5d95L},
            {3, 0x161e64ec3317eedfL},
            {4, 0x2769110ea2a47c04L},
            {5, 0xe6011a1f823ba9b0L},
            {7, 0x8633f7c4cf7fd804L},
            {8, 0x49b6cd972e398cc1L},
            {9, 0x5b5601af8841184fL},
            {15, 0x8c71813d122a5103L},
            {16, 0x92de7a903673ddbbL},
            {17, 0xd18313d0d3717af1L},
            {31, 0xcd5aea2fc7ddbe97L},
            {32, 0xfe247db8801debaeL},
            {33, 0xb9a3d375d9c5b693L},
            {63, 0x4f7d35bb7bf250d4L},
            {64, 0xb05d1a1c4c8c1255L},
            {65, 0xb0ee404115e5aa69L},
            {95, 0x01e7e2f77b9393ecL},
            {96, 0x92c37b19faef95a7L},
            {97, 0xe239cb1bc6fc3bfeL},
            {127, 0xb0798be9d6c86ad2L},
            {128, 0x9b9d649d8135936dL},
            {129, 0x75f03ff8c7da53aeL},
            {130, 0xd44489bc3ff3cf89L},
            {159, 0x663a0dc7edc23b19L},
            {200, 0x1e3be953241fe345L},
            {239, 0x42cb3e68dc9878a2L},
            {240, 0x287a9e3a14605ca7L},
            {241, 0x9d3f2135e076f892L},
            {255, 0x8f2e83b6ca9548d1L},
            {256, 0x8dbd35ad516747f4L},
            {511, 0xd75cbe59001af9ecL},
            {1023, 0x1dc52055b34bf078L},
            {1024, 0x8bf56442bec7c988L},
            {1025, 0xc337d6c0c810fd27L},
            {1087, 0x9aa900107b8c31f9L},
            {1088, 0xb069b3122066664eL},
            {2048, 0x31a3bb559ff51004L},
            {2049, 0x9f5922c7f22ac7b9L},
            {3000, 0x8a792d2f743930abL},
            {5000, 0xa016ff17a001c176L},
            {20000, 0xa1ceb5dba32bcbe8L},
    };

    /** Bytes from a 64-bit LCG (the top byte of each state), the same in the reference run. */
    static byte[] data(int n) {
        byte[] b = new byte[n];
        long x = 12345;
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            b[i] = (byte) (x >>> 56);
        }
        return b;
    }

    @Test
    void matchesTheReferenceLibraryAtEveryLengthBoundary() {
        for (long[] row : REFERENCE) {
            int n = (int) row[0];
            assertEquals(row[1], Xxh3.hash(data(n)), "length " + n);
        }
    }

    @Test
    void hashesASliceAtAnyOffset() {
        byte[] d = data(3000);
        byte[] padded = new byte[d.length + 13];
        System.arraycopy(d, 0, padded, 13, d.length);
        assertEquals(Xxh3.hash(d), Xxh3.hash(ByteBuffer.wrap(padded), 13, d.length));
    }
}
