/**
 * From reader output (MtxData) to the runtime's tensors, and between the
 * tensor formats. Sorting is stable, O(nnz + the major dimension) for entries
 * in or near order (runtime/io/order.ts sortEntries).
 * Results never share arrays with their input.
 */

import { InputError } from '../errors.js';
import {
  MAX_ELEMENTS,
  type CooMatrix,
  type CscMatrix,
  type CsrMatrix,
  type DenseTensor,
  type SparseMatrix,
} from '../tensor.js';
import type { MtxCoordinate, MtxData } from './mtx-data.js';
import { duplicateError, sortEntries, type SortedEntries } from './order.js';

// ---------------------------------------------------------------- from MtxData

/** Entry arrays of any MtxData; an array file makes every position an entry. */
function entriesOf(m: MtxData): MtxCoordinate {
  if (m.kind === 'coordinate') return m;
  const n = m.rows * m.cols;
  const rowIdx = new Int32Array(n);
  const colIdx = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    rowIdx[k] = Math.floor(k / m.cols);
    colIdx[k] = k % m.cols;
  }
  return { ...m, kind: 'coordinate', rowIdx, colIdx, values: m.data, lines: new Int32Array(n) };
}

/**
 * Entries ordered by (major, minor), with DY3009 (naming both source lines)
 * when two share a position. ptr is indexed by the major dimension.
 */
function ordered(m: MtxCoordinate, byRow: boolean, file: string): SortedEntries {
  const [major, nMajor, minor, nMinor] = byRow
    ? [m.rowIdx, m.rows, m.colIdx, m.cols]
    : [m.colIdx, m.cols, m.rowIdx, m.rows];
  if (nMajor + 1 > MAX_ELEMENTS)
    throw new InputError(
      'DY3031',
      file,
      m.sizeLine,
      `${m.rows} x ${m.cols} has too many ${byRow ? 'rows' : 'columns'} for compressed storage (at most ${MAX_ELEMENTS - 1})`,
    );
  const sorted = sortEntries(major, nMajor, minor, nMinor);
  const { perm, ptr, minorSorted } = sorted;
  for (let s = 0; s < nMajor; s++)
    for (let k = ptr[s]! + 1, stop = ptr[s + 1]!; k < stop; k++)
      if (minorSorted[k] === minorSorted[k - 1])
        throw duplicateError(m, perm ? perm[k - 1]! : k - 1, perm ? perm[k]! : k, file);
  return sorted;
}

/** src in `perm` order, in an array of its own (a copy for null, the identity). */
function gather<T extends Int32Array | Float64Array>(src: T, perm: Int32Array | null): T {
  if (perm === null) return src.slice() as T;
  const out = new (src.constructor as { new (n: number): T })(perm.length);
  for (let k = 0; k < perm.length; k++) out[k] = src[perm[k]!]!;
  return out;
}

/** CSR of coordinate or array data; `file` names the data in a DY3009 error. */
export function toCsr(m: MtxData, file: string = m.file ?? '<matrix>'): CsrMatrix {
  const e = entriesOf(m);
  const { perm, ptr, minorSorted } = ordered(e, true, file);
  return {
    format: 'csr',
    rows: e.rows,
    cols: e.cols,
    rowPtr: ptr,
    colIdx: minorSorted,
    values: gather(e.values, perm),
  };
}

/** CSC of coordinate or array data. */
export function toCsc(m: MtxData, file: string = m.file ?? '<matrix>'): CscMatrix {
  const e = entriesOf(m);
  const { perm, ptr, minorSorted } = ordered(e, false, file);
  return {
    format: 'csc',
    rows: e.rows,
    cols: e.cols,
    colPtr: ptr,
    rowIdx: minorSorted,
    values: gather(e.values, perm),
  };
}

/** COO sorted by row then column. */
export function toCoo(m: MtxData, file: string = m.file ?? '<matrix>'): CooMatrix {
  const e = entriesOf(m);
  const { perm, ptr, minorSorted } = ordered(e, true, file);
  return {
    format: 'coo',
    rows: e.rows,
    cols: e.cols,
    rowIdx: expandPtr(ptr, minorSorted.length),
    colIdx: minorSorted,
    values: gather(e.values, perm),
  };
}

/** Dense rows x cols tensor (row-major); coordinate data is checked for duplicates first. */
export function toDense(m: MtxData, file: string = m.file ?? '<matrix>'): DenseTensor {
  if (m.rows * m.cols > MAX_ELEMENTS)
    throw new InputError(
      'DY3031',
      file,
      m.sizeLine,
      `a dense ${m.rows} x ${m.cols} tensor would hold ${m.rows * m.cols} elements; at most ${MAX_ELEMENTS} fit`,
    );
  if (m.kind === 'array') return { format: 'dense', shape: [m.rows, m.cols], data: m.data.slice() };
  return sparseToDense(toCoo(m, file));
}

// ------------------------------------------------------- between tensor formats

/** Expands a compressed pointer array to one major index per entry. */
function expandPtr(ptr: Int32Array, nnz: number): Int32Array {
  const idx = new Int32Array(nnz);
  for (let i = 0; i + 1 < ptr.length; i++) idx.fill(i, ptr[i]!, ptr[i + 1]!);
  return idx;
}

