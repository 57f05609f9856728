package dev.stoker;

import dev.stoker.storage.testing.ApiSurface;
import org.junit.jupiter.api.Test;

/** stoker-core's public API is what stoker-core/api/stoker-core.txt says it is ({@link ApiSurface}). */
class ApiSurfaceTest {
    @Test
    void thePublicApiIsTheOneWrittenDown() throws Exception {
        ApiSurface.check("stoker-core");
    }
}
