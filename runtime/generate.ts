/**
 * Synthetic sparse matrices, deterministic for a seed: what calibration and
 * the CPU benchmark run on besides the real matrices.
 */
import { Rng } from './random.js';
import type { CsrMatrix } from './tensor.js';

/**
 * A square matrix with row lengths uniform in [perRow/2, 3 perRow/2) and
 * columns uniform over all columns, or (banded) within 2 perRow of the diagonal.
 */
export function generatedMatrix(rows: number, perRow: number, banded = false, seed = 20261202): CsrMatrix {
  const rng = new Rng(seed + rows * 31 + perRow + (banded ? 7 : 0));
  const band = Math.min(rows, 4 * perRow + 1);
  return fromRows(
    rows,
    rng,
    () => Math.min(banded ? band : rows, Math.max(1, Math.round(perRow * (0.5 + rng.next())))),
    (i) => {
      const lo = Math.min(Math.max(0, i - 2 * perRow), rows - band);
      return banded ? lo + rng.int(band) : rng.int(rows);
    },
  );
}

/**
 * A square matrix with power-law row lengths (Pareto, shape 1.5, mean about
 * perRow, capped at rows / 4) and uniformly random columns: the row-length
 * skew the uniform ladder lacks.
 */
export function skewedMatrix(rows: number, perRow: number, seed = 20261203): CsrMatrix {
  const rng = new Rng(seed + rows * 17 + perRow);
  const cap = Math.max(1, Math.floor(rows / 4));
  return fromRows(
    rows,
    rng,
    () => Math.min(cap, Math.max(1, Math.round(perRow / 3 / Math.pow(1 - rng.next(), 1 / 1.5)))),
    () => rng.int(rows),
  );
}

/** Row i gets rowLength() distinct columns drawn by column(i), sorted; values uniform in [-1, 1). */
function fromRows(rows: number, rng: Rng, rowLength: () => number, column: (i: number) => number): CsrMatrix {
  const rowPtr = new Int32Array(rows + 1);
  const cols: number[] = [];
  for (let i = 0; i < rows; i++) {
    const len = rowLength();
    const set = new Set<number>();
    while (set.size < len) set.add(column(i));
    for (const c of [...set].sort((a, b) => a - b)) cols.push(c);
    rowPtr[i + 1] = cols.length;
  }
  const colIdx = Int32Array.from(cols);
  const values = new Float64Array(colIdx.length);
  for (let p = 0; p < values.length; p++) values[p] = rng.uniform(-1, 1);
  return { format: 'csr', rows, cols: rows, rowPtr, colIdx, values };
}
