// Generates the Hugging Face `datasets`-style Arrow interop fixtures under
// src/test/resources/interop/arrow/. The Arrow IPC bytes are written by the Apache Arrow
// JavaScript library (npm `apache-arrow`, version 21.2.0); the side files (state.json,
// dataset_info.json, the "huggingface" schema metadata) mimic what `datasets`
// (Dataset.save_to_disk / ArrowWriter) writes, including Python json.dumps formatting.
//
// How to run (outside the repository; nothing is installed into the repo):
//   mkdir -p /tmp/arrowjs && cd /tmp/arrowjs && npm init -y && npm install apache-arrow@21.2.0
//   ARROW_JS_DIR=/tmp/arrowjs/node_modules/apache-arrow \
//     node stoker-formats/src/test/interop/make_arrow.mjs [output-dir]
// (run from the stoker repository root; output-dir defaults to
//  stoker-formats/src/test/resources/interop/arrow). Needs Node >= 18.
// After writing, the script reads every readable fixture back with tableFromIPC and compares
// it to expected.jsonl; it exits non-zero on any mismatch. Output is deterministic.

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import * as zlib from 'node:zlib';

const ARROW_JS_DIR = process.env.ARROW_JS_DIR || '/tmp/arrowjs/node_modules/apache-arrow';
const A = await import(pathToFileURL(path.join(ARROW_JS_DIR, 'Arrow.node.mjs')).href);
// Same module instance as the one the writer uses (needed for the nonzero-offsets variant).
const { VectorAssembler } = await import(pathToFileURL(path.join(ARROW_JS_DIR, 'visitor/vectorassembler.mjs')).href);
const { BufferRegion } = await import(pathToFileURL(path.join(ARROW_JS_DIR, 'ipc/metadata/message.mjs')).href);
const ARROW_VERSION = JSON.parse(fs.readFileSync(path.join(ARROW_JS_DIR, 'package.json'), 'utf8')).version;

const {
  Field, Schema, RecordBatch, Table, makeData, vectorFromArray, Vector, tableFromIPC,
  RecordBatchStreamWriter, RecordBatchFileWriter, Message, MessageHeader,
  Int64, Int32, Uint8, Uint64, Float16, Float32, Float64, Bool, Utf8, LargeUtf8, Binary, LargeBinary,
  List, LargeList, FixedSizeList, Struct, Dictionary, Type,
} = A;

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.resolve(process.argv[2] || path.join(HERE, '..', 'resources', 'interop', 'arrow'));

// ---------------------------------------------------------------------------------------------
// Python json.dumps look-alike (ensure_ascii=True; separators ", "/": " without indent,
// ","/": " with indent; no trailing newline), so side files match datasets byte for byte.
function pyStr(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || (c > 0x7e && c <= 0xffff)) out += '\\u' + c.toString(16).padStart(4, '0');
    else if (c > 0xffff) {
      const v = c - 0x10000;
      out += '\\u' + (0xd800 + (v >> 10)).toString(16) + '\\u' + (0xdc00 + (v & 0x3ff)).toString(16);
    } else out += ch;
  }
  return out + '"';
}
function pyDumps(v, indent = null, level = 0) {
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'number') return String(v); // only integers occur in these side files
  if (typeof v === 'string') return pyStr(v);
  const nl = indent == null ? '' : '\n' + ' '.repeat(indent * (level + 1));
  const end = indent == null ? '' : '\n' + ' '.repeat(indent * level);
  const sep = indent == null ? ', ' : ',';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return '[' + v.map((x) => nl + pyDumps(x, indent, level + 1)).join(sep) + end + ']';
  }
  const keys = Object.keys(v);
  if (keys.length === 0) return '{}';
  return '{' + keys.map((k) => nl + pyStr(k) + ': ' + pyDumps(v[k], indent, level + 1)).join(sep) + end + '}';
}

