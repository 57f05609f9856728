package dev.stoker;

import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The fields of a sample, in declaration order, with unique names. */
public final class Schema {
    private final List<Field> fields;
    private final int[] byName;

    private Schema(List<Field> fields) {
        if (fields.isEmpty()) {
            throw new IllegalArgumentException("a schema needs at least one field");
        }
        Set<String> seen = new HashSet<>();
        for (Field f : fields) {
            if (!seen.add(f.name())) {
                throw new IllegalArgumentException("duplicate field name '" + f.name() + "'");
            }
        }
        this.fields = List.copyOf(fields);
        Integer[] order = new Integer[fields.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, Comparator.comparing(i -> fields.get(i).name()));
        this.byName = Arrays.stream(order).mapToInt(Integer::intValue).toArray();
    }

    public static Schema of(Field... fields) {
        return new Schema(List.of(fields));
    }

    public static Schema of(List<Field> fields) {
        return new Schema(fields);
    }

    public List<Field> fields() {
        return fields;
    }

    public int size() {
        return fields.size();
    }

    public Field field(int i) {
        return fields.get(i);
    }

    /** The index of the named field; an {@link IllegalArgumentException} names the fields there are. */
    public int indexOf(String name) {
        for (int i = 0; i < fields.size(); i++) {
            if (fields.get(i).name().equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException("no field '" + name + "' in " + this);
    }

    /** Field indices sorted by field name: the order in which batch digests read fields. */
    int[] nameOrder() {
        return byName.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Schema s && fields.equals(s.fields);
    }

    @Override
    public int hashCode() {
        return fields.hashCode();
    }

    @Override
    public String toString() {
        return fields.toString();
    }
}
