package dev.stoker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What a loader makes of its source's {@link Field#ragged ragged} fields (a jet's particles, an
 * event's pulses) before they reach the model: each one a glob of {@link #pad} names becomes a
 * tensor field {@code dtype[N]} (a batch column {@code [B, N]}), its first {@code N} values and then
 * the {@link #value pad value}; the fields of a {@link #stack} become one tensor field
 * {@code stackType[N, F]} ({@code [B, N, F]}), feature {@code j} the {@code j}-th field named, as
 * ParticleNet's inputs are built. A sample's values past {@code N} are dropped, and counted
 * ({@link LoaderStats#truncatedSamples()}, {@link LoaderStats#droppedValues()}). Ragged fields that
 * no glob names stay ragged; the other fields pass unchanged.
 *
 * <p>With {@link #lengths}, each padded field or stack {@code NAME} is followed by
 * {@code NAME_len}, an int64 scalar: the entries of the sample that the tensor holds
 * ({@code min(length, N)}); with {@link #mask}, by {@code NAME_mask}, bool {@code [N]}: true where
 * the tensor holds a value of the sample. A stack takes its {@code N} from the glob of
 * {@link #pad} that names the stack; the fields of one stack must have one length in each sample,
 * or the sample fails naming them.
 *
 * <p>A value: each method returns a new padding. {@code Loader.builder(data).padding(
 * Padding.of().pad("Jet_*", 128).stack("particles", "Part_px", "Part_py").pad("particles", 128).lengths(true))}.
 */
public final class Padding {
    private final Map<String, Integer> pads;
    private final Map<String, List<String>> stacks;
    private final DType stackType;
    private final double value;
    private final boolean lengths;
    private final boolean mask;

    private Padding(Map<String, Integer> pads, Map<String, List<String>> stacks, DType stackType, double value,
                    boolean lengths, boolean mask) {
        this.pads = pads;
        this.stacks = stacks;
        this.stackType = stackType;
        this.value = value;
        this.lengths = lengths;
        this.mask = mask;
    }

    /** Nothing padded yet: stacks of float32, pad value 0, no lengths, no mask. */
    public static Padding of() {
        return new Padding(Map.of(), Map.of(), DType.FLOAT32, 0, false, false);
    }

    /**
     * Pads the ragged fields whose names match {@code glob} ({@code *} any characters, {@code ?}
     * one) to {@code length} values; a stack named by it gets that length. The first glob given
     * that matches a name is the one that counts for it.
     */
    public Padding pad(String glob, int length) {
        Objects.requireNonNull(glob, "glob");
        if (glob.isEmpty()) {
            throw new IllegalArgumentException("a pad glob must not be empty");
        }
        if (length < 1) {
            throw new IllegalArgumentException("pad '" + glob + "': a length must be >= 1, got " + length);
        }
        if (pads.containsKey(glob)) {
            throw new IllegalArgumentException("pad '" + glob + "' is given twice");
        }
        Map<String, Integer> p = new LinkedHashMap<>(pads);
        p.put(glob, length);
        return new Padding(java.util.Collections.unmodifiableMap(p), stacks, stackType, value, lengths, mask);
    }

    /** Stacks the ragged fields {@code fields} (in this order: feature 0, 1, ...) into field {@code name}. */
    public Padding stack(String name, String... fields) {
        return stack(name, Arrays.asList(fields));
    }

    /** Stacks the ragged fields {@code fields} (in this order: feature 0, 1, ...) into field {@code name}. */
    public Padding stack(String name, List<String> fields) {
        Objects.requireNonNull(name, "name");
        if (fields.isEmpty()) {
            throw new IllegalArgumentException("stack '" + name + "' needs at least one field");
        }
        if (stacks.containsKey(name)) {
            throw new IllegalArgumentException("stack '" + name + "' is given twice");
        }
        if (new java.util.HashSet<>(fields).size() != fields.size()) {
            throw new IllegalArgumentException("stack '" + name + "' names a field twice: " + fields);
        }
        Map<String, List<String>> s = new LinkedHashMap<>(stacks);
        s.put(name, List.copyOf(fields));
        return new Padding(pads, java.util.Collections.unmodifiableMap(s), stackType, value, lengths, mask);
    }

    /** The dtype the values of a stack are converted to (default float32). */
    public Padding stackType(DType type) {
        return new Padding(pads, stacks, Objects.requireNonNull(type, "type"), value, lengths, mask);
    }

    /** The value past a sample's last entry, in each field's dtype (default 0; integer types take it truncated, bool non-zero). */
    public Padding value(double value) {
        return new Padding(pads, stacks, stackType, value, lengths, mask);
    }

    /** Each padded field and stack {@code NAME} followed by {@code NAME_len}, int64: the entries it holds. */
    public Padding lengths(boolean lengths) {
        return new Padding(pads, stacks, stackType, value, lengths, mask);
    }

    /** Each padded field and stack {@code NAME} followed by {@code NAME_mask}, bool {@code [N]}: true where it holds an entry. */
    public Padding mask(boolean mask) {
        return new Padding(pads, stacks, stackType, value, lengths, mask);
    }

    /** The globs and their lengths, in the order given. */
    public Map<String, Integer> pads() {
        return pads;
    }

    /** The stacks and their fields, in the order given. */
    public Map<String, List<String>> stacks() {
        return stacks;
    }

    public DType stackType() {
        return stackType;
    }

    public double value() {
        return value;
    }

    public boolean lengths() {
        return lengths;
    }

    public boolean mask() {
        return mask;
    }

    /** Whether this pads or stacks anything. */
    public boolean isEmpty() {
        return pads.isEmpty() && stacks.isEmpty();
    }

    /** The name of the lengths field of a padded field or stack. */
    public static String lengthsName(String name) {
        return name + "_len";
    }

    /** The name of the mask field of a padded field or stack. */
    public static String maskName(String name) {
        return name + "_mask";
    }

    /** The length the first matching glob gives {@code name}, or -1. */
    int lengthOf(String name) {
        for (var e : pads.entrySet()) {
            if (matches(e.getKey(), name)) {
                return e.getValue();
            }
        }
        return -1;
    }

    static boolean matches(String glob, String name) {
        if (glob.indexOf('*') < 0 && glob.indexOf('?') < 0) {
            return glob.equals(name);
        }
        StringBuilder re = new StringBuilder();
        for (String part : glob.split("(?=[*?])|(?<=[*?])")) {
            re.append(part.equals("*") ? ".*" : part.equals("?") ? "." : Pattern.quote(part));
        }
        return name.matches(re.toString());
    }

    /** This padding applied to {@code source}'s fields (the dataset {@code name}'s); refused naming what does not fit. */
    PadLayout layout(Schema source, String name) {
        return new PadLayout(this, source, name);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Padding p && pads.equals(p.pads) && stacks.equals(p.stacks) && stackType == p.stackType
                && Double.compare(value, p.value) == 0 && lengths == p.lengths && mask == p.mask;
    }

    @Override
    public int hashCode() {
        return Objects.hash(pads, stacks, stackType, value, lengths, mask);
    }

    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        pads.forEach((g, n) -> parts.add(g + "=" + n));
        stacks.forEach((s, f) -> parts.add(s + "=" + String.join(",", f)));
        if (!stacks.isEmpty()) {
            parts.add("stackType=" + stackType.label());
        }
        if (value != 0) {
            parts.add("value=" + value);
        }
        if (lengths) {
            parts.add("lengths");
        }
        if (mask) {
            parts.add("mask");
        }
        return "Padding" + parts;
    }
}