// ---------------------------------------------------------------------------------------------
// expected.jsonl value encoding
function fmtFloat(x) {
  if (Number.isNaN(x)) return '"nan"';
  if (x === Infinity) return '"inf"';
  if (x === -Infinity) return '"-inf"';
  if (Object.is(x, -0)) return '-0.0';
  const s = String(x);
  return /[.eE]/.test(s) ? s : s + '.0';
}
function binJson(u8) {
  return `{"bytes": ${u8.byteLength}, "sha256": "${createHash('sha256').update(u8).digest('hex')}"}`;
}

// Encode a value read back from apache-arrow (or a source value, same shapes) by Arrow type.
function enc(type, v) {
  if (v === null || v === undefined) return 'null';
  switch (type.typeId) {
    case Type.Int: return typeof v === 'bigint' ? v.toString() : String(v);
    case Type.Float: return fmtFloat(Number(v));
    case Type.Bool: return v ? 'true' : 'false';
    case Type.Utf8: case Type.LargeUtf8: return JSON.stringify(v);
    case Type.Binary: case Type.LargeBinary: return binJson(v);
    case Type.Dictionary: return enc(type.dictionary, v);
    case Type.List: case Type.LargeList: case Type.FixedSizeList: {
      const child = type.children[0].type;
      const items = v instanceof Vector ? [...v] : [...v];
      return '[' + items.map((x) => enc(child, x)).join(', ') + ']';
    }
    case Type.Struct:
      return '{' + type.children.map((f) => `${JSON.stringify(f.name)}: ${enc(f.type, v[f.name])}`).join(', ') + '}';
    default: throw new Error('unsupported type ' + type);
  }
}
function rowJson(fields, row) {
  return '{' + fields.map((f) => `${JSON.stringify(f.name)}: ${enc(f.type, row[f.name])}`).join(', ') + '}';
}

// ---------------------------------------------------------------------------------------------
// Tiny deterministic PNGs (8-bit RGB, unfiltered scanlines, zlib level 9).
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function pngChunk(type, data) {
  const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
function png(w, h, pixel) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; ihdr[9] = 2; ihdr[10] = 0; ihdr[11] = 0; ihdr[12] = 0;
  const raw = Buffer.alloc(h * (1 + 3 * w));
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const [r, g, b] = pixel(x, y);
    const o = y * (1 + 3 * w) + 1 + 3 * x;
    raw[o] = r; raw[o + 1] = g; raw[o + 2] = b;
  }
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return new Uint8Array(Buffer.concat([sig, pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlib.deflateSync(raw, { level: 9 })), pngChunk('IEND', Buffer.alloc(0))]));
}
const PNG_RED = png(2, 2, () => [255, 0, 0]);
const PNG_GRAD = png(4, 3, (x, y) => [x * 60, y * 100, 128]);
const PNG_CHECK = png(3, 3, (x, y) => ((x + y) % 2 ? [0, 0, 0] : [255, 255, 255]));

