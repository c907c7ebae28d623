/**
 * Ordering of coordinate entries: stable counting sorts (O(nnz + n)) and the
 * duplicate (i,j) check with its error message.
 */

import { InputError } from '../errors.js';
import type { MtxSymmetry } from './mtx-data.js';

export interface Bucketed {
  /** Entry indices ordered by key; equal keys keep the order they were visited in. */
  perm: Int32Array;
  /** Entries with key k are perm[ptr[k]] .. perm[ptr[k+1]-1]. */
  ptr: Int32Array;
}

/** Stable counting sort of entries by `keys` (each in 0..nKeys-1), visiting them in `order` (0..n-1 when null). */
export function countingSort(keys: Int32Array, nKeys: number, order: Int32Array | null = null): Bucketed {
  const n = keys.length;
  const ptr = new Int32Array(nKeys + 1);
  for (let i = 0; i < n; i++) ptr[keys[i]! + 1]!++;
  for (let k = 0; k < nKeys; k++) ptr[k + 1]! += ptr[k]!;
  const next = ptr.slice(0, nKeys);
  const perm = new Int32Array(n);
  if (order === null) {
    for (let i = 0; i < n; i++) perm[next[keys[i]!]!++] = i;
  } else {
    for (let t = 0; t < n; t++) {
      const i = order[t]!;
      perm[next[keys[i]!]!++] = i;
    }
  }
  return { perm, ptr };
}

/** A minor dimension much larger than the entries is sorted by comparison, so memory stays O(nnz). */
function sparseKeys(nKeys: number, n: number): boolean {
  return nKeys > 8 * n + 65536;
}

/** Entry indices ordered by key (stable), by comparison: O(n log n) time, O(n) memory. */
function comparisonOrder(keys: Int32Array): Int32Array {
  const perm = new Int32Array(keys.length);
  for (let i = 0; i < perm.length; i++) perm[i] = i;
  return perm.sort((a, b) => keys[a]! - keys[b]! || a - b);
}

export interface SortedEntries {
  /** Entry indices in sorted order; null when the entries were already in it (the identity). */
  perm: Int32Array | null;
  /** Entries with major index k are at sorted positions ptr[k] .. ptr[k+1]-1. */
  ptr: Int32Array;
  /** minor[perm[k]] for each k: the entries' minor indices in sorted order. */
  minorSorted: Int32Array;
}

/**
 * Orders entries by `major` then `minor` (stable: entries at one position
 * keep their input order); ptr is indexed by major. Files mostly come in
 * one of a few orders, so the work follows the order found rather than
 * always sorting twice (each pass through a permutation is a cache miss per
 * entry at scale):
 * - already by (major, minor): one pass, no permutation;
 * - each major index's entries met with non-decreasing minor (entries by
 *   (minor, major), as SuiteSparse writes them, and expanded symmetric
 *   storage): one counting sort by major;
 * - otherwise two counting sorts, by minor and then by major (by comparison
 *   for the minor when it dwarfs the entries, so memory stays O(nnz)).
 */
export function sortEntries(major: Int32Array, nMajor: number, minor: Int32Array, nMinor: number): SortedEntries {
  const { perm, ptr, spare } = entryOrderWithSpare(major, nMajor, minor, nMinor);
  if (perm === null) return { perm, ptr, minorSorted: minor.slice() };
  // A spent permutation's memory takes the gathered indices: fresh pages cost more than the pass.
  const minorSorted = spare ?? new Int32Array(perm.length);
  for (let k = 0; k < perm.length; k++) minorSorted[k] = minor[perm[k]!]!;
  return { perm, ptr, minorSorted };
}

/** sortEntries' permutation and pointers alone (perm null: already in order). */
export function entryOrder(
  major: Int32Array,
  nMajor: number,
  minor: Int32Array,
  nMinor: number,
): { perm: Int32Array | null; ptr: Int32Array } {
  const { perm, ptr } = entryOrderWithSpare(major, nMajor, minor, nMinor);
  return { perm, ptr };
}

