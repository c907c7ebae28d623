/**
 * Patterns whose gathered rows lie near or far from each row's own: what
 * the spread rule (runtime/wasm/spread.ts `farShare`) tells apart.
 */
import { Rng } from '../../runtime/random.js';
import type { CsrMatrix } from '../../runtime/tensor.js';

/** rows x cols, `perRow` distinct columns a row from `column(i, rng)`, sorted; values uniform in [-1, 1). */
export function patternOf(
  rows: number,
  cols: number,
  perRow: number,
  seed: number,
  column: (i: number, rng: Rng) => number,
): CsrMatrix {
  const rng = new Rng(seed);
  const rowPtr = new Int32Array(rows + 1);
  const idx: number[] = [];
  for (let i = 0; i < rows; i++) {
    const set = new Set<number>();
    while (set.size < Math.min(perRow, cols)) set.add(column(i, rng));
    idx.push(...[...set].sort((a, b) => a - b));
    rowPtr[i + 1] = idx.length;
  }
  const values = Float64Array.from(idx, () => rng.uniform(-1, 1));
  return { format: 'csr', rows, cols, rowPtr, colIdx: Int32Array.from(idx), values };
}

/** Every column within `half` of the row's place on the diagonal (i x cols / rows). */
export const bandedPattern = (rows: number, cols: number, perRow: number, half: number, seed: number): CsrMatrix =>
  patternOf(rows, cols, perRow, seed, (i, rng) => {
    const mid = Math.floor((i * cols) / rows);
    return Math.min(cols - 1, Math.max(0, mid - half + rng.int(2 * half + 1)));
  });

/** Every column within cols / 8 of the point half the columns away from the row's place: at least 3/8 of cols from it. */
export const farPattern = (rows: number, cols: number, perRow: number, seed: number): CsrMatrix =>
  patternOf(rows, cols, perRow, seed, (i, rng) => {
    const mid = Math.floor((i * cols) / rows) + Math.floor(cols / 2);
    return (mid - Math.floor(cols / 8) + rng.int(Math.floor(cols / 4) + 1)) % cols;
  });