// ---------------------------------------------------------------------------------------------
// float16 from bit patterns (so the stored halfs are exactly what we intend), decoded here
// independently of apache-arrow for expected.jsonl.
function halfToDouble(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
function float16Vector(bits) { // bits: array of uint16 or null
  const n = bits.length;
  const data = new Uint16Array(n);
  const valid = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  bits.forEach((b, i) => { if (b === null) nulls++; else { data[i] = b; valid[i >> 3] |= 1 << (i & 7); } });
  return new Vector([makeData({ type: new Float16(), length: n, nullCount: nulls, data, nullBitmap: nulls ? valid : undefined })]);
}

const enc8 = (s) => new TextEncoder().encode(s);
const u8 = (...xs) => new Uint8Array(xs);

// ---------------------------------------------------------------------------------------------
// Column descriptors: name, Arrow type, HF feature JSON, and source values (one per row).
const F = (name, type) => new Field(name, type, true);
const item = (type) => new Field('item', type, true);
const V = (dtype) => ({ dtype, _type: 'Value' });

const N = 14;
const FLOAT16_BITS = [0x3c00, 0xc100, 0x7bff, 0x0001, 0x2e66, 0x7e00, 0x7c00, 0xfc00, 0x8000, 0x3555,
  0x0400, 0x5640, 0x0000, 0xbc00];
const CLASS_NAMES = ['negative', 'neutral', 'positive', 'café'];

const COLUMNS = [
  { name: 'id', type: new Int64(), feature: V('int64'), values: Array.from({ length: N }, (_, i) => BigInt(i)) },
  { name: 'i32', type: new Int32(), feature: V('int32'),
    values: [0, 1, -1, 2147483647, -2147483648, 42, -42, 1000000, 7, -7, 123456789, -123456789, 65536, -65536] },
  { name: 'u8', type: new Uint8(), feature: V('uint8'), values: [0, 1, 127, 128, 255, 2, 3, 254, 10, 20, 30, 40, 50, 60] },
  { name: 'u64', type: new Uint64(), feature: V('uint64'),
    values: [0n, 1n, 18446744073709551615n, 9223372036854775808n, 9223372036854775807n, 12345678901234567890n,
      2n ** 53n + 1n, 42n, 18446744073709551614n, 3n, 4n, 5n, 6n, 7n] },
  { name: 'f16', type: new Float16(), feature: V('float16'), bits: FLOAT16_BITS, values: FLOAT16_BITS.map(halfToDouble) },
  { name: 'f32', type: new Float32(), feature: V('float32'),
    values: [0.1, -1.5, 3.4028234663852886e38, 1.401298464324817e-45, NaN, Infinity, -Infinity, -0, 16777217,
      1 / 3, 2.5, 1e-10, 100, -123.456].map(Math.fround) },
  { name: 'f64', type: new Float64(), feature: V('float64'),
    values: [0.1, -0, NaN, Infinity, -Infinity, 1e300, 5e-324, Math.PI, 2 ** 53, -2.5, 1.7976931348623157e308,
      2.2250738585072014e-308, 0, 1 / 3] },
  { name: 'flag', type: new Bool(), feature: V('bool'),
    values: [true, false, true, true, false, false, true, false, true, false, false, true, true, true] },
  { name: 'text', type: new Utf8(), feature: V('string'),
    values: ['hello', '', 'héllo wörld', '日本語テキスト', 'emoji 🙂🚀', 'tab\tnew\nline', 'quote " backslash \\',
      'Ünïcödé', 'a', 'Ελληνικά', 'x'.repeat(40), 'mixed ascii ü', 'zero\u0000byte', 'end'] },
  { name: 'large_text', type: new LargeUtf8(), feature: V('large_string'),
    values: Array.from({ length: N }, (_, i) => (i % 5 === 3 ? '' : `large #${i} ` + 'ß'.repeat(i))) },
  { name: 'blob', type: new Binary(), feature: V('binary'),
    values: Array.from({ length: N }, (_, i) => (i === 2 ? new Uint8Array(0) : new Uint8Array(Array.from({ length: i + 1 }, (_, k) => (k * 37 + i) & 0xff)))) },
  { name: 'large_blob', type: new LargeBinary(), feature: V('large_binary'),
    values: Array.from({ length: N }, (_, i) => (i === 5 ? new Uint8Array(0) : new Uint8Array(Array.from({ length: 3 * i + 2 }, (_, k) => (255 - k - i) & 0xff)))) },
  { name: 'ints', type: new List(item(new Int32())), feature: { feature: V('int32'), _type: 'List' },
    values: [[1, 2, 3], [], [4], [5, 6], [-1, -2, -3, -4, -5], [2147483647], [], [0], [7, 8, 9, 10], [11],
      [12, 13], [], [14, 15, 16], [-2147483648]] },
  { name: 'large_floats', type: new LargeList(item(new Float32())), feature: { feature: V('float32'), _type: 'LargeList' },
    values: [[0.5], [1.25, -2.5], [], [0.1, 0.2, 0.3], [NaN], [Infinity, -Infinity], [1e-3], [], [42],
      [3.5, 4.5], [-0], [1, 2, 3, 4, 5, 6], [7.75], [0.3333]].map((l) => l.map(Math.fround)) },
  { name: 'vec3', type: new FixedSizeList(3, item(new Float32())), feature: { feature: V('float32'), length: 3, _type: 'List' },
    values: Array.from({ length: N }, (_, i) => [i, i + 0.5, -i].map(Math.fround)) },
  { name: 'pair', type: new Struct([F('a', new Int64()), F('b', new Utf8())]), feature: { a: V('int64'), b: V('string') },
    values: Array.from({ length: N }, (_, i) => ({ a: BigInt(i * 1000) - 5000n, b: ['α', 'β', 'γ', 'δ'][i % 4] + i })) },
  { name: 'label', type: new Int64(), feature: { names: CLASS_NAMES, _type: 'ClassLabel' },
    values: [0, 1, 2, 3, 0, 1, 2, 3, 2, 2, 1, 0, 3, 1].map(BigInt) },
  { name: 'image', type: new Struct([F('bytes', new Binary()), F('path', new Utf8())]), feature: { _type: 'Image' },
    values: [
      { bytes: PNG_RED, path: null }, { bytes: PNG_GRAD, path: 'gradient.png' }, { bytes: PNG_CHECK, path: null },
      null, { bytes: PNG_RED, path: 'red.png' }, { bytes: null, path: 'relative/missing.png' },
      { bytes: PNG_CHECK, path: 'images/check.png' }, { bytes: PNG_GRAD, path: null }, { bytes: PNG_RED, path: null },
      { bytes: PNG_CHECK, path: null }, { bytes: PNG_GRAD, path: 'g2.png' }, { bytes: PNG_RED, path: 'ünï.png' },
      { bytes: PNG_CHECK, path: null }, { bytes: PNG_RED, path: null }] },
  { name: 'opt_int', type: new Int64(), feature: V('int64'),
    values: [1n, null, -9223372036854775808n, 9223372036854775807n, null, null, 9007199254740993n, 0n, null, -1n,
      5n, null, 6n, null] },
  { name: 'opt_text', type: new Utf8(), feature: V('string'),
    values: [null, 'present', '', null, 'ñ', null, null, 'x', 'yy', null, 'zzz', '', null, 'last'] },
  { name: 'opt_list', type: new List(item(new Int64())), feature: { feature: V('int64'), _type: 'List' },
    values: [[1n], null, [], [2n, null, 3n], null, [4n], [5n, 6n], [], null, [7n], [null], [8n, 9n, 10n], null, []] },
  { name: 'opt_struct', type: new Struct([F('x', new Float64()), F('tags', new List(item(new Utf8())))]),
    feature: { x: V('float64'), tags: { feature: V('string'), _type: 'List' } },
    values: [{ x: 1.5, tags: ['a', 'b'] }, null, { x: null, tags: [] }, { x: -2.25, tags: null }, null,
      { x: 0.1, tags: ['ü'] }, { x: NaN, tags: ['c', null] }, null, { x: 3, tags: ['d'] }, { x: 4, tags: [] },
      null, { x: 5, tags: ['e', 'f', 'g'] }, { x: -0, tags: null }, { x: 6, tags: ['h'] }] },
];
for (const c of COLUMNS) if (c.values.length !== N) throw new Error(`column ${c.name} has ${c.values.length} rows`);

function buildVector(col, lo, hi) {
  if (col.bits) return float16Vector(col.bits.slice(lo, hi));
  return vectorFromArray(col.values.slice(lo, hi), col.type);
}
function buildBatch(schema, cols, lo, hi) {
  const children = cols.map((c) => buildVector(c, lo, hi).data[0]);
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: hi - lo, children }));
}
function hfSchema(cols, withHf = true) {
  const features = Object.fromEntries(cols.map((c) => [c.name, c.feature]));
  const md = new Map(withHf ? [['huggingface', pyDumps({ info: { features } })]] : []);
  return { schema: new Schema(cols.map((c) => F(c.name, c.type)), md), features };
}
function expectedLines(cols, lo, hi) {
  const lines = [];
  for (let i = lo; i < hi; i++) {
    const row = Object.fromEntries(cols.map((c) => [c.name, c.values[i]]));
    lines.push(rowJson(cols.map((c) => F(c.name, c.type)), row));
  }
  return lines;
}

