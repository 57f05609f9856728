import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;

/**
 * Writes the Parquet benchmark file with DuckDB: ROWS rows of four numeric columns (id BIGINT,
 * x DOUBLE, y FLOAT, k INTEGER; random values, so the codec has real work), zstd, DuckDB's
 * default row groups. Run: java -cp duckdb_jdbc.jar MakeParquetBench.java OUT.parquet ROWS
 */
public class MakeParquetBench {
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        long rows = Long.parseLong(args[1]);
        Files.createDirectories(out.toAbsolutePath().getParent());
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            s.execute("SELECT setseed(0.42)");
            s.execute("COPY (SELECT i::BIGINT AS id, random() AS x, random()::FLOAT AS y, (random() * 1e6)::INTEGER AS k"
                    + " FROM range(" + rows + ") r(i)) TO '" + out + "' (FORMAT parquet, COMPRESSION zstd)");
        }
    }
}
