/**
 * Row pointers of generated power-law patterns for the sampled row
 * statistics (runtime/features/sampled-rows.ts read row pointers only, so no
 * column is drawn): row lengths floor(xmin x U^(-1/alpha)), a Pareto law of
 * shape alpha as the degrees of a scale-free graph, at most `rows` each.
 * Shared by bench/features-sampled.ts, bench/power-law-picks.ts and
 * test/features/ (power-law, sampled-properties, sampled-corners), with
 * the builders of such row-pointer patterns.
 */
import { Rng } from '../runtime/random.js';
import type { CsrMatrix } from '../runtime/tensor.js';

export interface PowerLawRows {
  rows: number;
  /** Shape: 1.2-1.5 as web and social graphs' degrees (infinite variance below 2), 2.1 and above lighter. */
  alpha: number;
  /** The shortest row. */
  xmin: number;
  seed: number;
  /** Rows in drawn order, or sorted longest first (hubs numbered first, as after a degree sort). */
  order: 'drawn' | 'longest-first';
}

/** The pattern's row pointers in a CSR whose column and value arrays are empty (only row statistics may read it). */
export function powerLawRows(p: PowerLawRows): CsrMatrix {
  const rng = new Rng(p.seed);
  const len = new Int32Array(p.rows);
  for (let r = 0; r < p.rows; r++)
    len[r] = Math.min(p.rows, Math.floor(p.xmin / Math.pow(1 - rng.uniform(0, 1), 1 / p.alpha)));
  if (p.order === 'longest-first') len.sort().reverse();
  return lengthsPattern(len, p.rows);
}

/** A CSR of row pointers alone (empty column and value arrays): only row statistics may read it. */
export function rowPointerPattern(rowPtr: Int32Array, cols: number): CsrMatrix {
  return {
    format: 'csr',
    rows: rowPtr.length - 1,
    cols,
    rowPtr,
    colIdx: new Int32Array(0),
    values: new Float64Array(0),
  };
}

/** rowPointerPattern of rows of these lengths; `cols` defaults to the longest row (at least 1). */
export function lengthsPattern(lengths: ArrayLike<number>, cols?: number): CsrMatrix {
  const rowPtr = new Int32Array(lengths.length + 1);
  let longest = 1;
  for (let r = 0; r < lengths.length; r++) {
    const next = rowPtr[r]! + lengths[r]!;
    if (next > 2147483647) throw new RangeError(`a pattern of ${lengths.length} rows passes 2^31 - 1 entries`);
    rowPtr[r + 1] = next;
    longest = Math.max(longest, lengths[r]!);
  }
  return rowPointerPattern(rowPtr, cols ?? longest);
}

/** A name for the pattern in tables. */
export const powerLawName = (p: PowerLawRows): string =>
  `power-law a=${p.alpha} ${p.rows >= 1e6 ? `${p.rows / 1e6}M` : `${p.rows / 1e3}k`} rows${p.order === 'longest-first' ? ', longest first' : ''}`;

/** The patterns the benches measure: web- and social-graph shapes (1.2, 1.5), a lighter tail (2.1), hubs numbered first. */
export const POWER_LAW_PATTERNS: PowerLawRows[] = [
  { rows: 100_000, alpha: 1.5, xmin: 3, seed: 11, order: 'drawn' },
  { rows: 300_000, alpha: 1.2, xmin: 3, seed: 12, order: 'drawn' },
  { rows: 1_000_000, alpha: 1.5, xmin: 3, seed: 13, order: 'drawn' },
  { rows: 1_000_000, alpha: 2.1, xmin: 3, seed: 14, order: 'drawn' },
  { rows: 1_000_000, alpha: 1.5, xmin: 3, seed: 15, order: 'longest-first' },
];
