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

/**
 * Lockstep groups of consecutive rows (a warp of row-per-thread: 32 rows,
 * 32 threads): the group takes as long as its longest row, so the work is
 * stretched by E[max] / mean of `width` rows, never more than max / mean.
 */
export function lockstepImbalance(f: SparseFeatures, width: number): number {
  if (f.rowLenMean <= 0) return 1;
  return Math.min(expectedMaxOverMean(f.rowLenCv, width), Math.max(1, f.rowLenMax / f.rowLenMean));
}

/** How a streaming FPGA design deals out a sparse matrix (runtime/plan/fpga-designs.ts). */
export interface RowDeal {
  /** Processing elements (lanes) rows are dealt to cyclically: row r goes to PE r mod pes. */
  pes: number;
  /** Rows one pass holds on chip (pes x rowSlots): longer matrices are processed in row tiles. */
  tileRows: number;
  /** Columns of the dense operand per window: each window is a separate pass over its entries. */
  colWindow: number;
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
 *  - longest row: the PE holding it, rowLenMax / windows + (n - 1) mu_t,
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
  const longest = Math.max(f.rowLenMax / windows, Math.min(f.rowLenMax, 1)) + (held - 1) * mu;
  return Math.min(deal.pes, Math.max(1, Math.max(spread, longest) / (n * mu)));
}
