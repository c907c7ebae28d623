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

/**
 * Compressed sparse rows: row r holds entries rowPtr[r] .. rowPtr[r+1]-1,
 * columns strictly ascending (each position once). tensorProblem checks,
 * before any decision, the arrays' kinds and lengths and the first and
 * last pointer; the pointers in between (non-decreasing integers), the
 * column indices (integers in 0..cols-1) and their order are checked where
 * the pattern is read (runtime/entry-list.ts, as a backend lays it out at
 * run, not explain, and as the reference interpreter binds it), each a
 * DY3051 naming the input. Arrays built by hand may be any typed array of
 * numbers (ACCEPTED_ARRAYS), indices held as floats included, if they are
 * integers.
 */
export interface CsrMatrix {
  format: 'csr';
  rows: number;
  cols: number;
  rowPtr: Int32Array;
  colIdx: Int32Array;
  values: Float64Array;
}

/** Compressed sparse columns: column c holds entries colPtr[c] .. colPtr[c+1]-1, rows strictly ascending (each position once); checked as CsrMatrix is. */
export interface CscMatrix {
  format: 'csc';
  rows: number;
  cols: number;
  colPtr: Int32Array;
  rowIdx: Int32Array;
  values: Float64Array;
}

/**
 * Coordinate list, strictly ascending by row, then column (each position
 * once); checked as CsrMatrix is, the error naming the first entry out of
 * order. Entries in another order are sorted by runtime/io/convert.ts
 * (cooToCsr accepts any order).
 */
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

/** What the runtime reads its arrays as: any typed array whose elements are numbers. */
export const ACCEPTED_ARRAYS =
  'a typed array of numbers (Float64Array, Float32Array, Int32Array, Uint32Array, Int16Array, Uint16Array, Int8Array, Uint8Array or Uint8ClampedArray)';

/**
 * Why array `what` cannot be read element by element as numbers, or
 * undefined when it can. A BigInt64Array or BigUint64Array would reach the
 * first arithmetic on its elements and throw a bare TypeError there (BigInts
 * do not mix with numbers); a DataView has no elements.
 */
function arrayProblem(what: string, a: unknown): string | undefined {
  if (!ArrayBuffer.isView(a))
    return `${what} must be ${ACCEPTED_ARRAYS}, found ${a === null ? 'null' : Array.isArray(a) ? 'a plain array' : typeof a}`;
  // The tag, not instanceof: an array made in another realm (a worker, a vm context) is still told apart.
  const kind = (a as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] ?? 'DataView';
  if (kind === 'BigInt64Array' || kind === 'BigUint64Array' || typeof (a as { length?: unknown }).length !== 'number')
    return `${what} is a ${String(kind)}, which the runtime cannot read as numbers: it must be ${ACCEPTED_ARRAYS}`;
  return undefined;
}

/**
 * What is wrong with a tensor's structure, or undefined when its arrays
 * agree with its shape: O(1), reading each array's kind and length and the
 * first and last pointer only; the guarded runtime asks it before any
 * decision (runtime/engine/inputs.ts bindInputs), an executor driven
 * directly before laying the inputs out (runtime/wasm/layout.ts bindDims),
 * each a DY3051 naming the input. Not checked here, because that reads
 * every index: the pointers in between, the indices (integers inside the
 * shape) and the entries' order (CsrMatrix, CscMatrix, CooMatrix); those
 * are checked where the pattern is read (entry-list.ts, O(nnz), when a
 * backend first lays a tensor out and when the interpreter binds it). Values are not checked at all:
 * NaN and infinities are data. For tensors built by hand; the readers of
 * runtime/io (which refuse a repeated position, DY3009) make well-formed
 * ones, and so do its converters given well-formed ones.
 */
export function tensorProblem(t: Tensor): string | undefined {
  const format = (t as { format?: unknown }).format;
  if (format !== 'dense' && format !== 'csr' && format !== 'csc' && format !== 'coo')
    return `a tensor's format must be 'dense', 'csr', 'csc' or 'coo', found ${format === undefined ? 'none' : (JSON.stringify(format) ?? String(format))}`;
  if (t.format === 'dense') {
    if (!Array.isArray(t.shape) || !t.shape.every((d) => isCount(d)))
      return `a dense tensor's shape must be a list of non-negative integers, found [${String(t.shape)}]`;
    const bad = arrayProblem("a dense tensor's data", t.data);
    if (bad) return bad;
    const size = t.shape.reduce((a, d) => a * d, 1);
    if (t.data.length !== size)
      return `shape [${t.shape.join(', ')}] holds ${size} elements, but data has ${t.data.length}`;
    return undefined;
  }
  if (!isCount(t.rows, MAX_DIM) || !isCount(t.cols, MAX_DIM))
    return `a ${t.rows} x ${t.cols} ${t.format} matrix: rows and cols must be integers in 0..${MAX_DIM}`;
  const badValues = arrayProblem(`a ${t.format} matrix's values`, t.values);
  if (badValues) return badValues;
  const nnz = t.values.length;
  const check = (what: string, a: ArrayLike<number>, length: number): string | undefined =>
    arrayProblem(what, a) ??
    (a.length !== length
      ? `${what} has ${a.length} entries; a ${t.rows} x ${t.cols} ${t.format} matrix with ${nnz} values needs ${length}`
      : undefined);
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
