package dev.stoker.root;

import dev.stoker.DType;
import dev.stoker.root.TTreeTable.Col;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A TTree branch's type: the column a plain TBranch or a TBranchElement reads as (its dtype,
 * elements an entry, how its entries lie in the baskets, its counter) or the reason it is refused,
 * and ROOT's type names (leaf classes, streamer codes, C++ and ROOT class names) as dtypes and as
 * uproot shows them.
 */
final class BranchTypes {
    private BranchTypes() {
    }

    /** A plain TBranch's column, or the reason it is refused. */
    static Object plain(TTreeMeta.Branch b, Map<TTreeMeta.Leaf, TTreeMeta.Branch> owner) {
        if (b.leaves.size() != 1) {
            return b.leaves.isEmpty() ? "a branch without leaves" : "a leaf list (" + b.title + ")";
        }
        TTreeMeta.Leaf l = b.leaves.get(0);
        DType t = switch (l.cls) {
            case "TLeafO" -> DType.BOOL;
            case "TLeafB" -> l.unsigned ? DType.UINT8 : DType.INT8;
            case "TLeafS" -> l.unsigned ? DType.UINT16 : DType.INT16;
            case "TLeafI" -> l.unsigned ? DType.UINT32 : DType.INT32;
            case "TLeafL", "TLeafG" -> l.unsigned ? DType.UINT64 : DType.INT64;
            case "TLeafF" -> DType.FLOAT32;
            case "TLeafD" -> DType.FLOAT64;
            default -> null;
        };
        if (t == null) {
            return switch (l.cls) {
                case "TLeafC" -> "char*";
                case "TLeafF16" -> "Float16_t";
                case "TLeafD32" -> "Double32_t";
                default -> l.cls;
            };
        }
        List<Integer> dims = dims(l.title);
        if (l.count != null) {
            if (!(l.count instanceof TTreeMeta.Leaf cl) || owner.get(cl) == null) {
                return cname(t) + "[] (its counter is not a leaf of this tree)";
            }
            if (dims.size() > 1 || l.len > 1) {
                return cname(t) + "[]" + suffix(dims.subList(Math.min(1, dims.size()), dims.size()));
            }
            DType ct = counterType(cl);
            if (ct == null) {
                return cname(t) + "[] (counted by a " + cl.cls + ")";
            }
            return new Col(new RootColumn("", t, 1, true, cname(t) + "[]"), "", b, t, 1, 0, owner.get(cl), ct);
        }
        int fixed = Math.max(1, l.len);
        String type = cname(t) + suffix(dims);
        return new Col(new RootColumn("", t, fixed, false, type), "", b, t, fixed, -1, null, null);
    }

    private static DType counterType(TTreeMeta.Leaf l) {
        return switch (l.cls) {
            case "TLeafB" -> l.unsigned ? DType.UINT8 : DType.INT8;
            case "TLeafS" -> l.unsigned ? DType.UINT16 : DType.INT16;
            case "TLeafI" -> l.unsigned ? DType.UINT32 : DType.INT32;
            case "TLeafL", "TLeafG" -> l.unsigned ? DType.UINT64 : DType.INT64;
            case "TLeafElement" -> basic(l.type);
            default -> null;
        };
    }

    /** A TBranchElement's column, or the reason it is refused. */
    static Object element(TTreeMeta.Branch b, Map<String, List<Streamers.Info>> streamers) {
        if (b.id < 0) {
            // the whole object at the top: a std::vector<T> of numbers is read, nothing else
            DType t = vectorOf(b.className);
            if (t == null) {
                return typeName(b.className);
            }
            return vector(b, t);
        }
        Streamers.Element e = null;
        List<Streamers.Info> infos = streamers.get(b.className);
        if (infos != null) {
            Streamers.Info info = infos.get(infos.size() - 1);
            for (Streamers.Info i : infos) {
                if (i.version() == b.classVersion) {
                    info = i;
                }
            }
            e = info.element(b.id, cleanName(b.name));
        }
        String declared = e == null ? "" : e.typeName();
        if (b.type == 31 || b.type == 41) {
            return typeName(declared.isEmpty() ? "a member of a split collection" : declared) + " (a member of a split collection)";
        }
        int st = b.streamerType;
        DType basic = basic(st);
        if (basic != null) {
            return new Col(new RootColumn("", basic, 1, false, cname(basic)), "", b, basic, 1, -1, null, null);
        }
        if (st > 20 && st < 40 && basic(st - 20) != null) {
            DType t = basic(st - 20);
            int n = b.leaves.size() == 1 && b.leaves.get(0).len > 0 ? b.leaves.get(0).len : e == null ? 0 : e.arrayLength();
            if (n <= 0) {
                return cname(t) + "[?] (its length is not recorded)";
            }
            String type = cname(t) + (e != null && !dims(b.name).isEmpty() ? suffix(dims(b.name)) : "[" + n + "]");
            return new Col(new RootColumn("", t, n, false, type), "", b, t, n, -1, null, null);
        }
        if (st > 40 && st < 60 && basic(st - 40) != null) {
            DType t = basic(st - 40);
            if (!(b.branchCount instanceof TTreeMeta.Branch counter) || counter.leaves.size() != 1) {
                return cname(t) + "[] (its counter branch is missing)";
            }
            DType ct = counterType(counter.leaves.get(0));
            if (ct == null) {
                return cname(t) + "[] (counted by a " + counter.leaves.get(0).cls + ")";
            }
            return new Col(new RootColumn("", t, 1, true, cname(t) + "[]"), "", b, t, 1, 1, counter, ct);
        }
        if (st == 300 || st == 500 || st == 365) {
            if (e == null) {
                return "an STL container of " + b.className + " (no streamer info describes it)";
            }
            DType t = vectorOf(e.typeName());
            return t == null ? typeName(e.typeName()) : vector(b, t);
        }
        return switch (st) {
            case 7 -> "char*";
            case 9 -> "Double32_t";
            case 19 -> "Float16_t";
            case 65 -> "TString";
            default -> declared.isEmpty() ? "a member of " + b.className + " of streamer type " + st : typeName(declared);
        };
    }

