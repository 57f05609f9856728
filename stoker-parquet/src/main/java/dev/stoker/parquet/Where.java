package dev.stoker.parquet;

import dev.hardwood.metadata.PhysicalType;
import dev.hardwood.metadata.Statistics;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A row filter {@code column op literal} ({@code op} one of {@code == != < <= > >=}): pushed down
 * to the row groups' statistics (a row group whose min/max rule the condition out is never read),
 * then applied exactly to the rows of the groups kept. The literal is read as the column's type;
 * strings compare as UTF-8 bytes, as Parquet orders them. A number against a string column is
 * refused (it would compare as text, {@code "10" < "9"}) unless quoted, which says text is meant.
 * A null value never matches.
 */
public record Where(String column, Op op, String literal, boolean quoted) {

    public enum Op {
        EQ("=="), NE("!="), LT("<"), LE("<="), GT(">"), GE(">=");

        final String symbol;

        Op(String symbol) {
            this.symbol = symbol;
        }

        boolean holds(int c) {
            return switch (this) {
                case EQ -> c == 0;
                case NE -> c != 0;
                case LT -> c < 0;
                case LE -> c <= 0;
                case GT -> c > 0;
                case GE -> c >= 0;
            };
        }
    }

    private static final Pattern NUMBER = Pattern.compile("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?");
    private static final Pattern FORM = Pattern.compile("\\s*([^\\s=!<>]+)\\s*(==|!=|<=|>=|<|>|=)\\s*([^\\s=!<>].*?)?\\s*");

    /** Parses {@code "x >= 5"}, {@code "label == cat"} (quotes around the literal are optional). */
    public static Where parse(String text) {
        Matcher m = FORM.matcher(text);
        if (!m.matches() || m.group(3) == null) {
            throw new IllegalArgumentException("a filter is 'column op value' with op one of == != < <= > >=, got '" + text + "'");
        }
        String op = m.group(2).equals("=") ? "==" : m.group(2);
        String literal = m.group(3);
        boolean quoted = literal.length() >= 2
                && (literal.startsWith("'") && literal.endsWith("'") || literal.startsWith("\"") && literal.endsWith("\""));
        if (quoted) {
            literal = literal.substring(1, literal.length() - 1);
        }
        for (Op o : Op.values()) {
            if (o.symbol.equals(op)) {
                return new Where(m.group(1), o, literal, quoted);
            }
        }
        throw new AssertionError(op);
    }

    @Override
    public String toString() {
        return column + " " + op.symbol + " " + (quoted ? "'" + literal + "'" : literal);
    }

    /** The condition for a column of this physical type: the literal read as that type. */
    Bound bind(PhysicalType type) {
        try {
            return switch (type) {
                case INT32 -> new Bound(this, type, Integer.parseInt(literal), 0, null);
                case INT64 -> new Bound(this, type, Long.parseLong(literal), 0, null);
                case FLOAT -> new Bound(this, type, 0, Float.parseFloat(literal), null);
                case DOUBLE -> new Bound(this, type, 0, Double.parseDouble(literal), null);
                case BOOLEAN -> {
                    if (!literal.equals("true") && !literal.equals("false") || op != Op.EQ && op != Op.NE) {
                        throw new IllegalArgumentException("a boolean column takes == or != and true or false");
                    }
                    yield new Bound(this, type, literal.equals("true") ? 1 : 0, 0, null);
                }
                case BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY -> {
                    if (!quoted && NUMBER.matcher(literal).matches()) {
                        throw new IllegalArgumentException("filter '" + this + "': column " + column + " holds strings ("
                                + type + "), and " + literal + " is a number, which would compare as text (\"10\" < \"9\"); "
                                + "quote it ('" + literal + "') to compare text");
                    }
                    yield new Bound(this, type, 0, 0, literal.getBytes(StandardCharsets.UTF_8));
                }
                default -> throw new IllegalArgumentException("filters on " + type + " columns are not supported");
            };
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("filter '" + this + "': '" + literal + "' is not a " + type
                    + " value, the type of column " + column);
        }
    }

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** A condition bound to a column's physical type: the literal as that type (integer, real or bytes). */
    record Bound(Where where, PhysicalType type, long integer, double real, byte[] bytes) {
        /** How a decoded value (row {@code r}, present) compares with the literal. */
        int compare(Values v, int r) {
            return switch (type) {
                case INT32 -> Integer.compare(v.segment.get(INT, 4L * r), (int) integer);
                case INT64 -> Long.compare(v.segment.get(LONG, 8L * r), integer);
                case FLOAT -> Float.compare(v.segment.get(FLOAT, 4L * r), (float) real);
                case DOUBLE -> Double.compare(v.segment.get(DOUBLE, 8L * r), real);
                case BOOLEAN -> Integer.compare(v.byteAt(r), (int) integer);
                default -> Arrays.compareUnsigned(v.bytes, v.offsets[r], v.offsets[r + 1], bytes, 0, bytes.length);
            };
        }

        /**
         * True when a row group's statistics show that none of its rows can match: every value
         * null, or the literal outside [min, max] as the operator needs. Statistics that are
         * absent, hold a NaN, or are the deprecated kind (whose byte order for strings was
         * signed) rule nothing out.
         */
        boolean rulesOut(Statistics st, long values) {
            if (st == null) {
                return false;
            }
            if (st.nullCount() != null && st.nullCount() == values) {
                return true; // a null never matches
            }
            byte[] min = st.minValue();
            byte[] max = st.maxValue();
            if (min == null || max == null || st.isMinMaxDeprecated() && (type == PhysicalType.BYTE_ARRAY
                    || type == PhysicalType.FIXED_LEN_BYTE_ARRAY)) {
                return false;
            }
            Integer lo = literalVersus(min);
            Integer hi = literalVersus(max);
            if (lo == null || hi == null) {
                return false;
            }
            // lo = literal compared with min, hi = literal compared with max
            return switch (where.op) {
                case EQ -> lo < 0 || hi > 0;
                case NE -> lo == 0 && hi == 0;
                case LT -> lo <= 0;  // every value >= min >= literal
                case LE -> lo < 0;
                case GT -> hi >= 0;  // every value <= max <= literal
                case GE -> hi > 0;
            };
        }

        /** The literal compared with a statistics value (plain-encoded), or null if it cannot be read or is NaN. */
        private Integer literalVersus(byte[] stat) {
            ByteBuffer b = ByteBuffer.wrap(stat).order(ByteOrder.LITTLE_ENDIAN);
            try {
                return switch (type) {
                    case INT32 -> Integer.compare((int) integer, b.getInt(0));
                    case INT64 -> Long.compare(integer, b.getLong(0));
                    case FLOAT -> Float.isNaN(b.getFloat(0)) ? null : Float.compare((float) real, b.getFloat(0));
                    case DOUBLE -> Double.isNaN(b.getDouble(0)) ? null : Double.compare(real, b.getDouble(0));
                    case BOOLEAN -> Integer.compare((int) integer, stat[0] & 1);
                    default -> Arrays.compareUnsigned(bytes, stat);
                };
            } catch (IndexOutOfBoundsException e) {
                return null;
            }
        }
    }
}