function writeStream(batches, opts) {
  const w = new RecordBatchStreamWriter(opts);
  for (const b of batches) w.write(b);
  w.finish();
  return w.toUint8Array(true);
}
function writeFile(batches) {
  const w = new RecordBatchFileWriter();
  for (const b of batches) w.write(b);
  w.finish();
  return w.toUint8Array(true);
}
function put(rel, data) {
  const p = path.join(OUT, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, data);
}

// Only the generated sub-folders are replaced; README.md next to them is kept.
for (const d of ['saved', 'file', 'sliced', 'dict', 'corrupt']) fs.rmSync(path.join(OUT, d), { recursive: true, force: true });

// 1. saved/ : save_to_disk layout, 2 shards of 7 rows (Dataset.shard(contiguous=True)),
//    record batches of at most 4 rows.
const saved = hfSchema(COLUMNS);
const SHARDS = [[0, 7], [7, 14]];
const BATCH = 4;
SHARDS.forEach(([lo, hi], s) => {
  const batches = [];
  for (let b = lo; b < hi; b += BATCH) batches.push(buildBatch(saved.schema, COLUMNS, b, Math.min(hi, b + BATCH)));
  put(`saved/data-${String(s).padStart(5, '0')}-of-${String(SHARDS.length).padStart(5, '0')}.arrow`, writeStream(batches));
});
put('saved/state.json', pyDumps({
  _data_files: SHARDS.map((_, s) => ({ filename: `data-${String(s).padStart(5, '0')}-of-${String(SHARDS.length).padStart(5, '0')}.arrow` })),
  _fingerprint: '5f0c3a9e1b7d2468',
  _format_columns: null,
  _format_kwargs: {},
  _format_type: null,
  _output_all_columns: false,
  _split: null,
}, 2));
// asdict(DatasetInfo(features=...)): str fields with default_factory are kept, None defaults
// dropped; top-level keys sorted, nested feature order kept.
put('saved/dataset_info.json', pyDumps({ citation: '', description: '', features: saved.features, homepage: '', license: '' }, 2));
put('saved/expected.jsonl', expectedLines(COLUMNS, 0, N).join('\n') + '\n');