/** Compresses entries by (major, minor) in any input order; the order of equal positions is kept. */
function compress(
  major: Int32Array,
  nMajor: number,
  minor: Int32Array,
  nMinor: number,
  values: Float64Array,
): { ptr: Int32Array; idx: Int32Array; vals: Float64Array } {
  const { perm, ptr, minorSorted } = sortEntries(major, nMajor, minor, nMinor);
  return { ptr, idx: minorSorted, vals: gather(values, perm) };
}

export function csrToCoo(m: CsrMatrix): CooMatrix {
  const nnz = m.values.length;
  return {
    format: 'coo',
    rows: m.rows,
    cols: m.cols,
    rowIdx: expandPtr(m.rowPtr, nnz),
    colIdx: m.colIdx.slice(),
    values: m.values.slice(),
  };
}

/** COO in row-major order (CscMatrix entries are column-major, so they are re-sorted). */
export function cscToCoo(m: CscMatrix): CooMatrix {
  return csrToCoo(cscToCsr(m));
}

/** Accepts COO in any order. */
export function cooToCsr(m: CooMatrix): CsrMatrix {
  const { ptr, idx, vals } = compress(m.rowIdx, m.rows, m.colIdx, m.cols, m.values);
  return { format: 'csr', rows: m.rows, cols: m.cols, rowPtr: ptr, colIdx: idx, values: vals };
}

/** Accepts COO in any order. */
export function cooToCsc(m: CooMatrix): CscMatrix {
  const { ptr, idx, vals } = compress(m.colIdx, m.cols, m.rowIdx, m.rows, m.values);
  return { format: 'csc', rows: m.rows, cols: m.cols, colPtr: ptr, rowIdx: idx, values: vals };
}

export function csrToCsc(m: CsrMatrix): CscMatrix {
  const { ptr, idx, vals } = compress(m.colIdx, m.cols, expandPtr(m.rowPtr, m.values.length), m.rows, m.values);
  return { format: 'csc', rows: m.rows, cols: m.cols, colPtr: ptr, rowIdx: idx, values: vals };
}

export function cscToCsr(m: CscMatrix): CsrMatrix {
  const { ptr, idx, vals } = compress(m.rowIdx, m.rows, expandPtr(m.colPtr, m.values.length), m.cols, m.values);
  return { format: 'csr', rows: m.rows, cols: m.cols, rowPtr: ptr, colIdx: idx, values: vals };
}

export function anySparseToCsr(m: SparseMatrix): CsrMatrix {
  if (m.format === 'csr') return { ...m, rowPtr: m.rowPtr.slice(), colIdx: m.colIdx.slice(), values: m.values.slice() };
  return m.format === 'csc' ? cscToCsr(m) : cooToCsr(m);
}

export function anySparseToCsc(m: SparseMatrix): CscMatrix {
  if (m.format === 'csc') return { ...m, colPtr: m.colPtr.slice(), rowIdx: m.rowIdx.slice(), values: m.values.slice() };
  return m.format === 'csr' ? csrToCsc(m) : cooToCsc(m);
}

/** COO sorted by row then column. */
export function anySparseToCoo(m: SparseMatrix): CooMatrix {
  if (m.format === 'csr') return csrToCoo(m);
  if (m.format === 'csc') return cscToCoo(m);
  return csrToCoo(cooToCsr(m));
}

/** Dense rows x cols tensor; positions without an entry are 0. */
export function sparseToDense(m: SparseMatrix): DenseTensor {
  const data = new Float64Array(m.rows * m.cols);
  if (m.format === 'coo') {
    for (let k = 0; k < m.values.length; k++) data[m.rowIdx[k]! * m.cols + m.colIdx[k]!] = m.values[k]!;
  } else if (m.format === 'csr') {
    for (let r = 0; r < m.rows; r++) {
      for (let k = m.rowPtr[r]!; k < m.rowPtr[r + 1]!; k++) data[r * m.cols + m.colIdx[k]!] = m.values[k]!;
    }
  } else {
    for (let c = 0; c < m.cols; c++) {
      for (let k = m.colPtr[c]!; k < m.colPtr[c + 1]!; k++) data[m.rowIdx[k]! * m.cols + c] = m.values[k]!;
    }
  }
  return { format: 'dense', shape: [m.rows, m.cols], data };
}

/** CSR of a rank-2 dense tensor, keeping only the non-zero values (or every value when keepZeros). */
export function denseToCsr(t: DenseTensor, keepZeros = false): CsrMatrix {
  if (t.shape.length !== 2) throw new RangeError(`denseToCsr needs a rank-2 tensor, got shape [${t.shape.join(', ')}]`);
  const [rows, cols] = t.shape as [number, number];
  const rowPtr = new Int32Array(rows + 1);
  let nnz = 0;
  for (let k = 0; k < t.data.length; k++) if (keepZeros || t.data[k] !== 0) nnz++;
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  nnz = 0;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = t.data[r * cols + c]!;
      if (keepZeros || v !== 0) {
        colIdx[nnz] = c;
        values[nnz++] = v;
      }
    }
    rowPtr[r + 1] = nnz;
  }
  return { format: 'csr', rows, cols, rowPtr, colIdx, values };
}
