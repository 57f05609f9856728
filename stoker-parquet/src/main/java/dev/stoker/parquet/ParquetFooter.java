package dev.stoker.parquet;

import dev.hardwood.reader.ParquetFileReader;
import dev.stoker.CorruptShardException;
import java.io.IOException;

/** A Parquet file's footer, opened by Hardwood after its end was checked; what cannot be read is a corrupt file. */
final class ParquetFooter {
    private ParquetFooter() {
    }

    /**
     * Hardwood's reader of the file's footer. The file's end is read first, so that a store's
     * error is reported as itself (and a remote file's tail is fetched once); a footer that
     * cannot be parsed is a corrupt file.
     */
    static ParquetFileReader open(ParquetInput in, String location) throws IOException {
        byte[] end = new byte[8];
        if (in.length() < 12) {
            throw new CorruptShardException(location, 0, "not a readable Parquet file: " + in.length() + " bytes, too short for one");
        }
        in.read(in.length() - 8, end, 0, 8);
        if (end[4] != 'P' || end[5] != 'A' || end[6] != 'R' || end[7] != '1') {
            throw new CorruptShardException(location, in.length() - 4, "not a readable Parquet file: it does not end with the magic PAR1");
        }
        try {
            return ParquetFileReader.open(in);
        } catch (IOException | RuntimeException e) {
            throw corruptFooter(in, location, e);
        }
    }

    static CorruptShardException corruptFooter(ParquetInput in, String location, Exception e) {
        return new CorruptShardException(location, Math.max(0, in.length() - 8),
                "not a readable Parquet file (the footer at its end): " + describe(e), e);
    }

    static String describe(Throwable e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }
}
