/**
 * Tier 1: the distribution of row lengths, from row pointers alone.
 *
 * Cost for CSR: one sequential pass over rowPtr (rows + 1 reads) that fills a
 * histogram of row lengths, then one walk over the histogram between the
 * shortest and longest row: O(rows + maxRowLen - minRowLen) time. The
 * histogram is a module-level scratch array, reused between calls (so a guard
 * evaluated per input allocates only its result); one longer than 65,536
 * lengths is allocated for that call and dropped. Its size never exceeds
 * maxRowLen + 1 <= nnz + 1. No value or column index is read.
 * CSC and COO first count their row indices: O(nnz + rows), one Int32Array.
 */

import type { DenseTensor, SparseMatrix } from '../tensor.js';
import { rowPtrOf } from './rows.js';
import { matrixShape } from './tier0.js';
import type { Tier1Features } from './types.js';

const RETAIN_LIMIT = 1 << 16;
let scratch: Uint32Array = new Uint32Array(256);

const EMPTY: Readonly<Tier1Features> = {
  rowLenMean: 0,
  rowLenMax: 0,
  rowLenMin: 0,
  rowLenCv: 0,
  rowLenGini: 0,
  emptyRowFraction: 0,
  top1PctNnzShare: 0,
  rowLenChangeFraction: 0,
};

/** How many rows the "longest 1%" takes: ceil(rows / 100). */
export function top1PctRowCount(rows: number): number {
  return Math.ceil(rows / 100);
}

/**
 * Tier-1 features of the row lengths ptr[r + 1] - ptr[r], r < rows.
 * Throws RangeError when a length is negative or longer than the total.
 */
export function rowLengthStats(ptr: Int32Array, rows: number): Tier1Features {
  if (rows <= 0) return { ...EMPTY };
  if (ptr.length < rows + 1)
    throw new RangeError(`${ptr.length} row pointers for ${rows} rows: expected rows + 1 = ${rows + 1}`);
  const total = ptr[rows]! - ptr[0]!;
  if (!(total >= 0))
    throw new RangeError(
      `row pointers are not non-decreasing within 0..nnz: rowPtr[0] = ${ptr[0]} > rowPtr[${rows}] = ${ptr[rows]}`,
    );
  let hist = scratch;
  let cap = hist.length;
  let min = total;
  let max = 0;
  let prev = ptr[0]!;
  // The first row's length counts as no change.
  let last = rows > 0 ? ptr[1]! - prev : 0;
  let changes = 0;
  for (let r = 1; r <= rows; r++) {
    const next = ptr[r]!;
    const len = next - prev;
    prev = next;
    if (len !== last) changes++;
    last = len;
    if (len >= cap) {
      if (len > total) throw badLength(hist, max, r - 1, len);
      hist = grow(hist, len, total);
      cap = hist.length;
    }
    if (len < min) {
      if (len < 0) throw badLength(hist, max, r - 1, len);
      min = len;
    }
    if (len > max) max = len;
    hist[len]!++;
  }
  if (cap <= RETAIN_LIMIT) scratch = hist;

  const mean = total / rows;
  const emptyRows = hist[0]!;

  // Longest ceil(rows/100) rows, from the top of the histogram down.
  let want = top1PctRowCount(rows);
  let topNnz = 0;
  for (let len = max; len >= min && want > 0; len--) {
    const c = hist[len]!;
    if (c === 0) continue;
    const take = c < want ? c : want;
    topNnz += take * len;
    want -= take;
  }

  // Ascending walk: variance about the mean, and the Gini sum
  // sum_i (2i - n - 1) x_i over lengths sorted ascending (i = 1..n), where a
  // run of c equal lengths at ranks pos+1..pos+c contributes len * c * (2pos + c - n).
  // The walk also clears the histogram for the next call.
  let sq = 0;
  let giniSum = 0;
  let pos = 0;
  for (let len = min; len <= max; len++) {
    const c = hist[len]!;
    if (c === 0) continue;
    hist[len] = 0;
    const d = len - mean;
    sq += c * d * d;
    giniSum += len * c * (2 * pos + c - rows);
    pos += c;
  }

  const cv = mean > 0 ? Math.sqrt(sq / rows) / mean : 0;
  const gini = total > 0 ? Math.min(1, Math.max(0, giniSum / (rows * total))) : 0;
  return {
    rowLenMean: mean,
    rowLenMax: max,
    rowLenMin: min,
    rowLenCv: cv,
    rowLenGini: gini,
    emptyRowFraction: emptyRows / rows,
    top1PctNnzShare: total > 0 ? topNnz / total : 0,
    rowLenChangeFraction: rows > 1 ? changes / (rows - 1) : 0,
  };
}

/** A larger histogram holding the old counts (doubling, capped at total + 1); the old one is left zeroed. */
function grow(hist: Uint32Array, len: number, total: number): Uint32Array {
  const size = Math.min(total + 1, Math.max(len + 1, hist.length * 2));
  const out = new Uint32Array(size);
  out.set(hist);
  hist.fill(0);
  return out;
}

function badLength(hist: Uint32Array, max: number, row: number, len: number): RangeError {
  hist.fill(0, 0, Math.min(max + 1, hist.length));
  return new RangeError(`row pointers are not non-decreasing within 0..nnz: row ${row} has length ${len}`);
}

/** Tier-1 features for a dense tensor: every row stores `cols` entries. O(1). */
function denseTier1(t: DenseTensor): Tier1Features {
  const [rows, cols] = matrixShape(t);
  if (rows === 0) return { ...EMPTY };
  return {
    rowLenMean: cols,
    rowLenMax: cols,
    rowLenMin: cols,
    rowLenCv: 0,
    rowLenGini: 0,
    emptyRowFraction: cols === 0 ? 1 : 0,
    top1PctNnzShare: cols === 0 ? 0 : top1PctRowCount(rows) / rows,
    rowLenChangeFraction: 0,
  };
}

/**
 * Tier-1 features of the row lengths. CSR: O(rows + maxRowLen - minRowLen),
 * reads rowPtr only. CSC/COO: rows counted from their row indices, O(nnz + rows).
 * Dense: closed form, every row holds `cols` stored entries.
 */
export function tier1(m: SparseMatrix | DenseTensor): Tier1Features {
  if (m.format === 'dense') return denseTier1(m);
  return rowLengthStats(rowPtrOf(m), m.rows);
}
