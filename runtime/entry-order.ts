/**
 * Ordering the stored entries of a sparse matrix held as (row, column) lists:
 * the permutation into row-major or column-major order, the pointer array of
 * that order, and gathering arrays through a permutation. Shared by the
 * reference interpreter and the wasm executor.
 */

export interface EntryList {
  ri: Int32Array;
  ci: Int32Array;
  /** The order the entries are in: 'row' (by row, then column) or 'col'. */
  order: 'row' | 'col';
}

/** Entry permutation sorting the list into `order` (identity when it already is). */
export function permutationTo(p: EntryList, order: 'row' | 'col'): Int32Array {
  const n = p.ri.length;
  const perm = new Int32Array(n);
  for (let k = 0; k < n; k++) perm[k] = k;
  if (p.order === order) return perm;
  const major = order === 'row' ? p.ri : p.ci;
  const minor = order === 'row' ? p.ci : p.ri;
  return perm.sort((a, b) => major[a]! - major[b]! || minor[a]! - minor[b]!);
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
