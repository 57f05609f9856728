/**
 * SQLite databases read as the file format describes them, in pure Java, and the event tables of
 * GraphNeT (IceCube and other neutrino telescopes) in them.
 *
 * <p>A tour. {@link dev.stoker.formats.sqlite.SqliteFile} maps a database read-only (nothing is
 * ever written beside it: no journal, WAL or shared-memory file) and reads its schema;
 * {@link dev.stoker.formats.sqlite.SqliteTable} is one rowid table, its rows addressed by their
 * position in rowid order and read forward by a cursor; {@link dev.stoker.formats.sqlite.SqliteRecord}
 * decodes one row. {@link dev.stoker.formats.sqlite.SqliteEvents} is the dataset: a pulse table of
 * many rows per event joined with a truth table of one row per event, each event's rows found once
 * per database ({@code EventIndex}, kept as a sidecar) and read by their range.
 */
package dev.stoker.formats.sqlite;
