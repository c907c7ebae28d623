/**
 * Ordering the stored entries of a sparse matrix held as (row, column) lists:
 * the permutation into row-major or column-major order, the pointer array of
 * that order, and gathering arrays through a permutation. Shared by the
 * reference interpreter and the wasm executor.
 */

import { entryOrder } from './io/order.js';

export interface EntryList {
  rows: number;
  cols: number;
  ri: Int32Array;
  ci: Int32Array;
  /** The order the entries are in: 'row' (by row, then column) or 'col'. */
  order: 'row' | 'col';
}

/**
 * Entry permutation sorting the list into `order` (identity when it already
 * is): a counting sort by the new major index (runtime/io/order.ts), which
 * leaves each group in the old order's minor order, so O(nnz + rows + cols)
 * where a comparison sort took seconds on millions of entries.
 */
export function permutationTo(p: EntryList, order: 'row' | 'col'): Int32Array {
  if (p.order === order) return identity(p.ri.length);
  const { perm } = order === 'row' ? entryOrder(p.ri, p.rows, p.ci, p.cols) : entryOrder(p.ci, p.cols, p.ri, p.rows);
  return perm ?? identity(p.ri.length);
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

function identity(n: number): Int32Array {
  const perm = new Int32Array(n);
  for (let k = 0; k < n; k++) perm[k] = k;
  return perm;
}

/** Pointer array (count + 1 entries) of the entries taken in `perm` order, grouped by `major`. */
export function pointers(major: Int32Array, perm: Int32Array, count: number): Int32Array {
  const ptr = new Int32Array(count + 1);
  for (let k = 0; k < perm.length; k++) ptr[major[perm[k]!]! + 1]!++;
  for (let i = 0; i < count; i++) ptr[i + 1]! += ptr[i]!;
  return ptr;
}

export function gather<T extends Int32Array | Float64Array>(src: T, perm: Int32Array): T {
  const out = new (src.constructor as { new (n: number): T })(perm.length);
  for (let k = 0; k < perm.length; k++) out[k] = src[perm[k]!]!;
  return out;
}
