/**
 * Row-length imbalance, from the tier-0/1 features alone: how much more
 * work the busiest unit of a parallel schedule gets than the mean. The GPU
 * and FPGA costs (gpu.ts, fpga-rows.ts) divide their throughput by it; how
 * each schedule deals rows out decides which form applies. Definitions and
 * their check against exact counts: docs/COST-MODEL.md, "Imbalance".
 */
import type { SparseFeatures } from '../plan/types.js';

/**
 * Expected maximum of `draws` independent row lengths over their mean, for
 * lengths with coefficient of variation `cv`: 1 + cv sqrt(2 ln draws), the
 * Gaussian tail bound. Rows are not independent draws (neighbouring rows of
 * a mesh or a block matrix are alike), so this is an upper estimate.
 */
export function expectedMaxOverMean(cv: number, draws: number): number {
  return draws > 1 ? 1 + cv * Math.sqrt(2 * Math.log(draws)) : 1;
}

/** The row statistics lockstepImbalance reads. */
export type RowSpread = Pick<SparseFeatures, 'rowLenMean' | 'rowLenCv' | 'rowLenMax'>;

/**
 * Lockstep groups of consecutive rows (a warp of row-per-thread: 32 rows,
 * 32 threads): the group takes as long as its longest row, so the work is
 * stretched by E[max] / mean of `width` rows, never more than max / mean,
 * and never more than `width` (the longest of `width` rows is at most their
 * sum). The last bound matters where the rows' cv is a hub's and the group
 * small: adaptive-rows on an R-MAT graph (cv 68, 2 rows a warp) was priced
 * 50x its bytes, 3x its H200 time (docs/PERFORMANCE.md).
 */
export function lockstepImbalance(f: RowSpread, width: number): number {
  if (f.rowLenMean <= 0) return 1;
  return Math.min(expectedMaxOverMean(f.rowLenCv, width), Math.max(1, f.rowLenMax / f.rowLenMean), Math.max(1, width));
}

/** How a streaming FPGA design deals out a sparse matrix (runtime/plan/fpga-designs.ts). */
export interface RowDeal {
  /** Processing elements (lanes) rows are dealt to cyclically: row r goes to PE r mod pes. */
  pes: number;
  /** Rows one pass holds on chip (pes x rowSlots): longer matrices are processed in row tiles. */
  tileRows: number;
  /** Columns of the dense operand per window: each window is a separate pass over its entries. */
  colWindow: number;
  /** Whether the longest rows are spread over all PEs (then only the spread of the rest counts). */
  sharesLongest?: boolean;
}

/**
 * The PE imbalance delta of a cyclic row deal, as HiSpMV defines it
 * (Rajashekar et al., FPGA 2024, equation 2): the busiest PE's entries over
 * the mean, per (row tile, column window) pass, estimated from features.
 *
 * Per pass a PE holds n = min(rows, tileRows) / pes rows, each with mu_t =
 * rowLenMean / windows entries in the window, whose spread is the rows' own
 * (cv) plus the scatter of a row's entries over the windows (binomial:
 * cv_t^2 = cv^2 + (1 - 1 / windows) / mu_t). The busiest PE is the larger of
 *  - spread: n mu_t + sigma_t sqrt(n) sqrt(2 ln pes) (the Gaussian bound of
 *    `expectedMaxOverMean` over pes sums of n rows), and
 *  - longest row: the PE holding it, rowLenMax / windows + (n - 1) mu_t
 *    (none where the design spreads its longest rows over all PEs),
 * over the mean n mu_t; at most pes (everything on one PE).
 */
export function cyclicImbalance(f: SparseFeatures, deal: RowDeal): number {
  if (f.nnz <= 0 || f.rows <= 0 || f.rowLenMean <= 0) return 1;
  const windows = Math.max(1, Math.ceil(f.cols / deal.colWindow));
  const n = Math.min(f.rows, deal.tileRows) / deal.pes;
  const mu = f.rowLenMean / windows;
  const cv2 = f.rowLenCv * f.rowLenCv + (1 - 1 / windows) / mu;
  const sigma = Math.sqrt(cv2) * mu;
  // A PE with fewer than one row on average still holds whole rows: the busiest holds at least one.
  const held = Math.max(1, n);
  const used = Math.min(deal.pes, Math.max(1, Math.round(Math.min(f.rows, deal.tileRows))));
  const spread = held * mu + sigma * Math.sqrt(held) * Math.sqrt(2 * Math.log(used));
  const longest = deal.sharesLongest ? 0 : Math.max(f.rowLenMax / windows, Math.min(f.rowLenMax, 1)) + (held - 1) * mu;
  return Math.min(deal.pes, Math.max(1, Math.max(spread, longest) / (n * mu)));
}

