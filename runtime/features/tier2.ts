/**
 * Tier 2: column span, bandwidth and locality from a bounded sample of rows.
 *
 * Sampling: with rows <= S (samples, default 1024) every row is read, so the
 * figures are exact for the read prefix. Otherwise the rows are cut into S
 * equal strata and one row is taken in each, at an offset chosen by a hash of
 * (seed, stratum): deterministic for a given seed, spread over the whole
 * matrix, and free of aliasing with periodic structure that a fixed stride
 * could hit.
 *
 * Per sampled non-empty row of length len (columns ascending, as CsrMatrix
 * promises): all columns when len <= E (maxEntriesPerRow, default 64), else
 * the first E - 1 and the last. First and last column give the row's exact
 * span and exact max |i - j|; the locality pairs come from the contiguous
 * prefix that was read.
 *
 * Cost: O(S) row-pointer reads and at most S x E column reads (reported as
 * sampledEntries), whatever nnz is; no values are read, nothing is allocated
 * but the result. CSC inputs, and COO not in row order, are converted to CSR
 * first (O(nnz + rows + cols)); row-ordered COO costs one O(nnz) count.
 */

import type { DenseTensor, SparseMatrix } from '../tensor.js';
import { type RowView, rowViewOf } from './rows.js';
import { matrixShape } from './tier0.js';
import type { Tier2Features, Tier2Options } from './types.js';

export const DEFAULT_SAMPLES = 1024;
export const DEFAULT_MAX_ENTRIES_PER_ROW = 64;
/** Column gap counted as local: 16 float32 (one 64-byte line) or 16 float64 (two lines) of the dense operand. */
export const LOCALITY_GAP = 16;

interface Resolved {
  samples: number;
  seed: number;
  maxEntries: number;
}

function resolve(opts: Tier2Options | undefined): Resolved {
  const samples = opts?.samples ?? DEFAULT_SAMPLES;
  const seed = opts?.seed ?? 0;
  const maxEntries = opts?.maxEntriesPerRow ?? DEFAULT_MAX_ENTRIES_PER_ROW;
  if (!Number.isInteger(samples) || samples < 0)
    throw new RangeError(`samples must be a non-negative integer, got ${samples}`);
  if (!Number.isInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
  if (!Number.isInteger(maxEntries) || maxEntries < 2) {
    throw new RangeError(`maxEntriesPerRow must be an integer >= 2, got ${maxEntries}`);
  }
  return { samples, seed: seed >>> 0, maxEntries };
}

/** A 32-bit hash of (seed, i), SplitMix32-style finaliser; the same on every machine. */
function mix(seed: number, i: number): number {
  let z = (seed ^ Math.imul(i + 1, 0x9e3779b9)) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

/** The k-th sampled row (0 <= k < count), ascending in k. */
function sampledRow(k: number, count: number, rows: number, seed: number): number {
  if (count === rows) return k;
  const lo = Math.floor((k * rows) / count);
  const hi = Math.floor(((k + 1) * rows) / count);
  return lo + (mix(seed, k) % (hi - lo));
}

/** Tier-2 features of a row-major view (CSR, or what rowViewOf made). */
export function sampleRows(v: RowView, opts?: Tier2Options): Tier2Features {
  const { samples, seed, maxEntries } = resolve(opts);
  const { rows, cols, rowPtr, colIdx } = v;
  const count = Math.min(rows, samples);
  let read = 0;
  let nonEmpty = 0;
  let spanSum = 0;
  let band = 0;
  let pairs = 0;
  let local = 0;
  for (let k = 0; k < count; k++) {
    const r = sampledRow(k, count, rows, seed);
    const start = rowPtr[r]!;
    const len = rowPtr[r + 1]! - start;
    if (len <= 0) continue;
    nonEmpty++;
    const prefix = len <= maxEntries ? len : maxEntries - 1;
    const first = colIdx[start]!;
    let prev = first;
    for (let p = start + 1, end = start + prefix; p < end; p++) {
      const c = colIdx[p]!;
      const gap = c - prev;
      if (gap <= LOCALITY_GAP && gap >= -LOCALITY_GAP) local++;
      prev = c;
    }
    pairs += prefix - 1;
    read += prefix;
    let last = prev;
    if (prefix < len) {
      last = colIdx[start + len - 1]!;
      read++;
    }
    spanSum += last - first + 1;
    const b = Math.max(r > first ? r - first : first - r, r > last ? r - last : last - r);
    if (b > band) band = b;
  }
  const extent = Math.max(rows, cols);
  return {
    sampledRows: count,
    sampledEntries: read,
    colSpanMean: nonEmpty > 0 ? spanSum / nonEmpty / cols : 0,
    bandwidthEstimate: band,
    bandwidthEstimateNorm: extent > 0 ? band / extent : 0,
    localityScore: pairs > 0 ? local / pairs : 0,
  };
}

/** Tier-2 features of a dense tensor, exact from its shape (nothing is read). */
function denseTier2(t: DenseTensor): Tier2Features {
  const [rows, cols] = matrixShape(t);
  const some = rows > 0 && cols > 0;
  const band = some ? Math.max(rows, cols) - 1 : 0;
  return {
    sampledRows: 0,
    sampledEntries: 0,
    colSpanMean: some ? 1 : 0,
    bandwidthEstimate: band,
    bandwidthEstimateNorm: some ? band / Math.max(rows, cols) : 0,
    localityScore: some && cols > 1 ? 1 : 0,
  };
}

/**
 * Tier-2 features: sampled column span, bandwidth and locality, bounded by
 * opts.samples x opts.maxEntriesPerRow column reads (see the file comment).
 */
export function tier2(m: SparseMatrix | DenseTensor, opts?: Tier2Options): Tier2Features {
  if (m.format === 'dense') {
    resolve(opts);
    return denseTier2(m);
  }
  return sampleRows(rowViewOf(m), opts);
}