// 2. file/ : IPC file format (ARROW1 ... footer), a subset of the columns, batches of 5.
const FILE_COLS = COLUMNS.filter((c) => ['id', 'u64', 'f16', 'f64', 'text', 'large_blob', 'ints', 'vec3', 'pair',
  'label', 'image', 'opt_int', 'opt_struct'].includes(c.name));
const file = hfSchema(FILE_COLS);
put('file/data.arrow', writeFile([0, 5, 10].map((lo) => buildBatch(file.schema, FILE_COLS, lo, Math.min(N, lo + 5)))));
put('file/expected.jsonl', expectedLines(FILE_COLS, 0, N).join('\n') + '\n');

// 3. sliced/ : record batches that are slices of one 14-row batch (rows 3..6 and 6..13), so in
//    memory the string/list offsets start at nonzero values and bitmaps at odd bit offsets.
const SLICE_COLS = COLUMNS.filter((c) => ['id', 'flag', 'text', 'large_text', 'blob', 'ints', 'large_floats', 'vec3',
  'pair', 'opt_text', 'opt_list', 'opt_struct'].includes(c.name));
const sliced = hfSchema(SLICE_COLS);
const whole = buildBatch(sliced.schema, SLICE_COLS, 0, N);
const sliceBatches = [whole.slice(3, 6), whole.slice(6, 13)];
put('sliced/data.arrow', writeStream(sliceBatches));
// Variant: the same apache-arrow writer with its offset rebasing switched off for the duration
// of one write (utf8/binary/list/large_* keep offsets[0] != 0 and the whole values buffer).
put('sliced/nonzero_offsets.arrow', withoutOffsetRebasing(() => writeStream(sliceBatches)));
put('sliced/expected.jsonl', expectedLines(SLICE_COLS, 3, 13).join('\n') + '\n');

