package dev.stoker.storage;

import java.util.ArrayList;
import java.util.List;

/**
 * Shard lists from brace patterns, as WebDataset expands them (the {@code braceexpand} rules):
 * {@code train-{000000..000999}.tar} (numeric ranges keep the zero padding of their endpoints),
 * {@code {a,b,c}} (lists), {@code {1..9..2}} (steps), {@code {a..e}} (letters), several braces
 * and nested ones; {@code \{} is a literal brace.
 */
public final class ShardPattern {
    private ShardPattern() {
    }

    public static List<String> expand(String pattern) {
        List<String> out = new ArrayList<>();
        expand(pattern, out);
        return out;
    }

    /** Every pattern's expansion, in order: what a command's list of shards or paths names. */
    public static List<String> expand(List<String> patterns) {
        List<String> out = new ArrayList<>();
        for (String p : patterns) {
            expand(p, out);
        }
        return out;
    }

    private static void expand(String p, List<String> out) {
        int open = -1;
        for (int i = 0; i < p.length(); i++) {
            char c = p.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == '{') {
                open = i;
                break;
            }
        }
        if (open < 0) {
            out.add(unescape(p));
            return;
        }
        int depth = 0;
        int close = -1;
        List<Integer> commas = new ArrayList<>();
        for (int i = open; i < p.length(); i++) {
            char c = p.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == '{') {
                depth++;
            } else if (c == '}') {
                depth--;
                if (depth == 0) {
                    close = i;
                    break;
                }
            } else if (c == ',' && depth == 1) {
                commas.add(i);
            }
        }
        if (close < 0) {
            throw new IllegalArgumentException("unbalanced '{' at character " + open + " of " + p);
        }
        String head = p.substring(0, open);
        String body = p.substring(open + 1, close);
        String tail = p.substring(close + 1);
        List<String> alternatives = new ArrayList<>();
        if (!commas.isEmpty()) {
            int from = open + 1;
            for (int c : commas) {
                alternatives.add(p.substring(from, c));
                from = c + 1;
            }
            alternatives.add(p.substring(from, close));
        } else {
            List<String> range = range(body);
            if (range == null) {
                // not a list or a range: the braces are literal, as braceexpand leaves them
                for (String rest : expand(tail)) {
                    out.add(unescape(head) + "{" + body + "}" + rest);
                }
                return;
            }
            alternatives.addAll(range);
        }
        for (String alt : alternatives) {
            expand(head + alt + tail, out);
        }
    }

    private static List<String> range(String body) {
        String[] parts = body.split("\\.\\.", -1);
        if (parts.length < 2 || parts.length > 3) {
            return null;
        }
        long step = 1;
        if (parts.length == 3) {
            if (!parts[2].matches("-?\\d{1,18}")) {
                return null;
            }
            step = Math.abs(Long.parseLong(parts[2]));
            if (step == 0) {
                step = 1;
            }
        }
        List<String> out = new ArrayList<>();
        if (parts[0].matches("-?\\d{1,18}") && parts[1].matches("-?\\d{1,18}")) {
            long a = Long.parseLong(parts[0]);
            long b = Long.parseLong(parts[1]);
            boolean pad = parts[0].matches("-?0\\d+") || parts[1].matches("-?0\\d+");
            int width = pad ? Math.max(parts[0].length(), parts[1].length()) : 0;
            long dir = a <= b ? step : -step;
            for (long v = a; a <= b ? v <= b : v >= b; v += dir) {
                out.add(width > 0 ? pad(v, width) : Long.toString(v));
            }
            return out;
        }
        if (parts[0].length() == 1 && parts[1].length() == 1 && Character.isLetter(parts[0].charAt(0))
                && Character.isLetter(parts[1].charAt(0))) {
            char a = parts[0].charAt(0);
            char b = parts[1].charAt(0);
            int dir = a <= b ? (int) step : -(int) step;
            for (int v = a; a <= b ? v <= b : v >= b; v += dir) {
                out.add(String.valueOf((char) v));
            }
            return out;
        }
        return null;
    }

    private static String pad(long v, int width) {
        String s = Long.toString(Math.abs(v));
        StringBuilder b = new StringBuilder(v < 0 ? "-" : "");
        for (int i = s.length() + (v < 0 ? 1 : 0); i < width; i++) {
            b.append('0');
        }
        return b.append(s).toString();
    }

    private static String unescape(String s) {
        return s.replace("\\{", "{").replace("\\}", "}").replace("\\,", ",");
    }
}
