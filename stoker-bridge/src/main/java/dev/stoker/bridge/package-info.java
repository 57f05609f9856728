/**
 * The Python bridge's server side. {@link dev.stoker.bridge.BridgeServer} listens on a Unix
 * domain socket and gives each client a {@code Session}: a loader made from the source and loader
 * specs the client sends as JSON ({@code dev.stoker.sources}), whose batches are
 * collated straight into a {@code ShmRing} in shared memory that the client maps. {@code Protocol}
 * is the one table of messages and ring layout, the twin of the Python package's
 * {@code _protocol.py}. NOTE [Bridge flow] and NOTE [Batches the user owns] are in {@code Session};
 * NOTE [A ring that grows] and NOTE [Reserving shared memory] in {@code ShmRing}.
 */
package dev.stoker.bridge;
