/**
 * Small sparse matrices written as Matrix Market files for tests of operands
 * with patterns of their own: `per` column picks a row (duplicates dropped,
 * sorted), each entry's value from its row, column and pick.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { toDense } from '../../runtime/io/convert.js';
import { parseMatrixMarket } from '../../runtime/io/mtx-read.js';
import { formatMatrixMarketCoordinate } from '../../runtime/io/mtx-write.js';

export function writeRowPattern(
  path: string,
  rows: number,
  cols: number,
  per: number,
  colOf: (i: number, t: number) => number,
  valueOf: (i: number, j: number, t: number) => number,
): string {
  const rowIdx: number[] = [];
  const colIdx: number[] = [];
  const values: number[] = [];
  for (let i = 0; i < rows; i++) {
    const picks = new Map<number, number>();
    for (let t = 0; t < per; t++) {
      const j = colOf(i, t) % cols;
      if (!picks.has(j)) picks.set(j, t);
    }
    for (const [j, t] of [...picks].sort((a, b) => a[0] - b[0])) {
      rowIdx.push(i);
      colIdx.push(j);
      values.push(valueOf(i, j, t));
    }
  }
  const m = {
    format: 'coo' as const,
    rows,
    cols,
    rowIdx: Int32Array.from(rowIdx),
    colIdx: Int32Array.from(colIdx),
    values: Float64Array.from(values),
  };
  writeFileSync(path, formatMatrixMarketCoordinate(m, 'real'));
  return path;
}

/** A Matrix Market file's values as a dense row-major array. */
export const readDense = (path: string): number[] =>
  Array.from(toDense(parseMatrixMarket(readFileSync(path, 'utf8'), path)).data);
