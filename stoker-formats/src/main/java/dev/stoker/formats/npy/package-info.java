/**
 * numpy's {@code .npy} and {@code .npz} files, read in place and written.
 *
 * <p>A tour. {@link dev.stoker.formats.npy.Npy} maps a {@code .npy} (format versions 1 to 3), reads
 * the arrays of an {@code .npz}, reads an array held in other bytes (a tar sample's field), maps a
 * raw file of a given dtype and shape ({@code np.memmap}'s), views other bytes as an array (a
 * tensor of a {@code torch.save} or safetensors file), and writes arrays that numpy reads. An {@link dev.stoker.formats.npy.NpyArray} is one array: dtype,
 * byte order, shape, layout and its data; {@code NpyHeader} parses the header's dict literal.
 */
package dev.stoker.formats.npy;