function withoutOffsetRebasing(fn) {
  const P = VectorAssembler.prototype;
  const saved = { u: P.visitUtf8, lu: P.visitLargeUtf8, b: P.visitBinary, lb: P.visitLargeBinary, l: P.visitList, ll: P.visitLargeList };
  function add(values) {
    const byteLength = (values.byteLength + 7) & ~7;
    this.buffers.push(values);
    this.bufferRegions.push(new BufferRegion(this._byteLength, byteLength));
    this._byteLength += byteLength;
  }
  function flat(data) {
    const { length, values, valueOffsets } = data;
    const end = Number(valueOffsets[length]);
    add.call(this, valueOffsets.subarray(0, length + 1));
    add.call(this, values.subarray(0, end));
    return this;
  }
  function list(data) {
    const { length, valueOffsets } = data;
    add.call(this, valueOffsets.subarray(0, length + 1));
    return this.visit(data.children[0].slice(0, Number(valueOffsets[length])));
  }
  P.visitUtf8 = P.visitLargeUtf8 = P.visitBinary = P.visitLargeBinary = flat;
  P.visitList = P.visitLargeList = list;
  try { return fn(); } finally {
    P.visitUtf8 = saved.u; P.visitLargeUtf8 = saved.lu; P.visitBinary = saved.b; P.visitLargeBinary = saved.lb;
    P.visitList = saved.l; P.visitLargeList = saved.ll;
  }
}
// 4. dict/ : dictionary-encoded utf8 (int32 indices). Batches: initial dictionary; same
//    dictionary reused (no new message); replacement dictionary; delta appended.
const DICT_TYPE = new Dictionary(new Utf8(), new Int32(), 0, false);
const dictSchema = new Schema([F('id', new Int64()), F('color', DICT_TYPE)],
  new Map([['huggingface', pyDumps({ info: { features: { id: V('int64'), color: V('string') } } })]]));
const dictA = vectorFromArray(['red', 'green', 'blue'], new Utf8()).data[0];
const dictB = vectorFromArray(['north', 'south', 'ünïcode'], new Utf8()).data[0];
const dictBDelta = vectorFromArray(['east', 'west'], new Utf8()).data[0];
const DICT_ROWS = [
  { dict: [dictA], idx: [0, 1, 2, null, 1] },
  { dict: [dictA], idx: [2, 2, 0] },
  { dict: [dictB], idx: [1, 0, null, 2] },
  { dict: [dictB, dictBDelta], idx: [3, 4, 0, 4] },
];
const dictExpected = [];
let dictRow = 0;
const dictBatches = DICT_ROWS.map(({ dict, idx }) => {
  const n = idx.length;
  const dictionary = new Vector(dict);
  const valid = new Uint8Array((n + 7) >> 3);
  const nulls = idx.filter((x) => x === null).length;
  idx.forEach((x, i) => { if (x !== null) valid[i >> 3] |= 1 << (i & 7); });
  const indices = makeData({ type: DICT_TYPE, length: n, nullCount: nulls, nullBitmap: nulls ? valid : undefined,
    data: Int32Array.from(idx, (x) => x ?? 0), dictionary });
  const ids = vectorFromArray(idx.map((_, i) => BigInt(dictRow + i)), new Int64()).data[0];
  const words = dict.flatMap((d) => [...new Vector([d])]);
  idx.forEach((x, i) => dictExpected.push(`{"id": ${dictRow + i}, "color": ${x === null ? 'null' : JSON.stringify(words[x])}}`));
  dictRow += n;
  return new RecordBatch(dictSchema, makeData({ type: new Struct(dictSchema.fields), length: n, children: [ids, indices] }));
});
put('dict/data.arrow', writeStream(dictBatches));
put('dict/expected.jsonl', dictExpected.join('\n') + '\n');

