# Sourced by the Parquet benchmarks: parquet_file ROWS prints the path of the benchmark file of ROWS
# rows (four numeric columns, zstd, DuckDB's default row groups), writing it with DuckDB (fetched
# from Maven Central) first if it is not there. Needs JAVA_HOME (bin/jdk.sh) and the repository as
# the working directory.
parquet_file() {
  local rows=$1
  local file=/tmp/stoker-bench/parquet/numbers-$rows.parquet
  if [ ! -f "$file" ]; then
    mvn -B -q dependency:get -Dartifact=org.duckdb:duckdb_jdbc:1.4.2.0 -Dtransitive=false >&2
    "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp ~/.m2/repository/org/duckdb/duckdb_jdbc/1.4.2.0/duckdb_jdbc-1.4.2.0.jar \
      stoker-bench/src/tools/MakeParquetBench.java "$file" "$rows" >&2
  fi
  echo "$file"
}
