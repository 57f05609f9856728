package dev.stoker.cuda;

import dev.stoker.storage.testing.ApiSurface;
import org.junit.jupiter.api.Test;

/** stoker-cuda's public API is what stoker-cuda/api/stoker-cuda.txt says it is ({@link ApiSurface}). */
class ApiSurfaceTest {
    @Test
    void thePublicApiIsTheOneWrittenDown() throws Exception {
        ApiSurface.check("stoker-cuda");
    }
}
