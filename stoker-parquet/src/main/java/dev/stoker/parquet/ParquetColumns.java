package dev.stoker.parquet;

import dev.hardwood.metadata.ColumnChunk;
import dev.hardwood.metadata.LogicalType;
import dev.hardwood.metadata.PhysicalType;
import dev.hardwood.metadata.RepetitionType;
import dev.hardwood.metadata.RowGroup;
import dev.hardwood.schema.FileSchema;
import dev.hardwood.schema.SchemaNode;
import dev.stoker.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Parquet's column types as Stoker reads them: which columns can be read (top-level and flat, or
 * top-level lists of numbers), the kind of batch field each becomes, decimals as doubles, and what the footer's
 * statistics say of a column (nulls, bytes per value). Static helpers of {@link ParquetDataset}.
 */
final class ParquetColumns {
    private ParquetColumns() {
    }

    static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat LE_FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfDouble LE_DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    enum Kind {
        BOOL(DType.BOOL), INT32(DType.INT32), UINT32(DType.UINT32), INT64(DType.INT64), UINT64(DType.UINT64),
        FLOAT32(DType.FLOAT32), FLOAT64(DType.FLOAT64), DECIMAL32(DType.FLOAT64), DECIMAL64(DType.FLOAT64), BYTES(null);

        final DType dtype;

        Kind(DType dtype) {
            this.dtype = dtype;
        }
    }

    /** The Julian day of 1970-01-01, where an INT96 timestamp's days count from. */
    private static final long JULIAN_EPOCH_DAY = 2_440_588;

