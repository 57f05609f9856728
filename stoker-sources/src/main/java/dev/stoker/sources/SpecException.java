package dev.stoker.sources;

import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A spec that cannot be opened as given: an unknown or missing option, or a value out of its
 * range. {@link #option()} names the option as a spec does ({@code seq_len}); the CLI names it as
 * its flag ({@code --seq-len}), Python as its keyword. Other options a problem names are written
 * {@code {name}} in it ({@link #naming}), so that {@link #message(UnaryOperator)} names them the
 * same way.
 */
public final class SpecException extends IllegalArgumentException {
    private static final Pattern OPTION = Pattern.compile("\\{([a-z][a-z0-9_]*)}");

    private final String option;
    private final String problem;
    private final boolean template;

    /** {@code option} (a spec's name, or null when the problem is not one option's) {@code problem}, e.g. "must be >= 1, got 0". */
    public SpecException(String option, String problem) {
        this(option, problem, false);
    }

    private SpecException(String option, String problem, boolean template) {
        super(option == null ? names(problem, template, UnaryOperator.identity())
                : option + " " + names(problem, template, UnaryOperator.identity()));
        this.option = option;
        this.problem = problem;
        this.template = template;
    }

    /** A problem that names other options, each written {@code {name}} in {@code template}. */
    public static SpecException naming(String option, String template) {
        return new SpecException(option, template, true);
    }

    /** The option, as a spec names it; null when the problem is the spec's as a whole. */
    public String option() {
        return option;
    }

    /** What is wrong with it, without its name. */
    public String problem() {
        return names(problem, template, UnaryOperator.identity());
    }

    /** The message with every option named as {@code name} names it (a flag: {@code --seq-len}). */
    public String message(UnaryOperator<String> name) {
        String p = names(problem, template, name);
        return option == null ? p : name.apply(option) + " " + p;
    }

    private static String names(String problem, boolean template, UnaryOperator<String> name) {
        return !template ? problem : OPTION.matcher(problem).replaceAll(m -> Matcher.quoteReplacement(name.apply(m.group(1))));
    }

    static void atLeast(String option, long value, long min) {
        if (value < min) {
            throw new SpecException(option, "must be >= " + min + ", got " + value);
        }
    }

    /**
     * {@code value} of a folder option that also takes words ({@code ram}, {@code disk}): one of
     * {@code modes}, or a folder that reads as a path (with a {@code /}), so that a misspelt word
     * is refused instead of made a folder in the working directory.
     */
    static void modeOrFolder(String option, String value, String... modes) {
        if (java.util.List.of(modes).contains(value) || value.contains("/")) {
            return;
        }
        throw new SpecException(option, "must be " + String.join(" or ", modes) + ", or a folder: a path with a '/'"
                + (value.isBlank() ? "" : " (./" + value + ")") + ", got '" + value + "'");
    }

    static String oneOf(String option, String value, String... choices) {
        for (String c : choices) {
            if (c.equals(value)) {
                return value;
            }
        }
        throw notOneOf(option, value, choices);
    }

    /** {@code value} of {@code option} is none of {@code choices}: the error that names them. */
    static SpecException notOneOf(String option, String value, String... choices) {
        return new SpecException(option, "must be " + String.join(", ", java.util.Arrays.copyOf(choices, choices.length - 1))
                + (choices.length > 1 ? " or " : "") + choices[choices.length - 1] + ", got '" + value + "'");
    }
}
