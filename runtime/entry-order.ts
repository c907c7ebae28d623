/**
 * Ordering the stored entries of a sparse matrix held as (row, column) lists:
 * the entries grouped by row or column (pointers and entry ids), and the
 * list with its values as a tensor of any format. Shared by the reference
 * interpreter and the wasm executor.
 */

import { entryOrder } from './io/order.js';
import type { Tensor } from './tensor.js';

export interface EntryList {
  rows: number;
  cols: number;
  ri: Int32Array;
  ci: Int32Array;
  /** The order the entries are in: 'row' (by row, then column) or 'col'. */
  order: 'row' | 'col';
}

/**
 * The entries grouped by row ('row') or column ('col'): the pointer array,
 * and the entry ids in group order (undefined when the list is already in
 * that order, which then costs one sequential pass and no permutation).
 */
export function groupedBy(p: EntryList, by: 'row' | 'col'): { ptr: Int32Array; ids: Int32Array | undefined } {
  const [major, n] = by === 'row' ? [p.ri, p.rows] : [p.ci, p.cols];
  if (p.order === by) {
    const ptr = new Int32Array(n + 1);
    for (let k = 0; k < major.length; k++) ptr[major[k]! + 1]!++;
    for (let i = 0; i < n; i++) ptr[i + 1]! += ptr[i]!;
    return { ptr, ids: undefined };
  }
  const { perm, ptr } = by === 'row' ? entryOrder(p.ri, p.rows, p.ci, p.cols) : entryOrder(p.ci, p.cols, p.ri, p.rows);
  return { ptr, ids: perm ?? undefined };
}

/** A copy of src in `ids` order (src itself in order when ids is undefined). */
function gather<T extends Int32Array | Float64Array>(src: T, ids: Int32Array | undefined): T {
  if (ids === undefined) return src.slice() as T;
  const out = new (src.constructor as { new (n: number): T })(ids.length);
  for (let k = 0; k < ids.length; k++) out[k] = src[ids[k]!]!;
  return out;
}

/**
 * The entries with their values as a tensor of `format`, in arrays of its
 * own: what the interpreter (interp/values.ts toTensor) and the wasm
 * executor (runtime/wasm/layout.ts sparseTensor) hand back for a sparse
 * result.
 */
export function tensorOfEntries(p: EntryList, values: Float64Array, format: Tensor['format']): Tensor {
  switch (format) {
    case 'dense': {
      const data = new Float64Array(p.rows * p.cols);
      for (let k = 0; k < p.ri.length; k++) data[p.ri[k]! * p.cols + p.ci[k]!] = values[k]!;
      return { format: 'dense', shape: [p.rows, p.cols], data };
    }
    case 'csc': {
      const { ptr, ids } = groupedBy(p, 'col');
      return {
        format,
        rows: p.rows,
        cols: p.cols,
        colPtr: ptr,
        rowIdx: gather(p.ri, ids),
        values: gather(values, ids),
      };
    }
    case 'csr': {
      const { ptr, ids } = groupedBy(p, 'row');
      return {
        format,
        rows: p.rows,
        cols: p.cols,
        rowPtr: ptr,
        colIdx: gather(p.ci, ids),
        values: gather(values, ids),
      };
    }
    case 'coo': {
      const { ids } = groupedBy(p, 'row');
      return {
        format,
        rows: p.rows,
        cols: p.cols,
        rowIdx: gather(p.ri, ids),
        colIdx: gather(p.ci, ids),
        values: gather(values, ids),
      };
    }
  }
}
