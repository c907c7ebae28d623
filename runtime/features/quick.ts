/**
 * The planner's features of a CSR matrix at a cost bounded by a small share
 * of one pass over it, for a runtime that decides per input: tier 0 exactly
 * (O(1)), the row-length statistics and the column locality from a sample of
 * rows in blocks: the rows are cut into B strata and a block of
 * QUICK_BLOCK_ROWS consecutive rows is read in each, at a hashed offset.
 * Blocks, not single rows: a lone row costs a cache miss on its pointers and
 * one on its columns (about 100-150 ns measured here), a block's rows share
 * them, so the sample reads sequential memory as the kernel itself does.
 * B grows with the matrix (nnz / QUICK_ENTRIES_PER_BLOCK, between
 * QUICK_MIN_BLOCKS and QUICK_MAX_BLOCKS), so the sample stays a fixed small
 * share of an SpMV's reads. With fewer rows than the sample every row is read
 * and tier 1 is exact.
 *
 * The row statistics read row pointers only and are always taken; the
 * locality reads column indices (several times the cost) and is taken when
 * first asked for (`SampledFeatures` reads it in a getter): guards whose
 * path never tests it, and a runtime whose devices' models never read it,
 * never pay for it.
 *
 * What the sample gives (docs/FEATURES.md states the errors measured over
 * the real matrices):
 *   - rowLenMean: exact (nnz / rows);
 *   - rowLenCv: the sampled rows' deviation about the exact mean;
 *   - emptyRowFraction: the sampled share of empty rows;
 *   - rowLenMax: the longest sampled row, a lower bound (a lone very long
 *     row is found only when a block holds it);
 *   - top1PctNnzShare: the sampled rows' top 1% scaled to the matrix;
 *   - localityScore: as tier 2, from the first entries of each sampled row.
 * CSC and COO have no row pointers to sample: the caller takes the exact
 * features (O(nnz)) for them.
 */
import type { SparseFeatures } from '../plan/types.js';
import type { CsrMatrix } from '../tensor.js';
import { LOCALITY_GAP } from './tier2.js';

export const QUICK_BLOCK_ROWS = 16;
/** One block per this many stored entries, within [QUICK_MIN_BLOCKS, QUICK_MAX_BLOCKS]. */
export const QUICK_ENTRIES_PER_BLOCK = 8192;
export const QUICK_MIN_BLOCKS = 2;
export const QUICK_MAX_BLOCKS = 16;
/** Column indices read per sampled row (its first ones) for the locality score. */
export const QUICK_ENTRIES_PER_ROW = 8;
/** The longest sampled rows kept for the top-1% share (1% of the largest sample). */
const MAX_TOP = 8;

export interface QuickFeatures extends SparseFeatures {
  /** Rows the statistics were taken from (all of them when it equals rows: tier 1 exact). */
  sampledRows: number;
}

/** Blocks sampled for a matrix of `nnz` entries and `rows` rows (0: every row is read). */
export function quickBlocks(rows: number, nnz: number): number {
  const blocks = Math.max(QUICK_MIN_BLOCKS, Math.min(QUICK_MAX_BLOCKS, Math.floor(nnz / QUICK_ENTRIES_PER_BLOCK)));
  return blocks * QUICK_BLOCK_ROWS >= rows ? 0 : blocks;
}

/**
 * The first row of block b of `blocks` in a matrix of `rows` rows: in
 * stratum b at an offset hashed from (seed, b), in int32 arithmetic (V8 is
 * slow on typed-array reads at indices it holds as doubles, and on `%` of
 * doubles).
 */