    /**
     * A value of a column the loader batches as bytes, as a reader of the table means it: the text
     * of a string (UTF8, ENUM, JSON), the instant of a legacy INT96 timestamp (nanoseconds of the
     * day, then the Julian day, little-endian), the number of a decimal stored as bytes (a
     * big-endian two's-complement unscaled integer); null when the bytes are the value.
     */
    static Object shown(SchemaNode.PrimitiveNode p, byte[] v) {
        LogicalType l = p.logicalType();
        if (l instanceof LogicalType.StringType || l instanceof LogicalType.EnumType || l instanceof LogicalType.JsonType) {
            return new String(v, java.nio.charset.StandardCharsets.UTF_8);
        }
        if (l instanceof LogicalType.DecimalType d && v.length > 0) {
            return new java.math.BigDecimal(new java.math.BigInteger(v), d.scale());
        }
        if (p.type() == PhysicalType.INT96 && v.length == 12) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
            long nanos = b.getLong();
            long day = Integer.toUnsignedLong(b.getInt()) - JULIAN_EPOCH_DAY;
            return java.time.Instant.ofEpochSecond(Math.multiplyExact(day, 86_400L), 0).plusNanos(nanos).toString();
        }
        return null;
    }

    /**
     * A projected (or filter) column: its place in the file (for a list, its element's leaf) and
     * its fields in the batch; {@code list} names a top-level list of numbers, read as a ragged field.
     */
    record Column(SchemaNode.PrimitiveNode node, int typeLength, Kind kind, int field, int validField, String list) {
        Column(SchemaNode.PrimitiveNode node, int typeLength, Kind kind, int field, int validField) {
            this(node, typeLength, kind, field, validField, null);
        }

        String name() {
            return list != null ? list : node.name();
        }

        boolean isList() {
            return list != null;
        }
    }

    /**
     * The leaf of top-level column {@code name} when it is a list of numbers (a LIST group of one
     * numeric element, as pyarrow, Spark and DuckDB write {@code list<float>}, or a repeated
     * number, the legacy two-level form); null when it is no list. A list of anything else (strings,
     * decimals, structs, lists) is refused naming the column and what its elements are.
     */
    static SchemaNode.PrimitiveNode listLeaf(String location, FileSchema file, String name) {
        SchemaNode n = file.getRootNode().children().stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
        SchemaNode element;
        if (n instanceof SchemaNode.GroupNode g && g.isList()) {
            element = g.getListElement();
        } else if (n instanceof SchemaNode.PrimitiveNode p && p.repetitionType() == RepetitionType.REPEATED) {
            element = p;
        } else {
            return null;
        }
        if (element instanceof SchemaNode.PrimitiveNode p && p.maxRepetitionLevel() == 1) {
            Kind k = kind(p);
            if (k != Kind.BYTES && k != Kind.DECIMAL32 && k != Kind.DECIMAL64) {
                return p;
            }
        }
        throw new IllegalArgumentException(location + ": column '" + name + "' is a list of "
                + (element instanceof SchemaNode.PrimitiveNode ? typeName(element) : "nested values (" + typeName(element) + ")")
                + "; only lists of numbers (bool, integers, float, double) can be read");
    }

    /** A top-level, non-repeated primitive column of the file; {@code context} prefixes the error, which names {@code location}. */
    static SchemaNode.PrimitiveNode flatColumn(String location, FileSchema file, String name, String context) {
        SchemaNode n = file.getRootNode().children().stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
        if (n == null) {
            throw new IllegalArgumentException(location + ": " + context + "no column '" + name + "' (it has "
                    + file.getRootNode().children().stream().map(SchemaNode::name).toList() + ")");
        }
        if (!(n instanceof SchemaNode.PrimitiveNode p) || p.repetitionType() == RepetitionType.REPEATED) {
            throw new IllegalArgumentException(location + ": " + context + "column '" + name
                    + "' is nested or repeated; only flat columns can be read");
        }
        return p;
    }

    static int typeLength(FileSchema file, SchemaNode.PrimitiveNode p) {
        Integer n = file.getColumn(p.columnIndex()).typeLength();
        return n == null ? 0 : n;
    }

    static Kind kind(SchemaNode.PrimitiveNode p) {
        LogicalType l = p.logicalType();
        boolean unsigned = l instanceof LogicalType.IntType i && !i.isSigned();
        boolean decimal = l instanceof LogicalType.DecimalType;
        return switch (p.type()) {
            case BOOLEAN -> Kind.BOOL;
            case INT32 -> decimal ? Kind.DECIMAL32 : unsigned ? Kind.UINT32 : Kind.INT32;
            case INT64 -> decimal ? Kind.DECIMAL64 : unsigned ? Kind.UINT64 : Kind.INT64;
            case FLOAT -> Kind.FLOAT32;
            case DOUBLE -> Kind.FLOAT64;
            case BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY -> Kind.BYTES;
            case INT96 -> Kind.BYTES; // legacy timestamps: their 12 bytes as they are
        };
    }

    /** The off-heap bytes a group of {@code rows} rows of {@code cols} takes: its fixed-width values (8-aligned), and doubles for its decimals. */
    static long fixedBytes(Column[] cols, long rows) {
        long n = 0;
        for (Column c : cols) {
            int w = c.isList() ? 0 : ChunkDecoder.width(c.node().type()); // a list is kept on the heap
            n += w == 0 ? 0 : ChunkDecoder.SLACK + ((rows * w + 7) & ~7L);
            if (c.kind() == Kind.DECIMAL32 || c.kind() == Kind.DECIMAL64) {
                n += 8 * rows;
            }
        }
        return n;
    }

    static ColumnChunk chunk(RowGroup group, Column c) {
        return group.columns().get(c.node().columnIndex());
    }

    /** A decimal column's unscaled integers as doubles (a null as NaN); any other column as it is. */
    static Values decimal(Values v, Column c, SegmentAllocator arena) {
        if (c.kind() != Kind.DECIMAL32 && c.kind() != Kind.DECIMAL64) {
            return v;
        }
        double unit = Math.pow(10, -((LogicalType.DecimalType) c.node().logicalType()).scale());
        MemorySegment to = arena.allocate(8L * v.rows, 8);
        for (int r = 0; r < v.rows; r++) {
            double x = !v.present(r) ? Double.NaN
                    : c.kind() == Kind.DECIMAL32 ? v.segment.get(LE_INT, 4L * r) * unit : v.segment.get(LE_LONG, 8L * r) * unit;
            to.set(LE_DOUBLE, 8L * r, x);
        }
        return new Values(8, v.rows, to, v.valid);
    }

    static boolean mayHoldNulls(List<RowGroup> blocks, int column) {
        for (RowGroup b : blocks) {
            var st = b.columns().get(column).metaData().statistics();
            if (st == null || st.nullCount() == null || st.nullCount() > 0) {
                return true;
            }
        }
        return false;
    }

    static long bytesHint(List<RowGroup> blocks, int column) {
        long bytes = 0;
        long rows = 0;
        for (RowGroup b : blocks) {
            bytes += b.columns().get(column).metaData().totalUncompressedSize();
            rows += b.numRows();
        }
        return Math.max(8, rows == 0 ? 8 : bytes / rows);
    }

    /** A column's type as {@code stoker inspect} names it: the logical type if any, else the physical one. */
    static String typeName(SchemaNode n) {
        String base;
        if (n instanceof SchemaNode.GroupNode g && g.isList()) {
            return "list<" + typeName(g.getListElement()) + ">";
        } else if (!(n instanceof SchemaNode.PrimitiveNode p)) {
            base = "group";
        } else {
            LogicalType l = p.logicalType();
            String physical = p.type() == PhysicalType.BYTE_ARRAY ? "binary" : p.type().name().toLowerCase();
            if (l instanceof LogicalType.StringType) {
                base = "string";
            } else if (l instanceof LogicalType.IntType i) {
                base = (i.isSigned() ? "int" : "uint") + i.bitWidth();
            } else if (l instanceof LogicalType.DecimalType d) {
                base = "decimal(" + d.precision() + "," + d.scale() + ")";
            } else if (l != null) {
                base = physical + " (" + l + ")";
            } else {
                base = physical;
            }
        }
        return n.repetitionType() == RepetitionType.REPEATED ? "repeated " + base : base;
    }
}
