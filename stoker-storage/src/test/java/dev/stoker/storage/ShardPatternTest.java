package dev.stoker.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class ShardPatternTest {
    @Test
    void bracePatternsExpandAsWebDatasetDoes() {
        assertEquals(List.of("train-000098.tar", "train-000099.tar", "train-000100.tar"),
                ShardPattern.expand("train-{000098..000100}.tar"));
        assertEquals(List.of("a-1-x", "a-1-y", "a-2-x", "a-2-y"), ShardPattern.expand("a-{1..2}-{x,y}"));
        assertEquals(List.of("s3://b/p0.tar", "s3://b/p2.tar", "s3://b/p4.tar"), ShardPattern.expand("s3://b/p{0..4..2}.tar"));
        assertEquals(List.of("ab", "ac1", "ac2"), ShardPattern.expand("a{b,c{1,2}}"));
        assertEquals(List.of("x{y}"), ShardPattern.expand("x{y}"));
        assertEquals(List.of("{a,b}"), ShardPattern.expand("\\{a,b\\}"));
        assertEquals(List.of("3", "2", "1"), ShardPattern.expand("{3..1}"));
        assertEquals(List.of("a", "b", "c"), ShardPattern.expand("{a..c}"));
        assertEquals(1000, ShardPattern.expand("train-{000000..000999}.tar").size());
        assertThrows(IllegalArgumentException.class, () -> ShardPattern.expand("a{b"));
    }
}
