import dev.stoker.root.ColumnData;
import dev.stoker.root.RootColumn;
import dev.stoker.root.RootFile;
import dev.stoker.root.RootTable;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes every column of a tree as Stoker's ROOT reader reads it, for bench/root_reader_check.py to
 * compare with uproot: OUT/COLUMN.values (little-endian values) and, for a ragged column,
 * OUT/COLUMN.offsets (int64 element offsets, entries + 1 of them).
 *
 * Usage: java -cp 'stoker-cli/target/lib/*' bench/RootDump.java FILE.root TREE OUT_DIR
 */
public final class RootDump {
    public static void main(String[] args) throws Exception {
        Path out = Files.createDirectories(Path.of(args[2]));
        try (RootFile file = RootFile.open(args[0]); RootTable t = file.table(args[1])) {
            for (RootColumn c : t.columns()) {
                ColumnData d = t.read(c, 0, t.entries());
                Files.write(out.resolve(c.name() + ".values"), d.values().toArray(ValueLayout.JAVA_BYTE));
                if (d.offsets() != null) {
                    ByteBuffer b = ByteBuffer.allocate(8 * d.offsets().length).order(ByteOrder.LITTLE_ENDIAN);
                    for (long o : d.offsets()) {
                        b.putLong(o);
                    }
                    Files.write(out.resolve(c.name() + ".offsets"), b.array());
                }
            }
            System.out.println(args[0] + ": " + t.columns().size() + " columns, " + t.entries() + " entries");
        }
    }
}
