package dev.stoker.formats.sqlite;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A table's columns as its {@code CREATE TABLE} statement declares them (the statement SQLite
 * keeps in {@code sqlite_schema}): each column's name, declared type and type affinity (SQLite's
 * rules, section 3.1 of its datatype page), which column is an alias of the rowid (declared
 * {@code INTEGER PRIMARY KEY}: its value lives in the rowid, the record holds NULL), and whether
 * the table is {@code WITHOUT ROWID} (its rows are an index b-tree, not read here) or has
 * generated columns (not stored in the record).
 */
record SqlSchema(List<Column> columns, int rowidAlias, boolean withoutRowid, boolean generated, boolean virtual,
        String unreadable) {

    /** A column's name, declared type (as written, upper-cased; "" when none) and affinity. */
    record Column(String name, String declared, Affinity affinity) {
    }

    /** SQLite's type affinities. */
    enum Affinity {
        INTEGER, TEXT, BLOB, REAL, NUMERIC;

        /** The affinity of a declared type, by SQLite's rules (the first that matches). */
        static Affinity of(String declared) {
            String t = declared.toUpperCase(Locale.ROOT);
            if (t.contains("INT")) {
                return INTEGER;
            }
            if (t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT")) {
                return TEXT;
            }
            if (t.isEmpty() || t.contains("BLOB")) {
                return BLOB;
            }
            if (t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB")) {
                return REAL;
            }
            return NUMERIC;
        }
    }

    /** A virtual table's: no columns read, no rows in the file. */
    static SqlSchema virtual(String sql) {
        return new SqlSchema(List.of(), -1, false, false, true, null);
    }

    /** A table whose statement did not parse: refused when read, not when the file opens. */
    static SqlSchema unreadable(String why) {
        return new SqlSchema(List.of(), -1, false, false, false, why);
    }

    private static final List<String> CONSTRAINTS = List.of("CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK",
            "DEFAULT", "COLLATE", "REFERENCES", "GENERATED", "AS");

    /**
     * Parses a {@code CREATE TABLE name (...) [WITHOUT ROWID]} statement.
     *
     * @throws IllegalArgumentException when it is not one
     */
    static SqlSchema parse(String sql) {
        List<String> tokens = tokens(sql);
        int open = tokens.indexOf("(");
        if (tokens.size() < 4 || !tokens.get(0).equalsIgnoreCase("CREATE") || open < 0) {
            throw new IllegalArgumentException("expected CREATE TABLE name (...), got: " + sql);
        }
        List<List<String>> parts = new ArrayList<>();
        List<String> part = new ArrayList<>();
        int depth = 0;
        int close = -1;
        for (int i = open + 1; i < tokens.size(); i++) {
            String t = tokens.get(i);
            if (t.equals("(")) {
                depth++;
            } else if (t.equals(")")) {
                if (depth == 0) {
                    close = i;
                    break;
                }
                depth--;
            } else if (t.equals(",") && depth == 0) {
                parts.add(part);
                part = new ArrayList<>();
                continue;
            }
            part.add(t);
        }
        if (close < 0) {
            throw new IllegalArgumentException("unbalanced parentheses in: " + sql);
        }
        parts.add(part);
        boolean withoutRowid = false;
        for (int i = close + 1; i + 1 < tokens.size(); i++) {
            if (tokens.get(i).equalsIgnoreCase("WITHOUT") && tokens.get(i + 1).equalsIgnoreCase("ROWID")) {
                withoutRowid = true;
            }
        }
        List<Column> columns = new ArrayList<>();
        int alias = -1;
        boolean generated = false;
        String tablePk = null;
        for (List<String> p : parts) {
            if (p.isEmpty()) {
                throw new IllegalArgumentException("an empty column definition in: " + sql);
            }
            String first = p.get(0).toUpperCase(Locale.ROOT);
            if (!isQuoted(p.get(0)) && (first.equals("CONSTRAINT") || first.equals("PRIMARY") || first.equals("UNIQUE")
                    || first.equals("CHECK") || first.equals("FOREIGN"))) {
                int pk = indexOfWord(p, "PRIMARY");
                int k = pk < 0 ? -1 : p.indexOf("(");
                if (pk >= 0 && k > pk && k + 2 < p.size() && p.get(k + 2).equals(")")) {
                    tablePk = unquote(p.get(k + 1)); // PRIMARY KEY(one column)
                }
                continue;
            }
            String name = unquote(p.get(0));
            StringBuilder type = new StringBuilder();
            int i = 1;
            for (; i < p.size(); i++) {
                String t = p.get(i);
                if (t.equals("(")) {
                    int d = 0;
                    for (; i < p.size(); i++) { // a type's arguments: VARCHAR(10), DECIMAL(10, 2)
                        d += p.get(i).equals("(") ? 1 : p.get(i).equals(")") ? -1 : 0;
                        if (d == 0) {
                            break;
                        }
                    }
                    continue;
                }
                if (!isQuoted(t) && CONSTRAINTS.contains(t.toUpperCase(Locale.ROOT))) {
                    break;
                }
                type.append(type.isEmpty() ? "" : " ").append(unquote(t));
            }
            String declared = type.toString().toUpperCase(Locale.ROOT);
            int pk = indexOfWord(p.subList(i, p.size()), "PRIMARY");
            boolean desc = pk >= 0 && i + pk + 2 < p.size() && p.get(i + pk + 2).equalsIgnoreCase("DESC");
            if (pk >= 0 && declared.equals("INTEGER") && !desc) {
                alias = columns.size();
            }
            List<String> rest = p.subList(i, p.size());
            int as = indexOfWord(rest, "AS");
            if (indexOfWord(rest, "GENERATED") >= 0 || as >= 0 && as + 1 < rest.size() && rest.get(as + 1).equals("(")) {
                generated = true;
            }
            columns.add(new Column(name, declared, Affinity.of(declared)));
        }
        if (alias < 0 && tablePk != null) {
            for (int c = 0; c < columns.size(); c++) {
                if (columns.get(c).name().equalsIgnoreCase(tablePk) && columns.get(c).declared().equals("INTEGER")) {
                    alias = c;
                }
            }
        }
        return new SqlSchema(List.copyOf(columns), withoutRowid ? -1 : alias, withoutRowid, generated, false, null);
    }

    /** The index of column {@code name} (ASCII case ignored), or -1. */
    int column(String name) {
        for (int i = 0; i < columns.size(); i++) {
            if (columns.get(i).name().equalsIgnoreCase(name)) {
                return i;
            }
        }
        return -1;
    }

    private static int indexOfWord(List<String> p, String word) {
        for (int i = 0; i < p.size(); i++) {
            if (!isQuoted(p.get(i)) && p.get(i).equalsIgnoreCase(word)) {
                return i;
            }
        }
        return -1;
    }

    private static boolean isQuoted(String t) {
        return !t.isEmpty() && "\"'`[".indexOf(t.charAt(0)) >= 0;
    }

    private static String unquote(String t) {
        if (t.length() >= 2 && isQuoted(t)) {
            char q = t.charAt(0);
            String inner = t.substring(1, t.length() - 1);
            return q == '[' ? inner : inner.replace(String.valueOf(q) + q, String.valueOf(q));
        }
        return t;
    }

    /** SQL tokens: words and numbers, quoted names and strings (kept with their quotes), punctuation; comments dropped. */
    static List<String> tokens(String sql) {
        List<String> out = new ArrayList<>();
        int n = sql.length();
        int i = 0;
        while (i < n) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                while (i < n && sql.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int end = sql.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
            } else if (c == '"' || c == '\'' || c == '`' || c == '[') {
                char close = c == '[' ? ']' : c;
                int j = i + 1;
                while (j < n) {
                    if (sql.charAt(j) == close) {
                        if (close != ']' && j + 1 < n && sql.charAt(j + 1) == close) {
                            j += 2; // a doubled quote inside
                            continue;
                        }
                        break;
                    }
                    j++;
                }
                if (j >= n) {
                    throw new IllegalArgumentException("an unterminated quote in: " + sql);
                }
                out.add(sql.substring(i, j + 1));
                i = j + 1;
            } else if (Character.isLetterOrDigit(c) || c == '_' || c == '$' || c > 127) {
                int j = i;
                while (j < n && (Character.isLetterOrDigit(sql.charAt(j)) || sql.charAt(j) == '_' || sql.charAt(j) == '$'
                        || sql.charAt(j) == '.' && Character.isDigit(c) || sql.charAt(j) > 127)) {
                    j++;
                }
                out.add(sql.substring(i, j));
                i = j;
            } else {
                out.add(String.valueOf(c));
                i++;
            }
        }
        return out;
    }
}
