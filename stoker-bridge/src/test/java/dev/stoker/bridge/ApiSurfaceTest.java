package dev.stoker.bridge;

import dev.stoker.storage.testing.ApiSurface;
import org.junit.jupiter.api.Test;

/** stoker-bridge's public API is what stoker-bridge/api/stoker-bridge.txt says it is ({@link ApiSurface}). */
class ApiSurfaceTest {
    @Test
    void thePublicApiIsTheOneWrittenDown() throws Exception {
        ApiSurface.check("stoker-bridge");
    }
}
