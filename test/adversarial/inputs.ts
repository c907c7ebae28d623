/**
 * Adversarial sparse inputs, built in memory (the CLI tests write the same
 * shapes as Matrix Market files): one dense row among short or empty rows,
 * every row empty, 1 x 1, empty shapes, 2^31 - 1 declared columns with a few
 * entries, and NaN / infinite values.
 */
import { Rng } from '../../runtime/random.js';
import type { CooMatrix, CsrMatrix, DenseTensor } from '../../runtime/tensor.js';

export const MAX_COLS = 2147483647;

/** A CSR matrix from explicit rows of (sorted, distinct) column indices; values 1 unless given. */
export function csrOf(
  rows: number,
  cols: number,
  byRow: readonly (readonly number[])[],
  values?: readonly number[],
): CsrMatrix {
  const rowPtr = new Int32Array(rows + 1);
  const colIdx: number[] = [];
  for (let r = 0; r < rows; r++) {
    for (const c of byRow[r] ?? []) colIdx.push(c);
    rowPtr[r + 1] = colIdx.length;
  }
  const v = new Float64Array(colIdx.length).fill(1);
  if (values) v.set(values);
  return { format: 'csr', rows, cols, rowPtr, colIdx: new Int32Array(colIdx), values: v };
}

/**
 * A square n x n matrix whose rows hold 1..maxShort entries (or none, when
 * maxShort is 0), except row `at`, which holds `dense` entries spread over
 * the columns. Deterministic for the seed.
 */
export function denseRowMatrix(n: number, dense: number, at: number, maxShort = 6, seed = 3): CsrMatrix {
  const rng = new Rng(seed);
  const byRow: number[][] = [];
  for (let r = 0; r < n; r++) {
    if (r === at) {
      byRow.push(Array.from({ length: dense }, (_, k) => Math.floor((k * n) / dense)));
      continue;
    }
    const len = maxShort === 0 ? 0 : 1 + rng.int(maxShort);
    const set = new Set<number>();
    while (set.size < len) set.add(rng.int(n));
    byRow.push([...set].sort((a, b) => a - b));
  }
  const m = csrOf(n, n, byRow);
  for (let k = 0; k < m.values.length; k++) m.values[k] = rng.uniform(-1, 1);
  return m;
}

/** Every row empty. */
export const emptyMatrix = (rows: number, cols: number): CsrMatrix => csrOf(rows, cols, []);

/** A few entries in a matrix declaring 2^31 - 1 columns (row pointers stay rows + 1 long; columns only bound the indices). */
export const wideMatrix = (): CsrMatrix => csrOf(3, MAX_COLS, [[0], [MAX_COLS - 1], [4, 1000]], [1, 2, 3, 4]);

/** 3 x 3 with NaN, +inf and -inf among the values. */
export const nonFiniteMatrix = (): CsrMatrix => csrOf(3, 3, [[0, 2], [1], [0, 2]], [NaN, 1, Infinity, -Infinity, 2]);

/** The same matrix as COO: the runtime takes exact features of it (no row pointers to sample). */
export function asCoo(m: CsrMatrix): CooMatrix {
  const rowIdx = new Int32Array(m.values.length);
  for (let r = 0; r < m.rows; r++) rowIdx.fill(r, m.rowPtr[r]!, m.rowPtr[r + 1]!);
  return { format: 'coo', rows: m.rows, cols: m.cols, rowIdx, colIdx: m.colIdx, values: m.values };
}

/** y = A x in float64 with IEEE semantics (NaN and inf propagate), the reference for SpMV outputs. */
export function spmvReference(A: CsrMatrix, x: Float64Array): Float64Array {
  const y = new Float64Array(A.rows);
  for (let r = 0; r < A.rows; r++) {
    let s = 0;
    for (let k = A.rowPtr[r]!; k < A.rowPtr[r + 1]!; k++) s += A.values[k]! * x[A.colIdx[k]!]!;
    y[r] = s;
  }
  return y;
}

/** A dense vector of n values uniform in [-1, 1) from `seed`. */
export function vec(n: number, seed: number): DenseTensor {
  const rng = new Rng(seed);
  const data = new Float64Array(n);
  for (let i = 0; i < n; i++) data[i] = rng.uniform(-1, 1);
  return { format: 'dense', shape: [n], data };
}
