package dev.stoker.parquet;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.parquet.filter2.predicate.FilterApi;
import org.apache.parquet.filter2.predicate.FilterPredicate;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.PrimitiveType;

/**
 * A row filter {@code column op literal} ({@code op} one of {@code == != < <= > >=}): pushed down
 * to the row groups' statistics (a row group whose min/max rule the condition out is never read),
 * then applied exactly to the rows of the groups kept. The literal is read as the column's type;
 * strings compare as UTF-8 bytes, as Parquet orders them. A null value never matches.
 */
public record Where(String column, Op op, String literal) {

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

    private static final Pattern FORM = Pattern.compile("\\s*([^\\s=!<>]+)\\s*(==|!=|<=|>=|<|>|=)\\s*([^\\s=!<>].*?)?\\s*");

    /** Parses {@code "x >= 5"}, {@code "label == cat"} (quotes around the literal are optional). */
    public static Where parse(String text) {
        Matcher m = FORM.matcher(text);
        if (!m.matches() || m.group(3) == null) {
            throw new IllegalArgumentException("a filter is 'column op value' with op one of == != < <= > >=, got '" + text + "'");
        }
        String op = m.group(2).equals("=") ? "==" : m.group(2);
        String literal = m.group(3);
        if (literal.length() >= 2 && (literal.startsWith("'") && literal.endsWith("'") || literal.startsWith("\"") && literal.endsWith("\""))) {
            literal = literal.substring(1, literal.length() - 1);
        }
        for (Op o : Op.values()) {
            if (o.symbol.equals(op)) {
                return new Where(m.group(1), o, literal);
            }
        }
        throw new AssertionError(op);
    }

    @Override
    public String toString() {
        return column + " " + op.symbol + " " + literal;
    }

    /** The condition for a column of this type: a statistics predicate and a row test. */
    Bound bind(PrimitiveType type) {
        String c = column;
        try {
            return switch (type.getPrimitiveTypeName()) {
                case INT32 -> {
                    int v = Integer.parseInt(literal);
                    var col = FilterApi.intColumn(c);
                    yield new Bound(predicate(col, v), v, 0, null);
                }
                case INT64 -> {
                    long v = Long.parseLong(literal);
                    var col = FilterApi.longColumn(c);
                    yield new Bound(predicate(col, v), v, 0, null);
                }
                case FLOAT -> {
                    float v = Float.parseFloat(literal);
                    var col = FilterApi.floatColumn(c);
                    yield new Bound(predicate(col, v), 0, v, null);
                }
                case DOUBLE -> {
                    double v = Double.parseDouble(literal);
                    var col = FilterApi.doubleColumn(c);
                    yield new Bound(predicate(col, v), 0, v, null);
                }
                case BOOLEAN -> {
                    if (!literal.equals("true") && !literal.equals("false") || op != Op.EQ && op != Op.NE) {
                        throw new IllegalArgumentException("a boolean column takes == or != and true or false");
                    }
                    boolean v = Boolean.parseBoolean(literal);
                    var col = FilterApi.booleanColumn(c);
                    yield new Bound(op == Op.EQ ? FilterApi.eq(col, v) : FilterApi.notEq(col, v), v ? 1 : 0, 0, null);
                }
                case BINARY, FIXED_LEN_BYTE_ARRAY -> {
                    Binary v = Binary.fromString(literal);
                    var col = FilterApi.binaryColumn(c);
                    yield new Bound(predicate(col, v), 0, 0, v.getBytes());
                }
                default -> throw new IllegalArgumentException("filters on " + type.getPrimitiveTypeName() + " columns are not supported");
            };
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("filter '" + this + "': '" + literal + "' is not a " + type.getPrimitiveTypeName()
                    + " value, the type of column " + column);
        }
    }

    private <T extends Comparable<T>, C extends org.apache.parquet.filter2.predicate.Operators.Column<T>
            & org.apache.parquet.filter2.predicate.Operators.SupportsLtGt> FilterPredicate predicate(C col, T v) {
        return switch (op) {
            case EQ -> FilterApi.eq(col, v);
            case NE -> FilterApi.notEq(col, v);
            case LT -> FilterApi.lt(col, v);
            case LE -> FilterApi.ltEq(col, v);
            case GT -> FilterApi.gt(col, v);
            case GE -> FilterApi.gtEq(col, v);
        };
    }

    /** A condition bound to a column's type: the literal as that type (integer, real or bytes). */
    record Bound(FilterPredicate predicate, long integer, double real, byte[] bytes) {
    }
}
