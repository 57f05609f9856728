/**
 * Stoker under DJL's {@code Trainer}.
 *
 * <ul>
 *   <li>{@link dev.stoker.djl.StokerDataset}: a DJL {@code Dataset} over any Stoker loader; one
 *       line changes in a DJL training program.</li>
 *   <li>{@link dev.stoker.djl.StokerBatch}: a DJL batch whose arrays are the Stoker batch's own
 *       memory, leased until the batch is closed.</li>
 *   <li>{@link dev.stoker.djl.DjlCheckpoint}: the loader's position saved beside a model's
 *       parameters, and restored with them.</li>
 * </ul>
 *
 * <p>The adapter needs DJL's API only; the engine (PyTorch's, for the arrays to be zero-copy) is
 * the application's.
 */
package dev.stoker.djl;
