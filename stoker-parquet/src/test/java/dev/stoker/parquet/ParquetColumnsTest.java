package dev.stoker.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.hardwood.metadata.LogicalType;
import dev.hardwood.metadata.PhysicalType;
import dev.hardwood.metadata.RepetitionType;
import dev.hardwood.schema.SchemaNode;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** A column batched as bytes, shown as a reader of the table means its values ({@code stoker cat}). */
class ParquetColumnsTest {
    private static SchemaNode.PrimitiveNode column(PhysicalType type, LogicalType logical) {
        return new SchemaNode.PrimitiveNode("c", type, RepetitionType.OPTIONAL, logical, 0, 1, 0);
    }

    private static byte[] int96(long nanosOfDay, int julianDay) {
        return ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putLong(nanosOfDay).putInt(julianDay).array();
    }

    @Test
    void anInt96TimestampIsItsInstant() {
        SchemaNode.PrimitiveNode c = column(PhysicalType.INT96, null);
        assertEquals("1970-01-01T00:00:00Z", ParquetColumns.shown(c, int96(0, 2_440_588)));
        // 2020-01-01 is Julian day 2,458,850; an hour and a nanosecond into it
        assertEquals("2020-01-01T01:00:00.000000001Z", ParquetColumns.shown(c, int96(3_600_000_000_001L, 2_458_850)));
    }

    @Test
    void aDecimalStoredAsBytesIsItsNumber() {
        SchemaNode.PrimitiveNode c = column(PhysicalType.FIXED_LEN_BYTE_ARRAY, new LogicalType.DecimalType(2, 10));
        assertEquals(new BigDecimal("12.34"), ParquetColumns.shown(c, new byte[] {0x04, (byte) 0xD2}));
        assertEquals(new BigDecimal("-1.23"), ParquetColumns.shown(c, new byte[] {(byte) 0xFF, (byte) 0x85}));
    }

    @Test
    void aStringIsItsTextAndBinaryStaysBytes() {
        assertEquals("café", ParquetColumns.shown(column(PhysicalType.BYTE_ARRAY, new LogicalType.StringType()),
                "café".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        assertNull(ParquetColumns.shown(column(PhysicalType.BYTE_ARRAY, null), new byte[] {1, 2}));
    }
}
