/**
 * In-memory tensors as the runtime and the reference interpreter hold them.
 * Values are float64 whatever the declared dtype: the reference semantics are
 * float64, and backends convert at their own boundary.
 */

export type StorageFormat = 'dense' | 'csr' | 'csc' | 'coo';

/** Row-major dense tensor of any rank (rank 0 is a scalar, data.length 1). */
export interface DenseTensor {
  format: 'dense';
  shape: number[];
  data: Float64Array;
}

/** Compressed sparse rows: row r holds entries rowPtr[r] .. rowPtr[r+1]-1, columns ascending. */
export interface CsrMatrix {
  format: 'csr';
  rows: number;
  cols: number;
  rowPtr: Int32Array;
  colIdx: Int32Array;
  values: Float64Array;
}

/** Compressed sparse columns: column c holds entries colPtr[c] .. colPtr[c+1]-1, rows ascending. */
export interface CscMatrix {
  format: 'csc';
  rows: number;
  cols: number;
  colPtr: Int32Array;
  rowIdx: Int32Array;
  values: Float64Array;
}

/** Coordinate list, sorted by row then column. */
export interface CooMatrix {
  format: 'coo';
  rows: number;
  cols: number;
  rowIdx: Int32Array;
  colIdx: Int32Array;
  values: Float64Array;
}

export type SparseMatrix = CsrMatrix | CscMatrix | CooMatrix;

/**
 * The most elements one array may hold: dense tensors, and the row (column)
 * pointers of CSR (CSC). 2^28 float64 values are 2 GiB; anything larger is
 * refused with DY3031 rather than crashing the allocator.
 */
export const MAX_ELEMENTS = 2 ** 28;
export type Tensor = DenseTensor | SparseMatrix;

export function nnzOf(m: SparseMatrix): number {
  return m.values.length;
}
