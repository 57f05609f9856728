/** The Python bridge's server side: the shared-memory ring, the one protocol table, sessions and the server loop; sources opened from their specs. */
module dev.stoker.bridge {
    requires transitive dev.stoker.core;
    requires transitive dev.stoker.sources;
    requires com.fasterxml.jackson.core;
    requires java.management;
    requires jdk.net;

    exports dev.stoker.bridge;
}
