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

/** Largest row or column count of a sparse matrix (indices are int32). */
export const MAX_DIM = 2147483647;

const isCount = (n: unknown, max = Number.MAX_SAFE_INTEGER): n is number =>
  typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= max;
const isArray = (a: unknown): a is ArrayLike<number> =>
  ArrayBuffer.isView(a) && typeof (a as { length?: unknown }).length === 'number';

/**
 * What is wrong with a tensor's structure, or undefined when its arrays
 * agree with its shape: O(1), reading the lengths and the first and last
 * pointer only (the indices themselves are checked where a backend lays the
 * pattern out, runtime/wasm/layout.ts). For tensors built by hand; the
 * readers and converters of runtime/io only make well-formed ones.
 */
export function tensorProblem(t: Tensor): string | undefined {
  if (t.format === 'dense') {
    if (!Array.isArray(t.shape) || !t.shape.every((d) => isCount(d)))
      return `a dense tensor's shape must be a list of non-negative integers, found [${String(t.shape)}]`;
    if (!isArray(t.data)) return 'a dense tensor needs a typed array of data';
    const size = t.shape.reduce((a, d) => a * d, 1);
    if (t.data.length !== size)
      return `shape [${t.shape.join(', ')}] holds ${size} elements, but data has ${t.data.length}`;
    return undefined;
  }
  if (!isCount(t.rows, MAX_DIM) || !isCount(t.cols, MAX_DIM))
    return `a ${t.rows} x ${t.cols} ${t.format} matrix: rows and cols must be integers in 0..${MAX_DIM}`;
  if (!isArray(t.values)) return `a ${t.format} matrix needs a typed array of values`;
  const nnz = t.values.length;
  const check = (what: string, a: unknown, length: number): string | undefined =>
    !isArray(a)
      ? `a ${t.format} matrix needs a typed array ${what}`
      : a.length !== length
        ? `${what} has ${a.length} entries; a ${t.rows} x ${t.cols} ${t.format} matrix with ${nnz} values needs ${length}`
        : undefined;
  const pointers = (what: string, ptr: ArrayLike<number>, n: number): string | undefined =>
    ptr[0] !== 0 || ptr[n] !== nnz
      ? `${what} must run from 0 to nnz = ${nnz}, found ${ptr[0]} .. ${ptr[n]}`
      : undefined;
  switch (t.format) {
    case 'csr':
      return (
        check('rowPtr', t.rowPtr, t.rows + 1) ?? check('colIdx', t.colIdx, nnz) ?? pointers('rowPtr', t.rowPtr, t.rows)
      );
    case 'csc':
      return (
        check('colPtr', t.colPtr, t.cols + 1) ?? check('rowIdx', t.rowIdx, nnz) ?? pointers('colPtr', t.colPtr, t.cols)
      );
    case 'coo':
      return check('rowIdx', t.rowIdx, nnz) ?? check('colIdx', t.colIdx, nnz);
    default:
      return `unknown storage format '${String((t as { format?: unknown }).format)}': expected dense, csr, csc or coo`;
  }
}
