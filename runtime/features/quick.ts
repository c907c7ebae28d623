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
 * QUICK_MIN_BLOCKS and QUICK_SMALL_BLOCKS, then nnz /
 * QUICK_ENTRIES_PER_LARGE_BLOCK up to QUICK_MAX_BLOCKS), so the sample stays
 * a small share of an SpMV's reads. With fewer rows than the sample every row is read
 * and tier 1 is exact.
 *
 * The row statistics read row pointers only and are always taken; the
 * locality reads column indices (several times the cost) and is taken when
 * first asked for (`SampledFeatures` reads it in a getter): guards whose
 * path never tests it, and a runtime whose devices' models never read it,
 * never pay for it.
 *
 * What the sample gives (docs/FEATURES.md states the errors measured over
 * the real matrices), long rows counted as themselves (sampledRowStats: a
 * sampled row too long to stand for others, and rows a search of the
 * unsampled ones finds):
 *   - rowLenMean: exact (nnz / rows);
 *   - rowLenCv: the long rows' deviation and the other sampled rows',
 *     scaled, about the exact mean;
 *   - emptyRowFraction: the sampled share of empty rows;
 *   - rowLenMax: the longest row seen or found, a lower bound (exact when
 *     the longest row stands out of the rows around it);
 *   - top1PctNnzShare: the long rows, then the sampled rows' top 1% scaled;
 *   - localityScore: as tier 2, from the first entries of each sampled row;
 *   - rowLenChangeFraction: the share of length changes between consecutive
 *     rows within the blocks (exact when every row is read);
 *   - bandwidthEstimateNorm: as tier 2, the farthest column from its row over
 *     the sampled rows (their first and last columns), a lower bound.
 * CSC and COO have no row pointers to sample: the caller takes the exact
 * features (O(nnz)) for them.
 */
import type { SparseFeatures } from '../plan/types.js';
import type { CsrMatrix } from '../tensor.js';
import { blockStart, csrEntries, QUICK_BLOCK_ROWS, quickBlocks } from './sample-blocks.js';
import { rowStatsOf, sampledRowStats, type QuickFeatures, type RowStats } from './sampled-rows.js';
import { LOCALITY_GAP } from './tier2.js';

export {
  QUICK_BLOCK_ROWS,
  QUICK_ENTRIES_PER_BLOCK,
  QUICK_ENTRIES_PER_LARGE_BLOCK,
  QUICK_MAX_BLOCKS,
  QUICK_MIN_BLOCKS,
  QUICK_SMALL_BLOCKS,
  quickBlocks,
} from './sample-blocks.js';
export {
  QUICK_DRIFT_BLOCKS,
  QUICK_ENTRIES_PER_SEARCH,
  QUICK_SEARCH_SCAN,
  QUICK_SEARCH_SIGMAS,
  QUICK_SEARCHES,
  searchesAfforded,
} from './gap-search.js';
export { sampledRowStats, type QuickFeatures, type RowStats } from './sampled-rows.js';

/** Column indices read per sampled row (its first ones) for the locality score. */
export const QUICK_ENTRIES_PER_ROW = 8;

/** The runs of consecutive rows a pass over the sample reads: `runs` of `runRows` rows, run b from first(b). */
function sampleRuns(m: CsrMatrix, seed: number): { runs: number; runRows: number; first: (b: number) => number } {
  const { rows, rowPtr } = m;
  const blocks = quickBlocks(rows, rowPtr[rows]! - rowPtr[0]!);
  return {
    runs: blocks === 0 ? 1 : blocks,
    runRows: blocks === 0 ? rows : QUICK_BLOCK_ROWS,
    first: (b) => (blocks === 0 ? 0 : blockStart(rows, blocks, b, seed)),
  };
}

