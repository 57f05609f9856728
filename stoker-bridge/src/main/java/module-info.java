/** The Python bridge's server side: the shared-memory ring, the one protocol table, sessions and the server loop. */
module dev.stoker.bridge {
    requires transitive dev.stoker.core;
    requires com.fasterxml.jackson.core;
    requires java.management;
    requires jdk.net;

    exports dev.stoker.bridge;
}
