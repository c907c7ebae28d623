/**
 * The flat feature names guards test: `S.key` for each sparse parameter S
 * (tier 0: rows, cols, nnz, density; tier 1: row-length statistics; tier 2:
 * localityScore), `dim.NAME` for dims and `scalar.NAME` for scalars (tier 0).
 */
import type { Binding } from '../plan/bind.js';
import type { SparseFeatures } from '../plan/types.js';
import { features as tensorFeatures } from '../features/index.js';
import type { SparseMatrix } from '../tensor.js';
import type { Tier0Features, Tier1Features } from '../features/types.js';

export type Tier = 0 | 1 | 2;

const SPARSE_KEYS: readonly [string, Tier][] = [
  ['rows', 0],
  ['cols', 0],
  ['nnz', 0],
  ['density', 0],
  ['rowLenMean', 1],
  ['rowLenMax', 1],
  ['rowLenCv', 1],
  ['emptyRowFraction', 1],
  ['top1PctNnzShare', 1],
  ['localityScore', 2],
];

/** Tier-1 keys whose range is checked (besides every tier-0 key): they move the cost models most. */
export const RANGE_KEYS_TIER1: ReadonlySet<string> = new Set(['rowLenCv', 'rowLenMax']);

/** The fields of each sparse parameter a record holds, in record order. */
export const SPARSE_FIELDS: readonly string[] = SPARSE_KEYS.map(([k]) => k);

export function sparseValue(f: SparseFeatures, key: string): number | undefined {
  switch (key) {
    case 'density':
      return f.rows * f.cols > 0 ? f.nnz / (f.rows * f.cols) : 0;
    case 'localityScore':
      return f.localityScore;
    default:
      return (f as unknown as Record<string, number>)[key];
  }
}

/**
 * One field's reader with its own named property load: a load keyed by a
 * variable field name sees every field at one site and goes megamorphic,
 * which for a sampled record's accessors (runtime/features/quick.ts) costs
 * microseconds per read. The per-input paths (the feature view, the range
 * check) read through these.
 */
const FIELD_READERS: Readonly<Record<string, (f: SparseFeatures) => number | undefined>> = {
  rows: (f) => f.rows,
  cols: (f) => f.cols,
  nnz: (f) => f.nnz,
  density: (f) => (f.rows * f.cols > 0 ? f.nnz / (f.rows * f.cols) : 0),
  rowLenMean: (f) => f.rowLenMean,
  rowLenMax: (f) => f.rowLenMax,
  rowLenCv: (f) => f.rowLenCv,
  emptyRowFraction: (f) => f.emptyRowFraction,
  top1PctNnzShare: (f) => f.top1PctNnzShare,
  localityScore: (f) => f.localityScore,
};

/** The reader of a sparse field (SPARSE_FIELDS); throws for another name. */
export function fieldReader(field: string): (f: SparseFeatures) => number | undefined {
  const read = FIELD_READERS[field];
  if (!read) throw new Error(`no reader for sparse field ${field}: expected one of ${SPARSE_FIELDS.join(', ')}`);
  return read;
}

/** A reader of one feature key (`A.rowLenCv`, `dim.n`, `scalar.alpha`) from a binding, made once per key: undefined where the binding lacks it. */
export function keyReader(key: string): (b: Binding) => number | undefined {
  if (key.startsWith('dim.')) {
    const d = key.slice(4);
    return (b) => b.dims.get(d);
  }
  if (key.startsWith('scalar.')) {
    const s = key.slice(7);
    return (b) => b.scalars.get(s);
  }
  const dot = key.lastIndexOf('.');
  const name = key.slice(0, dot);
  const read = fieldReader(key.slice(dot + 1));
  return (b) => {
    const f = b.sparse.get(name);
    return f === undefined ? undefined : read(f);
  };
}

/** Every feature key of a binding with its tier. */
export function featureKeys(b: Binding): { key: string; tier: Tier }[] {
  const out: { key: string; tier: Tier }[] = [];
  for (const name of [...b.sparse.keys()].sort())
    for (const [k, t] of SPARSE_KEYS) out.push({ key: `${name}.${k}`, tier: t });
  for (const d of [...b.dims.keys()].sort()) out.push({ key: `dim.${d}`, tier: 0 });
  for (const s of [...b.scalars.keys()].sort()) out.push({ key: `scalar.${s}`, tier: 0 });
  return out;
}

export function tierOf(key: string): Tier {
  if (key.startsWith('dim.') || key.startsWith('scalar.')) return 0;
  const k = key.slice(key.lastIndexOf('.') + 1);
  return SPARSE_KEYS.find(([n]) => n === k)?.[1] ?? 2;
}

