package dev.stoker.root;

import dev.stoker.DType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An RNTuple's schema as columns: each top-level field Stoker reads (a number, a fixed-size array
 * of numbers, a vector or RVec of numbers) with the column records it is read from, and every
 * other field refused with its type (NOTE [RNTuple layout] in {@link RNTupleTable}).
 */
final class RntFields {
    private RntFields() {
    }

    /** How a column is read: its values' field (and representations), and the index field of a vector. */
    record Plan(RootColumn column, List<RntSchema.ColumnRec> values, List<RntSchema.ColumnRec> index) {
    }

    /** The top-level fields of {@code s}: those read into {@code plans}, the others into {@code refused} with their types. */
    static void plan(RntSchema s, Map<RootColumn, Plan> plans, Map<String, String> refused) {
        int n = s.fields.size();
        List<List<Integer>> children = new ArrayList<>(n);
        List<List<RntSchema.ColumnRec>> cols = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            children.add(new ArrayList<>());
            cols.add(new ArrayList<>());
        }
        for (RntSchema.FieldRec f : s.fields) {
            if (f.parent() != f.id() && f.parent() >= 0 && f.parent() < n) {
                children.get(f.parent()).add(f.id());
            }
        }
        for (RntSchema.ColumnRec c : s.columns) {
            if (c.field() >= 0 && c.field() < n) {
                cols.get(c.field()).add(c);
            }
        }
        for (RntSchema.FieldRec f : s.fields) {
            if (f.parent() != f.id()) {
                continue;
            }
            String why = null;
            RootColumn column = null;
            Plan plan = null;
            List<Integer> kids = children.get(f.id());
            if (f.projected()) {
                why = "a projected field";
            } else if (f.role() == RntSchema.ROLE_LEAF && !f.repetitive() && kids.isEmpty()) {
                DType d = dtype(f.type());
                why = leafProblem(d, cols.get(f.id()));
                if (why == null) {
                    column = new RootColumn(f.name(), d, 1, false, f.type());
                    plan = new Plan(column, cols.get(f.id()), null);
                }
            } else if (f.repetitive() && kids.size() == 1 && cols.get(f.id()).isEmpty()) {
                RntSchema.FieldRec k = s.fields.get(kids.get(0));
                DType d = dtype(k.type());
                why = children.get(k.id()).isEmpty() && k.role() == RntSchema.ROLE_LEAF && !k.repetitive()
                        ? leafProblem(d, cols.get(k.id())) : "an array of " + k.type();
                if (why == null && (f.arraySize() < 1 || f.arraySize() > Integer.MAX_VALUE)) {
                    why = "an array of " + f.arraySize() + " elements";
                }
                if (why == null) {
                    column = new RootColumn(f.name(), d, (int) f.arraySize(), false, f.type());
                    plan = new Plan(column, cols.get(k.id()), null);
                }
            } else if (f.role() == RntSchema.ROLE_COLLECTION && kids.size() == 1 && vector(f.type())) {
                RntSchema.FieldRec k = s.fields.get(kids.get(0));
                DType d = dtype(k.type());
                why = children.get(k.id()).isEmpty() && k.role() == RntSchema.ROLE_LEAF && !k.repetitive()
                        ? leafProblem(d, cols.get(k.id())) : "a vector of " + k.type();
                if (why == null) {
                    why = indexProblem(cols.get(f.id()));
                }
                if (why == null) {
                    column = new RootColumn(f.name(), d, 1, true, f.type());
                    plan = new Plan(column, cols.get(k.id()), cols.get(f.id()));
                }
            } else {
                why = switch (f.role()) {
                    case RntSchema.ROLE_COLLECTION -> "a collection";
                    case RntSchema.ROLE_RECORD -> "a record";
                    case RntSchema.ROLE_VARIANT -> "a variant";
                    case RntSchema.ROLE_STREAMER -> "a ROOT-streamed object";
                    default -> "a field with subfields";
                };
            }
            if (plan != null) {
                plans.put(column, plan);
            } else {
                refused.put(f.name(), f.type().isEmpty() ? why : f.type());
            }
        }
    }

    private static boolean vector(String type) {
        return type.startsWith("std::vector<") || type.startsWith("ROOT::VecOps::RVec<")
                || type.startsWith("ROOT::RVec<");
    }

    /** The dtype of a numeric C++ type name as RNTuple normalizes it, or null. */
    static DType dtype(String type) {
        return switch (type) {
            case "bool" -> DType.BOOL;
            case "char", "std::int8_t", "int8_t", "signed char" -> DType.INT8;
            case "std::uint8_t", "uint8_t", "unsigned char" -> DType.UINT8;
            case "std::int16_t", "int16_t", "short" -> DType.INT16;
            case "std::uint16_t", "uint16_t", "unsigned short" -> DType.UINT16;
            case "std::int32_t", "int32_t", "int" -> DType.INT32;
            case "std::uint32_t", "uint32_t", "unsigned int" -> DType.UINT32;
            case "std::int64_t", "int64_t", "long", "long long" -> DType.INT64;
            case "std::uint64_t", "uint64_t", "unsigned long", "unsigned long long" -> DType.UINT64;
            case "float" -> DType.FLOAT32;
            case "double", "Double32_t" -> DType.FLOAT64;
            default -> null;
        };
    }

    /** Why a leaf of dtype {@code d} with these columns cannot be read, or null. */
    private static String leafProblem(DType d, List<RntSchema.ColumnRec> cs) {
        if (d == null) {
            return "not a number";
        }
        if (cs.isEmpty()) {
            return "no columns";
        }
        for (RntSchema.ColumnRec c : cs) {
            if (!RntEncoding.known(c.type()) || RntEncoding.isIndex(c.type())) {
                return "a column of type " + RntEncoding.name(c.type());
            }
            if (!RntEncoding.validBits(c.type(), c.bits())) {
                return "a " + RntEncoding.name(c.type()) + " column of " + c.bits() + " bits";
            }
            if (c.firstElement() != 0) {
                return "a column added during writing";
            }
            if (c.type() == RntEncoding.REAL32_QUANT && !(c.hasRange() && c.min() <= c.max())) {
                return "a quantized column without a valid range";
            }
            DType nat = RntEncoding.natural(c.type());
            boolean real = d == DType.FLOAT32 || d == DType.FLOAT64;
            boolean natReal = nat == DType.FLOAT32 || nat == DType.FLOAT64;
            if (real != natReal) {
                return "a " + RntEncoding.name(c.type()) + " column";
            }
        }
        return representations(cs);
    }

    private static String indexProblem(List<RntSchema.ColumnRec> cs) {
        if (cs.isEmpty()) {
            return "no index column";
        }
        for (RntSchema.ColumnRec c : cs) {
            if (!RntEncoding.isIndex(c.type()) || !RntEncoding.validBits(c.type(), c.bits())) {
                return "an index column of type " + RntEncoding.name(c.type());
            }
            if (c.firstElement() != 0) {
                return "a column added during writing";
            }
        }
        return representations(cs);
    }

    /** One column a representation, representations numbered from 0. */
    private static String representations(List<RntSchema.ColumnRec> cs) {
        for (int i = 0; i < cs.size(); i++) {
            if (cs.get(i).representation() != i) {
                return "several columns a representation";
            }
        }
        return null;
    }
}
