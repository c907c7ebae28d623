/**
 * Values as the reference interpreter holds them. Every sparse value is a
 * list of stored entries (row, column, value); values that share a pattern
 * share the very same `Pattern` object, entry for entry, which is how the
 * interpreter reads "the same position" of S and E in O(1).
 */
import type { Tensor } from '../runtime/tensor.js';
import { inputEntryList } from '../runtime/entry-list.js';
import { groupedBy, tensorOfEntries, type EntryList } from '../runtime/entry-order.js';

/** Row and column of each stored entry, in the order `order` names (checked as runtime/entry-list.ts reads it). */
export type Pattern = EntryList;

export interface DenseVal {
  kind: 'dense';
  shape: number[];
  data: Float64Array;
}

export interface SparseVal {
  kind: 'sparse';
  pattern: Pattern;
  values: Float64Array;
}

export type Val = DenseVal | SparseVal;

/** `t` as a value; a malformed sparse pattern is the DY3051 of the input `src` names (as the backends check theirs). */
export function fromTensor(t: Tensor, src: string): Val {
  switch (t.format) {
    case 'dense':
      return { kind: 'dense', shape: [...t.shape], data: t.data };
    case 'csr':
    case 'csc':
    case 'coo':
      return { kind: 'sparse', pattern: inputEntryList(src, t), values: t.values };
  }
}

export function toTensor(v: Val, format: 'dense' | 'csr' | 'csc' | 'coo'): Tensor {
  if (v.kind === 'dense') return { format: 'dense', shape: [...v.shape], data: v.data };
  return tensorOfEntries(v.pattern, v.values, format);
}

/** Entries grouped by the row (or column) they lie in, built once per pattern. */
export interface Grouping {
  ptr: Int32Array;
  /** Entry ids in group order; undefined when the pattern is already in that order. */
  ids: Int32Array | undefined;
}

const groupings = new WeakMap<Pattern, { row?: Grouping; col?: Grouping }>();

export function groupingOf(p: Pattern, by: 'row' | 'col'): Grouping {
  let g = groupings.get(p);
  if (!g) groupings.set(p, (g = {}));
  const cached = g[by];
  if (cached) return cached;
  const made: Grouping = groupedBy(p, by);
  g[by] = made;
  return made;
}

/** Value stored at (r, c), or `missing` when the pattern has no entry there. */
export function lookup(v: SparseVal, r: number, c: number, missing: number): number {
  const g = groupingOf(v.pattern, 'row');
  let lo = g.ptr[r]!;
  let hi = g.ptr[r + 1]! - 1;
  const ids = g.ids;
  const ci = v.pattern.ci;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const k = ids ? ids[mid]! : mid;
    const col = ci[k]!;
    if (col === c) return v.values[k]!;
    if (col < c) lo = mid + 1;
    else hi = mid - 1;
  }
  return missing;
}
