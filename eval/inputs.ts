/**
 * The suite's inputs as feature records: the real matrices of
 * ../shared/data/matrices (read once, features of tiers 0-2 cached in
 * memory) and generated families. Generated inputs are small matrices built
 * here (Erdos-Renyi, R-MAT power law, banded, with empty rows) whose
 * features are then scaled to the family's sizes: shape and nnz grow, the
 * row-length shape (cv, top-1% share, empty fraction) is kept, the longest
 * row grows like sqrt(scale) for the power-law family, and the locality of
 * uniformly random columns (Erdos-Renyi, empty rows) falls as
 * 1 - exp(-16 mean / cols); banded and R-MAT keep their base locality. No large
 * matrix is ever built.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { features, type AllFeatures } from '../runtime/features/index.js';
import { planFeatures } from '../runtime/guards/index.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import type { SparseFeatures } from '../runtime/plan/types.js';
import { Rng } from '../runtime/random.js';
import type { CsrMatrix } from '../runtime/tensor.js';
import { matricesDir } from './paths.js';

export type Family = 'real' | 'erdos-renyi' | 'rmat' | 'banded' | 'empty-rows';

export interface EvalInput {
  name: string;
  family: Family;
  features: SparseFeatures;
  density: number;
}

let realCache: EvalInput[] | undefined;

/** Square real matrices (the suite's kernels take [n, n]), smallest nnz first; empty when the folder is missing. */
export function realInputs(): EvalInput[] {
  if (realCache) return realCache;
  const dir = matricesDir();
  if (!existsSync(dir)) return (realCache = []);
  const out: EvalInput[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!/\.(mtx|cites|txt)$/.test(file)) continue;
    const m = toCsr(loadMatrix(join(dir, file)));
    if (m.rows !== m.cols) continue;
    const f = features(m, 2);
    out.push({
      name: file.replace(/\.(mtx|cites|txt)$/, ''),
      family: 'real',
      features: planFeatures(f),
      density: f.density,
    });
  }
  out.sort((a, b) => a.features.nnz - b.features.nnz || a.name.localeCompare(b.name));
  return (realCache = out);
}

function csr(rows: number, lists: number[][], rng: Rng): CsrMatrix {
  const rowPtr = new Int32Array(rows + 1);
  const cols: number[] = [];
  lists.forEach((l, i) => {
    for (const c of [...new Set(l)].sort((a, b) => a - b)) cols.push(c);
    rowPtr[i + 1] = cols.length;
  });
  const colIdx = Int32Array.from(cols);
  const values = new Float64Array(colIdx.length);
  for (let p = 0; p < values.length; p++) values[p] = rng.uniform(-1, 1);
  return { format: 'csr', rows, cols: rows, rowPtr, colIdx, values };
}

/** Small generated matrices, n rows, mean row length `mean`. */
export function generate(family: Exclude<Family, 'real'>, n: number, mean: number, seed = 8): CsrMatrix {
  const rng = new Rng(seed * 7919 + n + mean * 31 + family.length);
  const lists: number[][] = Array.from({ length: n }, () => []);
  if (family === 'rmat') {
    // R-MAT quadrant probabilities of Chakrabarti et al. (0.57, 0.19, 0.19, 0.05).
    const levels = Math.ceil(Math.log2(n));
    for (let e = 0; e < n * mean; e++) {
      let r = 0;
      let c = 0;
      for (let l = 0; l < levels; l++) {
        const x = rng.next();
        const q = x < 0.57 ? 0 : x < 0.76 ? 1 : x < 0.95 ? 2 : 3;
        r = r * 2 + (q >> 1);
        c = c * 2 + (q & 1);
      }
      if (r < n && c < n) lists[r]!.push(c);
    }
  } else {
    for (let i = 0; i < n; i++) {
      if (family === 'empty-rows' && rng.next() < 0.4) continue;
      const m = family === 'empty-rows' ? mean / 0.6 : mean;
      // Binomial-like row lengths around the mean (uniform columns make rows Poisson).
      let len = 0;
      for (let t = 0; t < 2 * m; t++) if (rng.next() < 0.5) len++;
      if (family === 'banded') {
        const w = Math.ceil(mean);
        for (let t = 0; t < len; t++) lists[i]!.push(Math.min(n - 1, Math.max(0, i - w + rng.int(2 * w + 1))));
      } else for (let t = 0; t < len; t++) lists[i]!.push(rng.int(n));
    }
  }
  return csr(n, lists, rng);
}

const BASE_ROWS = 8192;
const baseCache = new Map<string, AllFeatures>();

/** Features of a family at `rows` rows, scaled from a generated base matrix. */
export function scaledFeatures(family: Exclude<Family, 'real'>, rows: number, mean: number): EvalInput {
  const key = `${family}:${mean}`;
  let base = baseCache.get(key);
  if (!base) baseCache.set(key, (base = features(generate(family, BASE_ROWS, mean), 2)));
  const scale = rows / BASE_ROWS;
  const nnz = Math.round(base.nnz * scale);
  const actualMean = nnz / rows;
  const maxGrowth = family === 'rmat' ? Math.sqrt(scale) : 1;
  const locality =
    family === 'banded' || family === 'rmat'
      ? base.localityScore
      : scale === 1
        ? base.localityScore
        : 1 - Math.exp((-16 * actualMean) / rows);
  const f: SparseFeatures = {
    rows,
    cols: rows,
    nnz,
    rowLenMean: actualMean,
    rowLenMax: Math.min(rows, Math.round(base.rowLenMax * maxGrowth)),
    rowLenCv: base.rowLenCv,
    emptyRowFraction: base.emptyRowFraction,
    top1PctNnzShare: base.top1PctNnzShare,
    localityScore: locality,
    // The banded family's band is its width in rows, whatever the size; the others' columns spread over all rows.
    bandwidthEstimateNorm:
      family === 'banded' ? Math.min(1, base.bandwidthEstimate / rows) : base.bandwidthEstimateNorm,
  };
  return {
    name: `${family}-${rows >= 1 << 20 ? `${rows >> 20}M` : `${rows >> 10}k`}-d${mean}`,
    family,
    features: f,
    density: nnz / (rows * rows),
  };
}

/** The generated families across sizes. */
export function generatedInputs(): EvalInput[] {
  const out: EvalInput[] = [];
  const families: [Exclude<Family, 'real'>, number][] = [
    ['erdos-renyi', 8],
    ['rmat', 16],
    ['banded', 32],
    ['empty-rows', 8],
  ];
  for (const [fam, mean] of families)
    for (const rows of [1 << 13, 1 << 17, 1 << 21]) out.push(scaledFeatures(fam, rows, mean));
  return out;
}
