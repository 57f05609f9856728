package dev.stoker.hdf5;

import dev.stoker.storage.testing.ApiSurface;
import org.junit.jupiter.api.Test;

/** stoker-hdf5's public API is what stoker-hdf5/api/stoker-hdf5.txt says it is ({@link ApiSurface}). */
class ApiSurfaceTest {
    @Test
    void thePublicApiIsTheOneWrittenDown() throws Exception {
        ApiSurface.check("stoker-hdf5");
    }
}
