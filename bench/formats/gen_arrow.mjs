// Data for bench/formats.sh: the rows of gen.py (id int64, label int32, vec fixed_size_list<float32, 64>)
// as an Arrow IPC stream in record batches of 1000 rows, as Hugging Face datasets writes them,
// by Apache Arrow's own JavaScript writer.
// Usage: node gen_arrow.mjs OUT_DIR   (run from a folder whose node_modules holds apache-arrow: formats.sh does)
import { readFileSync, writeFileSync } from "node:fs";
import * as arrow from "apache-arrow";

const out = process.argv[2];
const npy = readFileSync(`${out}/rows.npy`);
const headerLength = npy.readUInt16LE(8);
const vec = new Float32Array(npy.buffer.slice(npy.byteOffset + 10 + headerLength, npy.byteOffset + npy.length));
const dim = 64;
const n = vec.length / dim;
const batches = [];
for (let start = 0; start < n; start += 1000) {
  const m = Math.min(1000, n - start);
  const ids = new BigInt64Array(m);
  const labels = new Int32Array(m);
  for (let i = 0; i < m; i++) {
    ids[i] = BigInt(start + i);
    labels[i] = (start + i) % 1000;
  }
  const item = new arrow.Field("item", new arrow.Float32(), true);
  const values = arrow.makeData({ type: new arrow.Float32(), length: m * dim, data: vec.subarray(start * dim, (start + m) * dim) });
  const list = arrow.makeData({ type: new arrow.FixedSizeList(dim, item), length: m, nullCount: 0, child: values });
  batches.push(new arrow.Table({ id: arrow.makeVector(ids), label: arrow.makeVector(labels), vec: arrow.makeVector(list) }).batches[0]);
}
const table = new arrow.Table(batches);
writeFileSync(`${out}/rows.arrow`, arrow.tableToIPC(table, "stream"));
console.log(`${n} rows, ${batches.length} record batches: ${out}/rows.arrow`);
