/**
 * A sparse tensor's stored entries as (row, column) lists, checked: the
 * one reading of CSR, CSC and COO arrays that the wasm executor's layout
 * (runtime/wasm/layout.ts inputPattern) and the reference interpreter
 * (interp/values.ts fromTensor) share, so that the oracle refuses the
 * inputs the backends refuse instead of reading past them.
 */
import type { EntryList } from './entry-order.js';
import { InputError } from './errors.js';
import type { Tensor } from './tensor.js';

/** A malformed pattern (a RangeError of entryListOf or of the sampled features) as `subject`'s DY3051. */
export function malformedInput(subject: string, format: Tensor['format'], e: RangeError): InputError {
  return new InputError('DY3051', subject, undefined, `${e.message}: not a well-formed ${format} matrix`);
}

/** entryListOf for an input named `subject` (`input A`, `--input A`): a malformed pattern is its DY3051. */
export function inputEntryList(subject: string, t: Tensor): EntryList {
  try {
    return entryListOf(t);
  } catch (e) {
    if (e instanceof RangeError) throw malformedInput(subject, t.format, e);
    throw e;
  }
}

/**
 * The entries' row and column indices. Checks what a kernel would read out
 * of bounds with, or lay out wrongly (RangeError): compressed pointers that
 * start anywhere but 0, decrease, pass the entries or are not integers;
 * indices outside the shape or not integers (a Float64Array of indices
 * would be truncated where it is copied into int32 memory); and entries out
 * of the order runtime/tensor.ts promises, strictly ascending. For COO the
 * order is what the layout needs: the CSR layout takes a COO input's
 * entries as they come, so unsorted ones land under the wrong row pointers
 * (a wrong result, silently). A position given twice has no one meaning: a
 * sum (spmv) adds both, a min-plus kernel (sssp) takes the smaller, a
 * densified input keeps the last. No layout or kernel needs a CSR row's
 * columns (a CSC column's rows) in order, but strictly ascending is how one
 * pass sees each position given once, without marking O(cols) columns.
 * O(nnz), in the pass that reads every index anyway.
 */
export function entryListOf(t: Tensor): EntryList {
  switch (t.format) {
    case 'csr': {
      const nnz = t.colIdx.length;
      const ri = new Int32Array(nnz);
      compressed(t.rowPtr, t.rows, nnz, 'rowPtr', 'row', ri);
      ascendingIndices(ri, t.colIdx, t.cols, 'colIdx', 'row', 'columns');
      return { rows: t.rows, cols: t.cols, ri, ci: t.colIdx, order: 'row' };
    }
    case 'csc': {
      const nnz = t.rowIdx.length;
      const ci = new Int32Array(nnz);
      compressed(t.colPtr, t.cols, nnz, 'colPtr', 'column', ci);
      ascendingIndices(ci, t.rowIdx, t.rows, 'rowIdx', 'column', 'rows');
      return { rows: t.rows, cols: t.cols, ri: t.rowIdx, ci, order: 'col' };
    }
    case 'coo':
      cooEntries(t.rowIdx, t.colIdx, t.rows, t.cols);
      return { rows: t.rows, cols: t.cols, ri: t.rowIdx, ci: t.colIdx, order: 'row' };
    case 'dense':
      throw new Error('internal: a dense tensor has no entry list');
  }
}

/** Expands compressed pointers into `out` (entry -> row or column), checking them. */
function compressed(ptr: Int32Array, n: number, nnz: number, name: string, what: string, out: Int32Array): void {
  if (ptr.length < n + 1)
    throw new RangeError(`${name} has ${ptr.length} entries for ${n} ${what}s; expected ${n + 1}`);
  if (ptr[0] !== 0) throw new RangeError(`${name}[0] is ${ptr[0]}; expected 0`);
  for (let i = 0; i < n; i++) {
    const a = ptr[i]!;
    const b = ptr[i + 1]!;
    if (!(b >= a && b <= nnz))
      throw new RangeError(
        `${name}[${i + 1}] = ${b} after ${name}[${i}] = ${a}: ${what} pointers must not decrease nor pass the ${nnz} entries`,
      );
    if (!Number.isInteger(b)) throw new RangeError(`${name}[${i + 1}] is ${b}, not an integer`);
    out.fill(i, a, b);
  }
  if (ptr[n] !== nnz) throw new RangeError(`${name}[${n}] is ${ptr[n]}; expected the ${nnz} entries`);
}

/** Why index `i` (of array `name`, at `k`), found wanting, is not an integer in 0..n-1. */
function indexProblem(i: number, n: number, name: string, k: number, what: string): string {
  return i >= 0 && i < n
    ? `${name}[${k}] is ${i}, not an integer`
    : `${name}[${k}] is ${i}, outside the ${n} ${what} (0..${n - 1})`;
}

/**
 * `minor` (CSR's column indices, CSC's row indices) integers in 0..n-1,
 * strictly ascending within each run of equal `major` (a row of CSR, a
 * column of CSC: non-decreasing, as compressed() expanded it). One pass,
 * the previous entry kept in locals: this runs over every entry of every
 * new pattern.
 */
function ascendingIndices(
  major: Int32Array,
  minor: Int32Array,
  n: number,
  name: string,
  group: string,
  what: string,
): void {
  let g0 = -1;
  let m0 = -1;
  for (let k = 0; k < minor.length; k++) {
    const g = major[k]!;
    const m = minor[k]!;
    // n <= 2^31 - 1, so below n `m | 0` is exact for an integer and drops any fraction.
    if (!(m >= 0 && m < n && (m | 0) === m)) throw new RangeError(indexProblem(m, n, name, k, what));
    if (g !== g0 || m > m0) {
      g0 = g;
      m0 = m;
      continue;
    }
    const before = m === m0 ? `repeats ${name}[${k - 1}]` : `comes after ${name}[${k - 1}] = ${m0}`;
    throw new RangeError(
      `${name}[${k}] = ${m} ${before} in ${group} ${g}: a ${group}'s ${what} must be strictly ascending (each position once)`,
    );
  }
}

/** COO indices integers inside the shape, entries strictly ascending by (row, column); one pass. */
function cooEntries(ri: Int32Array, ci: Int32Array, rows: number, cols: number): void {
  let r0 = -1;
  let c0 = -1;
  for (let k = 0; k < ri.length; k++) {
    const r = ri[k]!;
    const c = ci[k]!;
    if (!(r >= 0 && r < rows && (r | 0) === r)) throw new RangeError(indexProblem(r, rows, 'rowIdx', k, 'rows'));
    if (!(c >= 0 && c < cols && (c | 0) === c)) throw new RangeError(indexProblem(c, cols, 'colIdx', k, 'columns'));
    if (r > r0 || (r === r0 && c > c0)) {
      r0 = r;
      c0 = c;
      continue;
    }
    const at = `entry ${k} (row ${r}, col ${c})`;
    throw new RangeError(
      r === r0 && c === c0
        ? `${at} repeats entry ${k - 1}: COO entries must be distinct, sorted by row, then column`
        : `${at} comes after entry ${k - 1} (row ${r0}, col ${c0}): COO entries must be sorted by row, then column`,
    );
  }
}
