package dev.stoker.storage.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A module's public surface, written down: every public type of the packages its
 * {@code module-info} exports to everyone (all its packages when it has none), and each one's
 * public and protected constructors, methods and fields, one line each, sorted (what JMH generates
 * for a benchmark is left out). A module's {@code ApiSurfaceTest} compares it with
 * {@code api/<module>.txt} and fails on any difference, so that growth (or loss) of the API shows
 * in review; {@code -Dstoker.api.write=true} writes the file anew, to be committed with the change.
 */
public final class ApiSurface {
    private ApiSurface() {
    }

    /** Fails when the surface of the classes in {@code target/classes} is not {@code api/<module>.txt}. */
    public static void check(String module) throws IOException {
        Path classes = Path.of("target", "classes");
        Path file = Path.of("api", module + ".txt");
        List<String> is = of(classes);
        String now = is.stream().map(line -> line + "\n").collect(Collectors.joining());
        if (Boolean.getBoolean("stoker.api.write")) {
            Files.createDirectories(file.getParent());
            Files.writeString(file, now, StandardCharsets.UTF_8);
            return;
        }
        if (!Files.exists(file)) {
            fail(file.toAbsolutePath() + " is missing: write it with -Dstoker.api.write=true and commit it");
        }
        List<String> was = Files.readAllLines(file, StandardCharsets.UTF_8);
        if (!was.equals(is)) {
            Set<String> added = new TreeSet<>(is);
            was.forEach(added::remove);
            Set<String> removed = new TreeSet<>(was);
            is.forEach(removed::remove);
            fail("the public API of " + module + " changed; if that is meant, write " + file
                    + " anew with -Dstoker.api.write=true and commit it\n  added:\n    "
                    + String.join("\n    ", added) + "\n  removed:\n    " + String.join("\n    ", removed));
        }
    }

    /** The surface of the compiled classes under {@code classes}, one sorted line a type or member. */
    public static List<String> of(Path classes) throws IOException {
        Set<String> exported = exported(classes);
        List<String> names;
        try (Stream<Path> files = Files.walk(classes)) {
            names = files.map(p -> classes.relativize(p).toString())
                    .filter(n -> n.endsWith(".class") && !n.equals("module-info.class") && !n.endsWith("package-info.class"))
                    .filter(n -> !n.contains("/jmh_generated/")) // JMH's harness for a benchmark, written at compile time
                    .map(n -> n.substring(0, n.length() - 6).replace('/', '.'))
                    .sorted().collect(Collectors.toList());
        }
        TreeSet<String> lines = new TreeSet<>();
        ClassLoader loader = ApiSurface.class.getClassLoader();
        for (String name : names) {
            Class<?> c;
            try {
                c = Class.forName(name, false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                throw new IOException("cannot load " + name + " to read its API: " + e, e);
            }
            if (!visible(c) || (exported != null && !exported.contains(c.getPackageName()))) {
                continue;
            }
            String type = c.getName();
            lines.add(type + ": " + describe(c));
            for (Constructor<?> k : c.getDeclaredConstructors()) {
                if (shown(k.getModifiers()) && !k.isSynthetic()) {
                    lines.add(type + ":   " + strip(k.toGenericString()));
                }
            }
            for (Method m : c.getDeclaredMethods()) {
                if (shown(m.getModifiers()) && !m.isSynthetic() && !m.isBridge()) {
                    lines.add(type + ":   " + strip(m.toGenericString()));
                }
            }
            for (Field f : c.getDeclaredFields()) {
                if (shown(f.getModifiers()) && !f.isSynthetic()) {
                    lines.add(type + ":   " + strip(f.toGenericString()));
                }
            }
        }
        return new ArrayList<>(lines);
    }

    /** The packages exported to everyone, or null when the module has no descriptor (all count). */
    private static Set<String> exported(Path classes) throws IOException {
        Path info = classes.resolve("module-info.class");
        if (!Files.exists(info)) {
            return null;
        }
        try (InputStream in = Files.newInputStream(info)) {
            return ModuleDescriptor.read(in).exports().stream().filter(e -> !e.isQualified())
                    .map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
        }
    }

    /** Public, and (nested) inside public types only. */
    private static boolean visible(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getDeclaringClass()) {
            if (!Modifier.isPublic(k.getModifiers()) || k.isAnonymousClass() || k.isLocalClass() || k.isSynthetic()) {
                return false;
            }
        }
        return true;
    }

    private static boolean shown(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    private static String describe(Class<?> c) {
        String kind = c.isAnnotation() ? "@interface" : c.isInterface() ? "interface" : c.isEnum() ? "enum"
                : c.isRecord() ? "record" : "class";
        int m = c.getModifiers() & ~(Modifier.INTERFACE | Modifier.ABSTRACT * (c.isInterface() ? 1 : 0));
        StringBuilder b = new StringBuilder(Modifier.toString(m)).append(' ').append(kind).append(' ')
                .append(c.getSimpleName());
        if (c.isSealed()) {
            b.append(" sealed");
        }
        if (c.getGenericSuperclass() != null && c.getSuperclass() != Object.class && !c.isEnum() && !c.isRecord()) {
            b.append(" extends ").append(c.getGenericSuperclass().getTypeName());
        }
        if (c.getGenericInterfaces().length > 0) {
            b.append(c.isInterface() ? " extends " : " implements ").append(Stream.of(c.getGenericInterfaces())
                    .map(java.lang.reflect.Type::getTypeName).collect(Collectors.joining(", ")));
        }
        return b.toString();
    }

    /** A member's signature without what is not API (synchronized, native, transient, volatile, strictfp). */
    private static String strip(String signature) {
        return signature.replace("synchronized ", "").replace("native ", "").replace("transient ", "")
                .replace("volatile ", "").replace("strictfp ", "");
    }
}
