/**
 * The files Stoker writes for itself; Stoker's own, exported only to its other modules.
 *
 * <p>A tour. {@link dev.stoker.storage.io.PendingFile} writes a file under a hidden name and
 * renames it into place only when it is whole; {@link dev.stoker.storage.io.Temporaries} removes
 * half-written files and a process's folders on every way out; {@link dev.stoker.storage.io.UserCache}
 * names Stoker's folders in the user's cache, and {@code Folders} keeps what is trusted later in
 * folders of the user's own (NOTE [Folders of one's own]).
 */
package dev.stoker.storage.io;
