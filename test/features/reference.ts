/** Plain, independent formulas for the tier-1 and tier-2 features, for comparison. */

import type { CsrMatrix } from '../../runtime/tensor.js';

export function rowLengths(rowPtr: ArrayLike<number>, rows: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < rows; r++) out.push(rowPtr[r + 1]! - rowPtr[r]!);
  return out;
}

/** Gini as mean absolute difference / (2 mean), summed over distinct lengths: O(distinct^2). */
export function giniReference(lengths: number[]): number {
  const n = lengths.length;
  const total = lengths.reduce((a, b) => a + b, 0);
  if (n === 0 || total === 0) return 0;
  const counts = new Map<number, number>();
  for (const x of lengths) counts.set(x, (counts.get(x) ?? 0) + 1);
  let absDiff = 0;
  for (const [a, ca] of counts) for (const [b, cb] of counts) absDiff += ca * cb * Math.abs(a - b);
  const mean = total / n;
  return absDiff / (2 * n * n * mean);
}

export function cvReference(lengths: number[]): number {
  const n = lengths.length;
  if (n === 0) return 0;
  const mean = lengths.reduce((a, b) => a + b, 0) / n;
  if (mean === 0) return 0;
  const variance = lengths.reduce((a, x) => a + (x - mean) ** 2, 0) / n;
  return Math.sqrt(variance) / mean;
}

export function topShareReference(lengths: number[]): number {
  const total = lengths.reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  const k = Math.ceil(lengths.length / 100);
  const top = [...lengths].sort((a, b) => b - a).slice(0, k);
  return top.reduce((a, b) => a + b, 0) / total;
}

/** Exact max |i - j| over every entry. */
export function halfBandwidth(m: CsrMatrix): number {
  let band = 0;
  for (let r = 0; r < m.rows; r++) {
    for (let k = m.rowPtr[r]!; k < m.rowPtr[r + 1]!; k++) band = Math.max(band, Math.abs(r - m.colIdx[k]!));
  }
  return band;
}

/** Tier-2 figures over every row with no per-row cap (what sampling all rows with E = infinity gives). */
export function fullTier2(m: CsrMatrix): { colSpanMean: number; bandwidth: number; locality: number } {
  let spanSum = 0;
  let nonEmpty = 0;
  let pairs = 0;
  let local = 0;
  for (let r = 0; r < m.rows; r++) {
    const s = m.rowPtr[r]!;
    const e = m.rowPtr[r + 1]!;
    if (e === s) continue;
    nonEmpty++;
    spanSum += m.colIdx[e - 1]! - m.colIdx[s]! + 1;
    for (let k = s + 1; k < e; k++) {
      pairs++;
      if (Math.abs(m.colIdx[k]! - m.colIdx[k - 1]!) <= 16) local++;
    }
  }
  return {
    colSpanMean: nonEmpty > 0 ? spanSum / nonEmpty / m.cols : 0,
    bandwidth: halfBandwidth(m),
    locality: pairs > 0 ? local / pairs : 0,
  };
}

/** An Int32Array stand-in that counts element reads (`reads.n`) or throws on any. */
export function watched(a: Int32Array, reads: { n: number }, forbid = false): Int32Array {
  return new Proxy(a, {
    get(target, p) {
      if (typeof p === 'string' && /^\d+$/.test(p)) {
        if (forbid) throw new Error(`element ${p} was read`);
        reads.n++;
      }
      return Reflect.get(target, p);
    },
  });
}

/** A Float64Array stand-in that throws when an element is read. */
export function forbiddenValues(a: Float64Array): Float64Array {
  return new Proxy(a, {
    get(target, p) {
      if (typeof p === 'string' && /^\d+$/.test(p)) throw new Error(`value ${p} was read`);
      return Reflect.get(target, p);
    },
  });
}

/** CSR from a list of rows' sorted column lists. */
export function csrOf(cols: number, rowsCols: number[][]): CsrMatrix {
  const rowPtr = new Int32Array(rowsCols.length + 1);
  const colIdx: number[] = [];
  rowsCols.forEach((cs, r) => {
    colIdx.push(...cs);
    rowPtr[r + 1] = colIdx.length;
  });
  return {
    format: 'csr',
    rows: rowsCols.length,
    cols,
    rowPtr,
    colIdx: Int32Array.from(colIdx),
    values: new Float64Array(colIdx.length).fill(1),
  };
}