// 5. corrupt/ : derived from saved/data-00000-of-00002.arrow.
const shard0 = fs.readFileSync(path.join(OUT, 'saved/data-00000-of-00002.arrow'));
const msgs = [...walkMessages(shard0)];
const firstBatch = msgs.find((m) => m.message.headerType === MessageHeader.RecordBatch);
const cut = firstBatch.bodyStart + Math.floor(Number(firstBatch.message.bodyLength) / 2);
put('corrupt/truncated.arrow', shard0.subarray(0, cut));
const badLen = Buffer.from(shard0);
badLen.writeInt32LE(shard0.length + 4096, firstBatch.start + 4); // metadata length of the 1st record batch
put('corrupt/bad_length.arrow', badLen);
const corruptInfo = { truncated: { source: 'saved/data-00000-of-00002.arrow', cut_at: cut, first_batch_body: [firstBatch.bodyStart, firstBatch.bodyStart + Number(firstBatch.message.bodyLength)] },
  bad_length: { source: 'saved/data-00000-of-00002.arrow', patched_offset: firstBatch.start + 4, original: firstBatch.metaLen, patched: shard0.length + 4096 } };

// ---------------------------------------------------------------------------------------------
// Message walker (stream, or file after its 8-byte magic) using apache-arrow's Message.decode.
function* walkMessages(bytes, start = 0) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = start;
  while (pos + 8 <= bytes.byteLength) {
    let at = pos, len = dv.getInt32(pos, true);
    if (len === -1) { len = dv.getInt32(pos + 4, true); at = pos + 8; } else at = pos + 4;
    if (len === 0) return;
    const message = Message.decode(bytes.subarray(at, at + len));
    const bodyStart = at + len;
    yield { start: pos, metaLen: len, bodyStart, message };
    pos = bodyStart + Number(message.bodyLength);
  }
}

// ---------------------------------------------------------------------------------------------
// Verification: read everything back with apache-arrow and compare to expected.jsonl.
let failures = 0;
function check(name, bytesList, expectedFile) {
  const want = fs.readFileSync(path.join(OUT, expectedFile), 'utf8').trimEnd().split('\n');
  const got = [];
  for (const bytes of bytesList) {
    const t = tableFromIPC(bytes);
    for (const row of t) got.push(rowJson(t.schema.fields, row));
  }
  if (got.length !== want.length) { failures++; console.error(`${name}: ${got.length} rows, want ${want.length}`); }
  for (let i = 0; i < Math.min(got.length, want.length); i++) {
    if (got[i] !== want[i]) { failures++; console.error(`${name} row ${i}:\n  got  ${got[i]}\n  want ${want[i]}`); }
  }
  console.log(`${name}: ${got.length} rows ${failures ? '' : 'OK'}`);
}
const read = (rel) => new Uint8Array(fs.readFileSync(path.join(OUT, rel)));
const state = JSON.parse(fs.readFileSync(path.join(OUT, 'saved/state.json'), 'utf8'));
check('saved', state._data_files.map((f) => read('saved/' + f.filename)), 'saved/expected.jsonl');
check('file', [read('file/data.arrow')], 'file/expected.jsonl');
check('sliced', [read('sliced/data.arrow')], 'sliced/expected.jsonl');
check('sliced(nonzero)', [read('sliced/nonzero_offsets.arrow')], 'sliced/expected.jsonl');
check('dict', [read('dict/data.arrow')], 'dict/expected.jsonl');
for (const rel of ['corrupt/truncated.arrow', 'corrupt/bad_length.arrow']) {
  try { const t = tableFromIPC(read(rel)); console.log(`${rel}: apache-arrow read ${t.numRows} rows without error`); }
  catch (e) { console.log(`${rel}: apache-arrow throws: ${e.message.split('\n')[0]}`); }
}