/** The locality score (as tier 2's) from the first QUICK_ENTRIES_PER_ROW column indices of the sampled rows. */
export function sampledLocality(m: CsrMatrix, seed = 0): number {
  const { rowPtr, colIdx } = m;
  const { runs, runRows, first: firstOf } = sampleRuns(m, seed);
  let pairs = 0;
  let local = 0;
  for (let b = 0; b < runs; b++) {
    const first = firstOf(b);
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

/**
 * The share of consecutive rows whose lengths differ, over the pairs within
 * the sampled blocks (every pair when every row is read: tier 1's figure).
 * Its own pass over the blocks' row pointers, taken on first read: only the
 * fitted CPU model reads it, so the guards' per-input step never pays for it.
 */
export function sampledRowChange(m: CsrMatrix, seed = 0): number {
  const { rowPtr } = m;
  const { runs, runRows, first: firstOf } = sampleRuns(m, seed);
  let pairs = 0;
  let changes = 0;
  for (let b = 0; b < runs && runRows >= 2; b++) {
    const first = firstOf(b);
    let last = (rowPtr[first + 1]! - rowPtr[first]!) | 0;
    for (let r = first + 1, end = first + runRows; r < end; r++) {
      const n = (rowPtr[r + 1]! - rowPtr[r]!) | 0;
      if (n !== last) changes++;
      last = n;
    }
    pairs += runRows - 1;
  }
  return pairs > 0 ? changes / pairs : 0;
}

/**
 * The band as tier 2 takes it (bandwidthEstimateNorm: the farthest column
 * from its row, / max(rows, cols)) over the sampled rows: each non-empty
 * row's first and last column (columns ascend within a row, as CsrMatrix
 * promises). Its own pass, taken on first read: only the GPU model reads it.
 */
export function sampledBandwidth(m: CsrMatrix, seed = 0): number {
  const { rows, cols, rowPtr, colIdx } = m;
  const { runs, runRows, first: firstOf } = sampleRuns(m, seed);
  let band = 0;
  for (let b = 0; b < runs; b++) {
    const first = firstOf(b);
    for (let r = first, last = first + runRows; r < last; r++) {
      const start = rowPtr[r]! | 0;
      const end = rowPtr[r + 1]! | 0;
      if (end <= start) continue;
      const lo = colIdx[start]! | 0;
      const hi = colIdx[end - 1]! | 0;
      const reach = Math.max(r > lo ? r - lo : lo - r, r > hi ? r - hi : hi - r);
      if (reach > band) band = reach;
    }
  }
  const extent = Math.max(rows, cols);
  return extent > 0 ? band / extent : 0;
}

/** Every sampled feature, locality and band included (for measuring the sample's errors). */
export function quickFeatures(m: CsrMatrix, seed = 0): QuickFeatures {
  return {
    ...sampledRowStats(m, seed),
    localityScore: sampledLocality(m, seed),
    rowLenChangeFraction: sampledRowChange(m, seed),
    bandwidthEstimateNorm: sampledBandwidth(m, seed),
  };
}

/**
 * The planner's features of a CSR pattern as a runtime takes them: tier 0
 * at once (O(1)), the sampled row statistics on the first read of any of
 * them and the locality score on its first read (getters), each kept. Guards
 * whose path and range checks test tier 0 only read no row
 * (runtime/guards/checks.ts). A spread copies own fields only, so a copy of
 * this record must go through `planFeatures` (runtime/guards/features.ts),
 * which reads every field by name; JSON takes it through toJSON.
 *
 * Row pointers too short for the rows, or a negative entry count, throw
 * RangeError from the constructor; pointers that decrease where the sample
 * reads them throw from the first statistic read, through `onError` when
 * given (the runtime turns them into the input's DY3051 there).
 */
export class SampledFeatures implements SparseFeatures {
  readonly rows: number;
  readonly cols: number;
  readonly nnz: number;
  readonly rowLenMean: number;
  readonly #m: CsrMatrix;
  readonly #rowPtr: Int32Array;
  readonly #seed: number;
  readonly #onError: ((e: RangeError) => never) | undefined;
  #stats: RowStats | undefined;
  #locality: number | undefined;
  #change: number | undefined;
  #band: number | undefined;

  constructor(m: CsrMatrix, seed = 0, onError?: (e: RangeError) => never) {
    const nnz = csrEntries(m);
    const { rows, cols } = m;
    this.rows = rows;
    this.cols = cols;
    this.nnz = nnz;
    this.rowLenMean = rows > 0 ? nnz / rows : 0;
    this.#m = m;
    this.#rowPtr = m.rowPtr;
    this.#seed = seed;
    this.#onError = onError;
  }

  #row(): RowStats {
    if (this.#stats) return this.#stats;
    try {
      // The shape the constructor checked, and its row pointers as they were then: checked once per pattern.
      return (this.#stats = rowStatsOf(this.#rowPtr, this.rows, this.cols, this.nnz, this.#seed));
    } catch (e) {
      if (e instanceof RangeError && this.#onError) this.#onError(e);
      throw e;
    }
  }

  get rowLenMax(): number {
    return this.#row().rowLenMax;
  }
  get rowLenCv(): number {
    return this.#row().rowLenCv;
  }
  get emptyRowFraction(): number {
    return this.#row().emptyRowFraction;
  }
  get top1PctNnzShare(): number {
    return this.#row().top1PctNnzShare;
  }
  /** Rows the statistics were taken from (all of them when it equals rows: tier 1 exact). */
  get sampledRows(): number {
    return this.#row().sampledRows;
  }

  /** Whether the row statistics have been read (and so computed). */
  get rowStatsTaken(): boolean {
    return this.#stats !== undefined;
  }

  get localityScore(): number {
    return (this.#locality ??= sampledLocality(this.#m, this.#seed));
  }

  /** Whether the locality score has been read (and so computed). */
  get localityTaken(): boolean {
    return this.#locality !== undefined;
  }

  get rowLenChangeFraction(): number {
    return (this.#change ??= sampledRowChange(this.#m, this.#seed));
  }

  get bandwidthEstimateNorm(): number {
    return (this.#band ??= sampledBandwidth(this.#m, this.#seed));
  }

  toJSON(): QuickFeatures {
    return {
      rows: this.rows,
      cols: this.cols,
      nnz: this.nnz,
      rowLenMean: this.rowLenMean,
      rowLenMax: this.rowLenMax,
      rowLenCv: this.rowLenCv,
      emptyRowFraction: this.emptyRowFraction,
      top1PctNnzShare: this.top1PctNnzShare,
      localityScore: this.localityScore,
      rowLenChangeFraction: this.rowLenChangeFraction,
      bandwidthEstimateNorm: this.bandwidthEstimateNorm,
      sampledRows: this.sampledRows,
    };
  }
}