/** One feature of a binding; undefined when the binding does not have it. */
export function featureValue(b: Binding, key: string): number | undefined {
  if (key.startsWith('dim.')) return b.dims.get(key.slice(4));
  if (key.startsWith('scalar.')) return b.scalars.get(key.slice(7));
  const dot = key.lastIndexOf('.');
  const f = b.sparse.get(key.slice(0, dot));
  return f === undefined ? undefined : sparseValue(f, key.slice(dot + 1));
}

/** Each sparse parameter's record keys, in SPARSE_KEYS order (made once per name: records are built per input). */
const keyNames = new Map<string, string[]>();
const keysOf = (name: string): string[] => {
  let k = keyNames.get(name);
  if (!k) keyNames.set(name, (k = SPARSE_KEYS.map(([n]) => `${name}.${n}`)));
  return k;
};
const sorted = <V>(m: ReadonlyMap<string, V>): Iterable<[string, V]> =>
  m.size > 1 ? [...m].sort(([a], [b]) => (a < b ? -1 : 1)) : m;

/**
 * A flat record of every feature of a binding (what generated guards read).
 * Every feature is read, a sampled locality score included (runtime/
 * features/quick.ts computes it on first read): for logs and explanations;
 * the per-input guards read through `featureView` instead.
 */
export function featureRecord(b: Binding): Record<string, number> {
  const r: Record<string, number> = {};
  for (const [name, f] of sorted(b.sparse)) {
    const k = keysOf(name);
    r[k[0]!] = f.rows;
    r[k[1]!] = f.cols;
    r[k[2]!] = f.nnz;
    r[k[3]!] = f.rows * f.cols > 0 ? f.nnz / (f.rows * f.cols) : 0;
    r[k[4]!] = f.rowLenMean;
    r[k[5]!] = f.rowLenMax;
    r[k[6]!] = f.rowLenCv;
    r[k[7]!] = f.emptyRowFraction;
    r[k[8]!] = f.top1PctNnzShare;
    const loc = f.localityScore;
    if (loc !== undefined) r[k[9]!] = loc;
  }
  for (const [d, v] of sorted(b.dims)) r[`dim.${d}`] = v;
  for (const [s, v] of sorted(b.scalars)) r[`scalar.${s}`] = v;
  return r;
}

/**
 * The planner's features of a sparse tensor up to `tier` (1: no column reads;
 * 2: adds the sampled locality score, which the GPU and CPU models use).
 */
export function sparseFeaturesOf(m: SparseMatrix, tier: 1 | 2): SparseFeatures {
  if (tier === 2) {
    const f = tensorFeatures(m, 2);
    return planFeatures(f);
  }
  return planFeatures(tensorFeatures(m, 1));
}

/** The planner's view of tier 0+1 features (and the locality score and band when tier 2 was computed). */
export function planFeatures(
  f: Tier0Features &
    Omit<Tier1Features, 'rowLenChangeFraction'> & {
      localityScore?: number;
      rowLenChangeFraction?: number;
      bandwidthEstimateNorm?: number;
    },
): SparseFeatures {
  return {
    rows: f.rows,
    cols: f.cols,
    nnz: f.nnz,
    rowLenMean: f.rowLenMean,
    rowLenMax: f.rowLenMax,
    rowLenCv: f.rowLenCv,
    emptyRowFraction: f.emptyRowFraction,
    top1PctNnzShare: f.top1PctNnzShare,
    ...(f.localityScore !== undefined ? { localityScore: f.localityScore } : {}),
    ...(f.rowLenChangeFraction !== undefined ? { rowLenChangeFraction: f.rowLenChangeFraction } : {}),
    ...(f.bandwidthEstimateNorm !== undefined ? { bandwidthEstimateNorm: f.bandwidthEstimateNorm } : {}),
  };
}

/**
 * A plain copy of a features record, read field by field (a spread would miss a sampled record's getters); the
 * optional fields only where present. Built by assignment: the runtime's memo copies every new pattern's features
 * it keeps by value (runtime/engine/problem-key.ts).
 */
export function copyFeatures(f: SparseFeatures): SparseFeatures {
  const c: SparseFeatures = {
    rows: f.rows,
    cols: f.cols,
    nnz: f.nnz,
    rowLenMean: f.rowLenMean,
    rowLenMax: f.rowLenMax,
    rowLenCv: f.rowLenCv,
    emptyRowFraction: f.emptyRowFraction,
    top1PctNnzShare: f.top1PctNnzShare,
  };
  const loc = f.localityScore;
  const change = f.rowLenChangeFraction;
  const band = f.bandwidthEstimateNorm;
  if (loc !== undefined) c.localityScore = loc;
  if (change !== undefined) c.rowLenChangeFraction = change;
  if (band !== undefined) c.bandwidthEstimateNorm = band;
  return c;
}