function entryOrderWithSpare(
  major: Int32Array,
  nMajor: number,
  minor: Int32Array,
  nMinor: number,
): { perm: Int32Array | null; ptr: Int32Array; spare: Int32Array | null } {
  const n = major.length;
  if (inOrder(major, minor)) {
    const ptr = new Int32Array(nMajor + 1);
    for (let i = 0; i < n; i++) ptr[major[i]! + 1]!++;
    for (let k = 0; k < nMajor; k++) ptr[k + 1]! += ptr[k]!;
    return { perm: null, ptr, spare: null };
  }
  const byMinor = groupsAscending(major, nMajor, minor)
    ? null
    : sparseKeys(nMinor, n)
      ? comparisonOrder(minor)
      : countingSort(minor, nMinor).perm;
  const { perm, ptr } = countingSort(major, nMajor, byMinor);
  return { perm, ptr, spare: byMinor };
}

/** Non-decreasing by (major, minor). */
function inOrder(major: Int32Array, minor: Int32Array): boolean {
  for (let i = 1; i < major.length; i++) {
    const a = major[i - 1]!;
    const b = major[i]!;
    if (b < a || (b === a && minor[i]! < minor[i - 1]!)) return false;
  }
  return true;
}

/** Each major index's entries, in input order, have non-decreasing minor indices. */
function groupsAscending(major: Int32Array, nMajor: number, minor: Int32Array): boolean {
  const last = new Int32Array(nMajor).fill(-1);
  for (let i = 0; i < major.length; i++) {
    const g = major[i]!;
    const m = minor[i]!;
    if (m < last[g]!) return false;
    last[g] = m;
  }
  return true;
}

/**
 * The first pair of entries found at the same (row, col), earlier entry
 * first, or null. One counting pass by row and a last-entry-per-column mark:
 * O(nnz + rows + cols).
 */
export function findDuplicate(
  rowIdx: Int32Array,
  colIdx: Int32Array,
  rows: number,
  cols: number,
): [number, number] | null {
  if (sparseKeys(rows + cols, rowIdx.length)) {
    // Huge declared dims with few entries: compare sorted neighbours instead of marking columns.
    const perm = new Int32Array(rowIdx.length);
    for (let i = 0; i < perm.length; i++) perm[i] = i;
    perm.sort((a, b) => rowIdx[a]! - rowIdx[b]! || colIdx[a]! - colIdx[b]! || a - b);
    for (let k = 1; k < perm.length; k++) {
      const a = perm[k - 1]!;
      const b = perm[k]!;
      if (rowIdx[a] === rowIdx[b] && colIdx[a] === colIdx[b]) return [a, b];
    }
    return null;
  }
  const { perm, ptr } = countingSort(rowIdx, rows);
  const last = new Int32Array(cols).fill(-1);
  for (let r = 0; r < rows; r++) {
    for (let k = ptr[r]!, stop = ptr[r + 1]!; k < stop; k++) {
      const e = perm[k]!;
      const c = colIdx[e]!;
      const p = last[c]!;
      if (p >= 0 && rowIdx[p] === r) return [p, e];
      last[c] = e;
    }
  }
  return null;
}

interface EntryLines {
  rowIdx: Int32Array;
  colIdx: Int32Array;
  lines: Int32Array;
  symmetry: MtxSymmetry;
}

/**
 * DY3009 for entries a and b at the same position, reported at the later
 * source line and naming both. In expanded symmetric data a mirror entry
 * directly follows its source entry and shares its line.
 */
export function duplicateError(m: EntryLines, a: number, b: number, file: string): InputError {
  const row = m.rowIdx[a]! + 1;
  const col = m.colIdx[a]! + 1;
  const describe = (e: number): string => {
    const mirror = m.symmetry !== 'general' && e > 0 && m.lines[e - 1] === m.lines[e];
    return mirror
      ? `line ${m.lines[e]} (which stores (${col},${row}), mirrored by ${m.symmetry} storage)`
      : `line ${m.lines[e]}`;
  };
  const [first, second] = m.lines[a]! <= m.lines[b]! ? [a, b] : [b, a];
  return new InputError(
    'DY3009',
    file,
    m.lines[second],
    `duplicate entry (${row},${col}): given by ${describe(first)} and again by ${describe(second)}; each position may appear once`,
  );
}
