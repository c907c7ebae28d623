/**
 * Training samples for the guard builder: each profile itself, plus points
 * around it (size, mean degree and row-length skew scaled by random factors
 * within `spread`), plus points across explicitly given feature ranges.
 * Deterministic for a seed.
 */
import type { Binding } from '../plan/bind.js';
import type { SparseFeatures } from '../plan/types.js';
import { Rng } from '../random.js';
import { copyFeatures } from './features.js';

export interface SampleOptions {
  /** Perturbed samples per profile (default 24). */
  perProfile?: number;
  /** Size, degree and skew are scaled by factors in [1/spread, spread] (default 2). */
  spread?: number;
  /** Feature key -> range sampled across (log-uniform when lo > 0), e.g. `dim.f: [16, 256]`. */
  ranges?: Record<string, [number, number]>;
  /** Dims bound by each sparse parameter's rows and cols, kept consistent when sizes change. */
  shapeDims?: Record<string, [string | undefined, string | undefined]>;
  seed?: number;
}

function logUniform(rng: Rng, lo: number, hi: number): number {
  if (lo <= 0 || hi <= 0) return rng.uniform(lo, hi);
  return Math.exp(rng.uniform(Math.log(lo), Math.log(hi)));
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/** Makes the derived fields agree after rows, cols, mean or skew changed. */
function consistent(f: SparseFeatures): SparseFeatures {
  const rows = Math.max(1, Math.round(f.rows));
  const cols = Math.max(1, Math.round(f.cols));
  const mean = clamp(f.rowLenMean, 0, cols);
  const nnz = Math.round(mean * rows);
  const max = clamp(Math.round(f.rowLenMax), Math.ceil(mean), cols);
  return {
    ...copyFeatures(f),
    rows,
    cols,
    nnz,
    rowLenMean: rows > 0 ? nnz / rows : 0,
    rowLenMax: max,
    rowLenCv: Math.max(0, f.rowLenCv),
    emptyRowFraction: clamp(f.emptyRowFraction, 0, 1),
    top1PctNnzShare: clamp(f.top1PctNnzShare, 0, 1),
  };
}

function withDims(
  b: Binding,
  sparse: Map<string, SparseFeatures>,
  o: SampleOptions,
  dimOverride: Map<string, number>,
): Binding {
  const dims = new Map(b.dims);
  for (const [name, f] of sparse) {
    const [r, c] = o.shapeDims?.[name] ?? [undefined, undefined];
    if (r !== undefined) dims.set(r, f.rows);
    if (c !== undefined) dims.set(c, f.cols);
  }
  for (const [k, v] of dimOverride) dims.set(k, v);
  return { sparse, dims, scalars: b.scalars };
}

function perturb(f: SparseFeatures, rng: Rng, spread: number, square: boolean): SparseFeatures {
  const size = logUniform(rng, 1 / spread, spread);
  const degree = logUniform(rng, 1 / spread, spread);
  const skew = logUniform(rng, 1 / spread, spread);
  const rows = f.rows * size;
  const cols = square ? rows : f.cols * logUniform(rng, 1 / spread, spread);
  const mean = f.rowLenMean * degree;
  const maxRatio = f.rowLenMean > 0 ? f.rowLenMax / f.rowLenMean : 1;
  return consistent({
    ...copyFeatures(f),
    rows,
    cols,
    rowLenMean: mean,
    rowLenMax: mean * Math.max(1, maxRatio * skew),
    rowLenCv: f.rowLenCv * skew,
    top1PctNnzShare: f.top1PctNnzShare * Math.sqrt(skew),
    ...(f.localityScore !== undefined
      ? { localityScore: clamp(f.localityScore + rng.uniform(-0.15, 0.15), 0, 1) }
      : {}),
  });
}

function applyRange(
  sparse: Map<string, SparseFeatures>,
  dims: Map<string, number>,
  scalars: Map<string, number>,
  key: string,
  v: number,
): void {
  if (key.startsWith('dim.')) return void dims.set(key.slice(4), Math.max(1, Math.round(v)));
  if (key.startsWith('scalar.')) return void scalars.set(key.slice(7), v);
  const dot = key.lastIndexOf('.');
  const name = key.slice(0, dot);
  const field = key.slice(dot + 1);
  const f = sparse.get(name);
  if (!f) throw new Error(`sample range '${key}': no sparse input '${name}'`);
  const g = { ...copyFeatures(f) } as unknown as Record<string, number>;
  if (field === 'nnz') g['rowLenMean'] = v / Math.max(1, f.rows);
  else if (field === 'density') g['rowLenMean'] = v * f.cols;
  else if (field === 'rows' && f.rows === f.cols) {
    g['rows'] = v;
    g['cols'] = v;
  } else if (!(field in g) && field !== 'localityScore')
    throw new Error(`sample range '${key}': unknown feature '${field}'`);
  else g[field] = v;
  sparse.set(name, consistent(g as unknown as SparseFeatures));
}

/** A sample, with the profile it was drawn around (its index in the profiles given). */
export interface SampledBinding extends Binding {
  profile: number;
}

export function sampleBindings(profiles: readonly Binding[], o: SampleOptions = {}): SampledBinding[] {
  const rng = new Rng(o.seed ?? 7);
  const per = o.perProfile ?? 24;
  const spread = o.spread ?? 2;
  const out: SampledBinding[] = [];
  const ranges = Object.entries(o.ranges ?? {});
  for (const [profile, b] of profiles.entries()) {
    out.push({ ...b, profile });
    for (let i = 0; i < per; i++) {
      const sparse = new Map<string, SparseFeatures>();
      for (const [name, f] of b.sparse) sparse.set(name, perturb(f, rng, spread, f.rows === f.cols));
      const dims = new Map<string, number>();
      const scalars = new Map(b.scalars);
      for (const [key, [lo, hi]] of ranges) applyRange(sparse, dims, scalars, key, logUniform(rng, lo, hi));
      const s = withDims(b, sparse, o, dims);
      out.push({ ...s, scalars, profile });
    }
  }
  return out;
}
