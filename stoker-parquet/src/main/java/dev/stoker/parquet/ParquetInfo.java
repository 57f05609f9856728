package dev.stoker.parquet;

import dev.hardwood.metadata.FileMetaData;
import dev.hardwood.metadata.RepetitionType;
import dev.hardwood.metadata.RowGroup;
import dev.hardwood.reader.ParquetFileReader;
import dev.hardwood.schema.SchemaNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** What {@code stoker inspect} shows of a Parquet file: its rows, row groups, columns and writer, from its footer alone. */
public record ParquetInfo(long rows, int rowGroups, List<ColumnInfo> columns, String createdBy) {
    /** A top-level column: its name, its type as a reader sees it, and whether it may hold nulls. */
    public record ColumnInfo(String name, String type, boolean nullable) {
    }

    public static ParquetInfo of(Path path) throws IOException {
        return of(path.toString());
    }

    /** {@link #of(Path)} of a file at any location: a remote one by one ranged read of its footer. */
    public static ParquetInfo of(String location) throws IOException {
        try (ParquetFileReader r = ParquetFooter.open(new ParquetInput(location), location)) {
            FileMetaData f = r.getFileMetaData();
            long rows = 0;
            for (RowGroup b : f.rowGroups()) {
                rows += b.numRows();
            }
            List<ColumnInfo> cols = new ArrayList<>();
            for (SchemaNode t : r.getFileSchema().getRootNode().children()) {
                cols.add(new ColumnInfo(t.name(), ParquetColumns.typeName(t), t.repetitionType() == RepetitionType.OPTIONAL));
            }
            return new ParquetInfo(rows, f.rowGroups().size(), cols, f.createdBy());
        }
    }
}