function blockStart(rows: number, blocks: number, b: number, seed: number): number {
  const lo = Math.floor((b * rows) / blocks);
  const span = Math.max(1, Math.floor(((b + 1) * rows) / blocks) - lo - QUICK_BLOCK_ROWS + 1);
  let h = Math.imul((b + 1) ^ seed, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h ^= h >>> 13;
  return (lo + Math.floor(((h >>> 0) / 4294967296) * span)) | 0;
}

/** Tier 0 and the sampled row statistics: what a runtime reads of every new pattern. */
export type RowStats = Omit<QuickFeatures, 'localityScore'>;

export function sampledRowStats(m: CsrMatrix, seed = 0): RowStats {
  const { rows, cols, rowPtr } = m;
  const nnz = rowPtr[rows]! - rowPtr[0]!;
  const mean = rows > 0 ? nnz / rows : 0;
  const blocks = quickBlocks(rows, nnz);
  const count = blocks === 0 ? rows : blocks * QUICK_BLOCK_ROWS;
  // The longest 1% of the sample stands for the longest 1% of the matrix (exactly so when every row is read).
  const top = Math.min(MAX_TOP, blocks === 0 ? Math.ceil(rows / 100) : Math.max(1, Math.round(count / 100)));
  const best = [0, 0, 0, 0, 0, 0, 0, 0];
  let max = 0;
  let empty = 0;
  let sq = 0;
  const runs = blocks === 0 ? 1 : blocks;
  const runRows = blocks === 0 ? rows : QUICK_BLOCK_ROWS;
  for (let b = 0; b < runs; b++) {
    const first = blocks === 0 ? 0 : blockStart(rows, blocks, b, seed);
    let end = rowPtr[first]! | 0;
    for (let r = first + 1, last = first + runRows; r <= last; r++) {
      const start = end;
      end = rowPtr[r]! | 0;
      const n = (end - start) | 0;
      if (n > best[top - 1]!) {
        // Insertion into the (descending) longest few.
        let i = top - 1;
        while (i > 0 && best[i - 1]! < n) {
          best[i] = best[i - 1]!;
          i--;
        }
        best[i] = n;
      }
      if (n > max) max = n;
      if (n === 0) empty++;
      const d = n - mean;
      sq += d * d;
    }
  }
  let topSum = 0;
  for (let i = 0; i < top; i++) topSum += best[i]!;
  const topRows = Math.ceil(rows / 100);
  return {
    rows,
    cols,
    nnz,
    rowLenMean: mean,
    rowLenMax: max,
    rowLenCv: mean > 0 && count > 0 ? Math.sqrt(sq / count) / mean : 0,
    emptyRowFraction: count > 0 ? empty / count : 0,
    top1PctNnzShare: nnz > 0 && count > 0 ? Math.min(1, ((topSum / top) * topRows) / nnz) : 0,
    sampledRows: count,
  };
}

/** The locality score (as tier 2's) from the first QUICK_ENTRIES_PER_ROW column indices of the sampled rows. */
export function sampledLocality(m: CsrMatrix, seed = 0): number {
  const { rows, rowPtr, colIdx } = m;
  const blocks = quickBlocks(rows, rowPtr[rows]! - rowPtr[0]!);
  const runs = blocks === 0 ? 1 : blocks;
  const runRows = blocks === 0 ? rows : QUICK_BLOCK_ROWS;
  let pairs = 0;
  let local = 0;
  for (let b = 0; b < runs; b++) {
    const first = blocks === 0 ? 0 : blockStart(rows, blocks, b, seed);
    for (let r = first, last = first + runRows; r < last; r++) {
      const start = rowPtr[r]! | 0;
      const end = rowPtr[r + 1]! | 0;
      const stop = end - start < QUICK_ENTRIES_PER_ROW ? end : start + QUICK_ENTRIES_PER_ROW;
      let prev = colIdx[start]! | 0;
      for (let p = start + 1; p < stop; p++) {
        const c = colIdx[p]! | 0;
        const gap = c - prev;
        if (gap <= LOCALITY_GAP && gap >= -LOCALITY_GAP) local++;
        prev = c;
      }
      if (stop - start > 1) pairs += stop - start - 1;
    }
  }
  return pairs > 0 ? local / pairs : 0;
}

/** Every sampled feature, locality included (for measuring the sample's errors). */
export function quickFeatures(m: CsrMatrix, seed = 0): QuickFeatures {
  return { ...sampledRowStats(m, seed), localityScore: sampledLocality(m, seed) };
}

/**
 * The planner's features of a CSR pattern as a runtime takes them: tier 0
 * and the sampled row statistics at once, the locality score computed on
 * its first read (a getter) and kept. A spread copies own fields only, so a
 * copy of this record must go through `planFeatures` (runtime/guards/
 * features.ts), which reads the locality score by name; JSON takes it
 * through toJSON.
 */
export class SampledFeatures implements SparseFeatures {
  readonly rows: number;
  readonly cols: number;
  readonly nnz: number;
  readonly rowLenMean: number;
  readonly rowLenMax: number;
  readonly rowLenCv: number;
  readonly emptyRowFraction: number;
  readonly top1PctNnzShare: number;
  /** Rows the statistics were taken from (all of them when it equals rows: tier 1 exact). */
  readonly sampledRows: number;
  readonly #m: CsrMatrix;
  readonly #seed: number;
  #locality: number | undefined;

  constructor(m: CsrMatrix, seed = 0) {
    const s = sampledRowStats(m, seed);
    this.rows = s.rows;
    this.cols = s.cols;
    this.nnz = s.nnz;
    this.rowLenMean = s.rowLenMean;
    this.rowLenMax = s.rowLenMax;
    this.rowLenCv = s.rowLenCv;
    this.emptyRowFraction = s.emptyRowFraction;
    this.top1PctNnzShare = s.top1PctNnzShare;
    this.sampledRows = s.sampledRows;
    this.#m = m;
    this.#seed = seed;
  }

  get localityScore(): number {
    return (this.#locality ??= sampledLocality(this.#m, this.#seed));
  }

  /** Whether the locality score has been read (and so computed). */
  get localityTaken(): boolean {
    return this.#locality !== undefined;
  }

  toJSON(): QuickFeatures {
    return { rows: this.rows, cols: this.cols, nnz: this.nnz, rowLenMean: this.rowLenMean, rowLenMax: this.rowLenMax, rowLenCv: this.rowLenCv, emptyRowFraction: this.emptyRowFraction, top1PctNnzShare: this.top1PctNnzShare, localityScore: this.localityScore, sampledRows: this.sampledRows };
  }
}
