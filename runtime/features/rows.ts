/**
 * Row pointers of any sparse format, for the row-based features. CSR is used
 * as it is (nothing copied); CSC and COO are counted from their row indices.
 */

import { cooToCsr, cscToCsr } from '../io/convert.js';
import type { SparseMatrix } from '../tensor.js';

/**
 * Row pointers built by counting row indices, in any entry order, without
 * sorting: O(nnz + rows) time, one Int32Array(rows + 1). Throws RangeError
 * for an index outside 0..rows-1.
 */
export function rowPtrFromRowIndices(rowIdx: Int32Array, rows: number): Int32Array {
  const rowPtr = new Int32Array(rows + 1);
  const n = rowIdx.length;
  for (let k = 0; k < n; k++) {
    const r = rowIdx[k]!;
    if (!(r >= 0 && r < rows)) throw new RangeError(`row index ${r} at entry ${k} is outside 0..${rows - 1}`);
    rowPtr[r + 1]!++;
  }
  for (let r = 0; r < rows; r++) rowPtr[r + 1]! += rowPtr[r]!;
  return rowPtr;
}

/** Row pointers of a sparse matrix: CSR's own, or counted (O(nnz)) for CSC and COO. */
export function rowPtrOf(m: SparseMatrix): Int32Array {
  if (m.format === 'csr') return m.rowPtr;
  return rowPtrFromRowIndices(m.rowIdx, m.rows);
}

/** What tier 2 reads: row pointers and column indices in row-major order, columns ascending per row. */
export interface RowView {
  rows: number;
  cols: number;
  rowPtr: Int32Array;
  colIdx: Int32Array;
}

/**
 * A row-major view for sampling. CSR: itself, O(1). COO already in (row,
 * column) order, as CooMatrix promises: its own column array under counted
 * row pointers (O(nnz) order check and count; `rowPtr` may be passed when the
 * caller already counted it). Other COO, and CSC: a CSR conversion,
 * O(nnz + rows + cols).
 */
export function rowViewOf(m: SparseMatrix, rowPtr?: Int32Array): RowView {
  if (m.format === 'csr') return m;
  if (m.format === 'coo') {
    if (!isRowMajor(m.rowIdx, m.colIdx)) return cooToCsr(m);
    return { rows: m.rows, cols: m.cols, rowPtr: rowPtr ?? rowPtrFromRowIndices(m.rowIdx, m.rows), colIdx: m.colIdx };
  }
  return cscToCsr(m);
}

/** Whether entries are in strictly increasing (row, column) order. */
function isRowMajor(rowIdx: Int32Array, colIdx: Int32Array): boolean {
  for (let k = 1; k < rowIdx.length; k++) {
    const dr = rowIdx[k]! - rowIdx[k - 1]!;
    if (dr < 0 || (dr === 0 && colIdx[k]! <= colIdx[k - 1]!)) return false;
  }
  return true;
}