/**
 * Estimated lengths of the k longest rows (longest first): a power law
 * L(i) = rowLenMax i^-b through the longest row and the mean of the
 * m = ceil(rows / 100) longest (top1PctNnzShare), never below the mean row.
 * The sum over the top rows is taken as 1 + the integral of x^-b from 1.5 to
 * m + 0.5, close to the exact sum for every b. Where m < k the top 1% does
 * not pin the tail that far (a matrix of a few hundred rows), so the rows
 * are also read off a log-normal of the rows' mean and cv (its (i - 0.5) / rows
 * upper quantile) and the smaller taken. Against exact counts on the test
 * matrices: test/hls/cycle-model.test.ts.
 */
export function longestRowLengths(f: SparseFeatures, k: number): number[] {
  const n = Math.min(k, f.rows);
  if (n <= 0 || f.nnz <= 0) return [];
  const m = Math.ceil(f.rows / 100);
  const topMean = (f.top1PctNnzShare * f.nnz) / m;
  const sum = (b: number): number =>
    Math.abs(1 - b) < 1e-9 ? 1 + Math.log((m + 0.5) / 1.5) : 1 + ((m + 0.5) ** (1 - b) - 1.5 ** (1 - b)) / (1 - b);
  let lo = 0;
  let hi = 4;
  if (m <= 1 || topMean >= f.rowLenMax) hi = 0;
  else if ((f.rowLenMax * sum(hi)) / m > topMean) lo = hi;
  for (let it = 0; it < 50 && hi - lo > 1e-6; it++) {
    const b = (lo + hi) / 2;
    if ((f.rowLenMax * sum(b)) / m > topMean) lo = b;
    else hi = b;
  }
  const b = (lo + hi) / 2;
  const s2 = Math.log(1 + f.rowLenCv * f.rowLenCv);
  const mu = Math.log(f.rowLenMean) - s2 / 2;
  const logNormal = (i: number): number => Math.exp(mu + Math.sqrt(s2) * normalQuantile(1 - (i + 0.5) / f.rows));
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const power = f.rowLenMax * (i + 1) ** -b;
    out[i] = Math.max(f.rowLenMean, m < n ? Math.min(power, logNormal(i)) : power);
  }
  return out;
}

/**
 * The standard normal's p-quantile, by Acklam's rational approximation
 * (relative error below 1.2e-9 over (0, 1)).
 */
export function normalQuantile(p: number): number {
  if (p <= 0) return -Infinity;
  if (p >= 1) return Infinity;
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number): number =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
    ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  const low = 0.02425;
  if (p < low) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - low) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/** The estimated lengths of a matrix's longest rows with their running sums, for withoutLongest. */
export interface LongestRows {
  lengths: number[];
  /** sum[k], sumSq[k]: of the first k lengths and of their squares. */
  sum: number[];
  sumSq: number[];
}

/** The `count` longest rows' estimated lengths (longestRowLengths) and their running sums. */
export function longestRows(f: SparseFeatures, count: number): LongestRows {
  const lengths = longestRowLengths(f, count);
  const sum = [0];
  const sumSq = [0];
  for (const l of lengths) {
    sum.push(sum.at(-1)! + l);
    sumSq.push(sumSq.at(-1)! + l * l);
  }
  return { lengths, sum, sumSq };
}

/**
 * The features of a matrix without its `k` longest rows, given `top`, the
 * estimates of at least its k + 1 longest (longestRows, computed once for
 * every k a caller tries).
 */
export function withoutLongest(
  f: SparseFeatures,
  top: LongestRows,
  k: number,
): { rest: SparseFeatures; removed: number } {
  const gone = Math.min(k, top.lengths.length);
  if (gone === 0) return { rest: f, removed: 0 };
  const removed = top.sum[gone]!;
  const rows = f.rows - gone;
  const nnz = Math.max(0, f.nnz - removed);
  const sumSq = f.rows * f.rowLenMean * f.rowLenMean * (1 + f.rowLenCv * f.rowLenCv) - top.sumSq[gone]!;
  const mean = rows > 0 ? nnz / rows : 0;
  const variance = rows > 0 ? Math.max(0, sumSq / rows - mean * mean) : 0;
  return {
    rest: {
      ...f,
      rows,
      nnz,
      rowLenMean: mean,
      rowLenMax: Math.min(f.rowLenMax, top.lengths[k] ?? mean),
      rowLenCv: mean > 0 ? Math.sqrt(variance) / mean : 0,
    },
    removed,
  };
}
