package dev.stoker.formats.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Columns, types, affinities and the rowid alias, as SQLite reads them from a CREATE TABLE statement. */
class SqlSchemaTest {
    private static List<String> names(SqlSchema s) {
        return s.columns().stream().map(SqlSchema.Column::name).toList();
    }

    @Test
    void graphnetsTruthTableHasItsEventColumnAsTheRowid() {
        SqlSchema s = SqlSchema.parse("CREATE TABLE truth (energy FLOAT, event_no INTEGER PRIMARY KEY NOT NULL, pid FLOAT)");
        assertEquals(List.of("energy", "event_no", "pid"), names(s));
        assertEquals(1, s.rowidAlias());
        assertEquals(SqlSchema.Affinity.REAL, s.columns().get(0).affinity());
    }

    @Test
    void untypedColumnsHaveBlobAffinityAndNoAlias() {
        SqlSchema s = SqlSchema.parse("CREATE TABLE total (sensor_id NOT NULL, t NOT NULL, event_no NOT NULL)");
        assertEquals(List.of("sensor_id", "t", "event_no"), names(s));
        assertEquals("", s.columns().get(0).declared());
        assertEquals(SqlSchema.Affinity.BLOB, s.columns().get(2).affinity());
        assertEquals(-1, s.rowidAlias());
    }

    @Test
    void affinitiesFollowSqlitesRules() {
        SqlSchema s = SqlSchema.parse("CREATE TABLE t (a INT, b VARCHAR(10), c DOUBLE PRECISION, d DECIMAL(10, 2), e BLOB, "
                + "f FLOATING POINT, g BIGINT UNSIGNED)");
        assertEquals(List.of(SqlSchema.Affinity.INTEGER, SqlSchema.Affinity.TEXT, SqlSchema.Affinity.REAL,
                SqlSchema.Affinity.NUMERIC, SqlSchema.Affinity.BLOB, SqlSchema.Affinity.INTEGER, SqlSchema.Affinity.INTEGER),
                s.columns().stream().map(SqlSchema.Column::affinity).toList());
        assertEquals(-1, s.rowidAlias(), "INT PRIMARY KEY would not be an alias, and there is none");
    }

    @Test
    void quotedNamesAndATableConstraintKey() {
        SqlSchema s = SqlSchema.parse("CREATE TABLE \"my table\" (\"event no\" INTEGER, [x y] REAL, `z` TEXT, "
                + "CONSTRAINT pk PRIMARY KEY (\"event no\"), CHECK (CAST(x AS INT) > 0))");
        assertEquals(List.of("event no", "x y", "z"), names(s));
        assertEquals(0, s.rowidAlias());
        assertFalse(s.generated(), "AS inside a CHECK is no generated column");
    }

    @Test
    void withoutRowidAndGeneratedColumnsAreKnown() {
        SqlSchema w = SqlSchema.parse("CREATE TABLE p (k INTEGER, e INTEGER, PRIMARY KEY (e, k)) WITHOUT ROWID");
        assertTrue(w.withoutRowid());
        assertEquals(-1, w.rowidAlias());
        SqlSchema g = SqlSchema.parse("CREATE TABLE p (a REAL, b REAL GENERATED ALWAYS AS (a * 2) VIRTUAL)");
        assertTrue(g.generated());
        SqlSchema g2 = SqlSchema.parse("CREATE TABLE p (a REAL, b REAL AS (a * 2))");
        assertTrue(g2.generated());
    }

    @Test
    void aDescendingIntegerKeyIsNoAlias() {
        assertEquals(-1, SqlSchema.parse("CREATE TABLE t (id INTEGER PRIMARY KEY DESC, v REAL)").rowidAlias());
    }

    @Test
    void notACreateStatementIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> SqlSchema.parse("SELECT 1"));
        assertThrows(IllegalArgumentException.class, () -> SqlSchema.parse("CREATE TABLE t (a REAL"));
    }
}
