/**
 * Named tensors in the files that hold them, read in place, and arrays as dataset columns.
 *
 * <p>A tour. {@link dev.stoker.formats.tensors.TorchSave} reads a {@code torch.save} archive: its
 * zip directory ({@code ZipDirectory}), its pickle read as data by a small stack machine
 * ({@code Pickle}, NOTE [Never unpickled]: any global but a tensor's rebuild and an
 * {@code OrderedDict} refuses the file), its storages mapped. {@link dev.stoker.formats.tensors.SafeTensors}
 * reads a safetensors file, header and offsets checked. Both give a
 * {@link dev.stoker.formats.tensors.TensorFile}, as an {@code .npz} does: the tensors by name, each an
 * {@link dev.stoker.formats.npy.NpyArray}. {@link dev.stoker.formats.tensors.ArrayDataset} reads
 * named arrays (from these, {@code .npy} files and raw files) as the columns of a dataset, the
 * first dimension being the sample.
 */
package dev.stoker.formats.tensors;
