package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** NOTE [Group draws]: groups drawn in proportions, each running through its own orders. */
class GroupSamplerTest {
    static final long[] STARTS = {0, 3000, 3500, 4000};

    static long[] draws(Order o) {
        long[] count = new long[(int) STARTS[3]];
        for (long p = 0; p < o.length(); p++) {
            count[(int) o.index(p)]++;
        }
        return count;
    }

    static int group(long i) {
        return i < 3000 ? 0 : i < 3500 ? 1 : 2;
    }

    @Test
    void eachGroupTakesItsShareAndRunsThroughItsOwnOrderPassByPass() {
        Sampler s = Sampler.groups(STARTS, new double[] {1, 1, 0}, List.of(Sampler.shuffle(), Sampler.sequential(),
                Sampler.shuffle()));
        assertEquals(4000, s.length(4000));
        Order o = s.order(4000, 9, 0);
        long[] count = draws(o);
        long[] perGroup = new long[3];
        for (int i = 0; i < count.length; i++) {
            perGroup[group(i)] += count[i];
        }
        assertEquals(2000, perGroup[0]);
        assertEquals(2000, perGroup[1]);
        assertEquals(0, perGroup[2], "a group of weight 0 is never drawn");
        // group 0 (3,000 samples) drawn 2,000 times: no sample twice; group 1 (500) drawn 2,000: each exactly 4 times
        for (int i = 0; i < 3000; i++) {
            assertTrue(count[i] <= 1, "sample " + i + " drawn " + count[i] + " times in one pass");
        }
        for (int i = 3000; i < 3500; i++) {
            assertEquals(4, count[i], "sample " + i);
        }
        // each epoch, group 0 shows another part of itself; the same (seed, epoch) the same order
        long[] next = draws(s.order(4000, 9, 1));
        int sameSamples = 0;
        for (int i = 0; i < 3000; i++) {
            sameSamples += count[i] == 1 && next[i] == 1 ? 1 : 0;
        }
        assertTrue(sameSamples > 1000 && sameSamples < 1700, "two epochs' draws of group 0 overlap as chance has it: " + sameSamples);
        Order again = s.order(4000, 9, 0);
        List<Long> a = new ArrayList<>();
        List<Long> b = new ArrayList<>();
        for (long p = 0; p < 4000; p++) {
            a.add(o.index(p));
            b.add(again.index(p));
        }
        assertEquals(a, b);
    }

    @Test
    void aBatchHoldsItsGroupsShareWithoutAFixedPattern() {
        Sampler s = Sampler.groups(STARTS, new double[] {1, 1, 2}, List.of(Sampler.shuffle(), Sampler.shuffle(),
                Sampler.shuffle()));
        Order o = s.order(4000, 3, 0);
        // over a whole run of positions the shares are exact to within one sample each
        long[] perGroup = new long[3];
        for (long p = 0; p < 4000; p++) {
            perGroup[group(o.index(p))]++;
        }
        assertEquals(1000, perGroup[0], 1);
        assertEquals(1000, perGroup[1], 1);
        assertEquals(2000, perGroup[2], 1);
        // not the blend's fixed pattern: the first eight positions are not always the same groups' pattern
        StringBuilder first = new StringBuilder();
        StringBuilder second = new StringBuilder();
        for (long p = 0; p < 16; p++) {
            first.append(group(o.index(p)));
            second.append(group(o.index(16 + p)));
        }
        assertNotEquals(first.toString(), second.toString());
    }

    @Test
    void groupsThatDoNotFitAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> Sampler.groups(new long[] {0, 10}, new double[] {1, 1},
                List.of(Sampler.shuffle())));
        assertThrows(IllegalArgumentException.class, () -> Sampler.groups(new long[] {0, 10, 10}, new double[] {1, 1},
                List.of(Sampler.shuffle(), Sampler.shuffle())), "a group of weight > 0 with no samples");
        Sampler s = Sampler.groups(new long[] {0, 10}, new double[] {1}, List.of(Sampler.shuffle()));
        assertThrows(IllegalArgumentException.class, () -> s.length(11));
    }
}