    private static Col vector(TTreeMeta.Branch b, DType t) {
        return new Col(new RootColumn("", t, 1, true, "std::vector<" + cname(t) + ">"), "", b, t, 1, 10, null, null);
    }

    /** The element type of {@code vector<T>} for a numeric T, else null. */
    static DType vectorOf(String cls) {
        String s = cls.replace(" ", "");
        if (s.startsWith("std::")) {
            s = s.substring(5);
        }
        if (!s.startsWith("vector<") || !s.endsWith(">")) {
            return null;
        }
        return ctype(s.substring(7, s.length() - 1));
    }

    /** A C or ROOT type name, as in a streamer or a class name, to a dtype; null when it is not a number. */
    static DType ctype(String t) {
        return switch (t.replace("std::", "")) {
            case "bool", "Bool_t" -> DType.BOOL;
            case "char", "signedchar", "Char_t", "int8_t" -> DType.INT8;
            case "unsignedchar", "UChar_t", "uint8_t" -> DType.UINT8;
            case "short", "Short_t", "int16_t" -> DType.INT16;
            case "unsignedshort", "UShort_t", "uint16_t" -> DType.UINT16;
            case "int", "Int_t", "int32_t" -> DType.INT32;
            case "unsignedint", "unsigned", "UInt_t", "uint32_t" -> DType.UINT32;
            case "long", "Long_t", "Long64_t", "longlong", "int64_t" -> DType.INT64;
            case "unsignedlong", "ULong_t", "ULong64_t", "unsignedlonglong", "uint64_t" -> DType.UINT64;
            case "float", "Float_t" -> DType.FLOAT32;
            case "double", "Double_t" -> DType.FLOAT64;
            default -> null;
        };
    }

    /** A streamer type code of a basic type to its dtype; null for any other code. */
    static DType basic(int code) {
        return switch (code) {
            case 1 -> DType.INT8;
            case 2 -> DType.INT16;
            case 3 -> DType.INT32;
            case 4, 16 -> DType.INT64;
            case 5 -> DType.FLOAT32;
            case 8 -> DType.FLOAT64;
            case 11 -> DType.UINT8;
            case 12 -> DType.UINT16;
            case 13, 15, 6 -> DType.UINT32; // 6: a counter of a split class's arrays, as uproot reads it
            case 14, 17 -> DType.UINT64;
            case 18 -> DType.BOOL;
            default -> null;
        };
    }

    /** The C++ name uproot shows for a dtype. */
    static String cname(DType t) {
        return switch (t) {
            case BOOL -> "bool";
            case FLOAT32 -> "float";
            case FLOAT64 -> "double";
            default -> t.label() + "_t";
        };
    }

    /** A ROOT class name as a C++ type: {@code vector<string>} becomes {@code std::vector<std::string>}. */
    static String typeName(String cls) {
        String s = cls.replace(" ", "").replace("std::", "");
        s = s.replaceAll("\\b(vector|map|set|unordered_map|unordered_set|list|deque|multimap|multiset|string|pair|array|bitset)\\b", "std::$1");
        return s.replace(",", ", ");
    }

    private static String cleanName(String name) {
        String s = name;
        int dot = s.lastIndexOf('.');
        if (dot >= 0) {
            s = s.substring(dot + 1);
        }
        int br = s.indexOf('[');
        return br >= 0 ? s.substring(0, br) : s;
    }

    /** The fixed dimensions {@code [3][2]} of a leaf title or branch name ({@code [n]} counts as -1). */
    private static List<Integer> dims(String title) {
        List<Integer> out = new ArrayList<>();
        String s = title;
        int slash = s.indexOf('/');
        if (slash >= 0) {
            s = s.substring(0, slash);
        }
        int i = s.indexOf('[');
        while (i >= 0) {
            int j = s.indexOf(']', i);
            if (j < 0) {
                break;
            }
            String d = s.substring(i + 1, j);
            try {
                out.add(Integer.parseInt(d.strip()));
            } catch (NumberFormatException e) {
                out.add(-1);
            }
            i = s.indexOf('[', j);
        }
        return out;
    }

    private static String suffix(List<Integer> dims) {
        StringBuilder b = new StringBuilder();
        for (int d : dims) {
            b.append('[').append(d < 0 ? "" : String.valueOf(d)).append(']');
        }
        return b.toString();
    }
}
