package dev.stoker.parquet;

import dev.stoker.storage.testing.ApiSurface;
import org.junit.jupiter.api.Test;

/** stoker-parquet's public API is what stoker-parquet/api/stoker-parquet.txt says it is ({@link ApiSurface}). */
class ApiSurfaceTest {
    @Test
    void thePublicApiIsTheOneWrittenDown() throws Exception {
        ApiSurface.check("stoker-parquet");
    }
}