// Layout report: message kinds, buffer alignment, first offsets of offset buffers.
function layout(rel, isFile) {
  const bytes = read(rel);
  const out = { file: rel, size: bytes.byteLength, messages: [], bufferOffsets8: 0, bufferOffsets64: 0, buffers: 0, bodyStarts: [] };
  for (const m of walkMessages(bytes, isFile ? 8 : 0)) {
    const h = m.message.header();
    const kind = MessageHeader[m.message.headerType];
    const desc = { kind, at: m.start, metaLen: m.metaLen, body: Number(m.message.bodyLength) };
    if (kind === 'DictionaryBatch') Object.assign(desc, { id: h.id, isDelta: h.isDelta, rows: h.length });
    if (kind === 'RecordBatch') desc.rows = h.length;
    if (kind !== 'Schema') {
      out.bodyStarts.push(m.bodyStart);
      for (const b of h.buffers) {
        out.buffers++;
        const abs = m.bodyStart + Number(b.offset);
        if (abs % 8 === 0) out.bufferOffsets8++;
        if (abs % 64 === 0 && b.length > 0) out.bufferOffsets64++;
      }
    }
    out.messages.push(desc);
  }
  return out;
}
const layouts = [
  ...state._data_files.map((f) => layout('saved/' + f.filename, false)),
  layout('file/data.arrow', true), layout('sliced/data.arrow', false), layout('sliced/nonzero_offsets.arrow', false),
  layout('dict/data.arrow', false),
];
// First offset of each int32/int64 offsets buffer in the sliced files (by schema walk).
function firstOffsets(rel) {
  const bytes = read(rel);
  const t = tableFromIPC(bytes);
  const res = [];
  let batchNo = 0;
  for (const m of walkMessages(bytes)) {
    if (m.message.headerType !== MessageHeader.RecordBatch) continue;
    const bufs = m.message.header().buffers;
    let bi = 0;
    const visit = (f, pfx) => {
      const ty = f.type, id = ty.typeId;
      bi++; // validity
      if ([Type.Utf8, Type.Binary, Type.LargeUtf8, Type.LargeBinary, Type.List, Type.LargeList].includes(id)) {
        const b = bufs[bi++];
        const wide = [Type.LargeUtf8, Type.LargeBinary, Type.LargeList].includes(id);
        const p = m.bodyStart + Number(b.offset);
        const dv = new DataView(bytes.buffer, bytes.byteOffset + p, Number(b.length));
        res.push(`batch${batchNo} ${pfx}${f.name}: offsets[0]=${wide ? dv.getBigInt64(0, true) : dv.getInt32(0, true)}`);
        if ([Type.Utf8, Type.Binary, Type.LargeUtf8, Type.LargeBinary].includes(id)) bi++;
      } else if (id === Type.Int || id === Type.Float || id === Type.Bool) bi++;
      for (const c of ty.children || []) visit(c, pfx + f.name + '.');
    };
    for (const f of t.schema.fields) visit(f, '');
    batchNo++;
  }
  return res;
}
const report = { arrowJsVersion: ARROW_VERSION, layouts, corrupt: corruptInfo,
  slicedFirstOffsets: firstOffsets('sliced/data.arrow'), nonzeroFirstOffsets: firstOffsets('sliced/nonzero_offsets.arrow') };
if (process.env.VERBOSE) console.log(JSON.stringify(report, null, 1));
else {
  for (const l of layouts) console.log(`${l.file}: ${l.size} B, ${l.messages.map((m) => m.kind[0] + (m.isDelta ? 'Δ' : '')).join('')}, buffers ${l.buffers}: 8-aligned ${l.bufferOffsets8}, 64-aligned (non-empty) ${l.bufferOffsets64}`);
  console.log('sliced/data.arrow nonzero first offsets:', report.slicedFirstOffsets.filter((s) => !s.endsWith('=0')).length);
  console.log('sliced/nonzero_offsets.arrow nonzero first offsets:', report.nonzeroFirstOffsets.filter((s) => !s.endsWith('=0')).length);
}
if (failures) { console.error(`${failures} mismatches`); process.exit(1); }
