/**
 * Edge lists (`.cites`, `.txt`): one "from to" pair of non-negative integer
 * vertex ids per line, whitespace-separated; blank lines and lines starting
 * with '#' or '%' are skipped. The ids of both columns together are numbered
 * 0..n-1 in ascending order; the result is an n x n pattern matrix with row =
 * first column, sorted by row then column, repeated edges kept once.
 */

import { readInputFile } from './files.js';
import type { MtxCoordinate } from './mtx-data.js';
import { sortEntries } from './order.js';
import { ByteCursor } from './scan.js';

const HASH = 35;
const PERCENT = 37;
const MAX_ID = Number.MAX_SAFE_INTEGER;
/** Ids below this plus 8 per edge are numbered through a lookup table; sparser ids by sorting. */
const TABLE_SLACK = 1 << 16;

/** Parses an edge list's text or bytes; `file` names it in errors (DY3012). */
export function parseEdgeList(text: string | Uint8Array, file: string): MtxCoordinate {
  const edges = scanEdges(new ByteCursor(text, file));
  const { n, rowIdx, colIdx } = numberVertices(edges.from, edges.to, edges.maxId);
  const perm = sortEntries(rowIdx, n, colIdx, n).perm ?? Int32Array.from(rowIdx, (_, k) => k);
  const kept = dropRepeats(perm, rowIdx, colIdx);
  const outRow = new Int32Array(kept);
  const outCol = new Int32Array(kept);
  const lines = new Int32Array(kept);
  for (let k = 0; k < kept; k++) {
    const e = perm[k]!;
    outRow[k] = rowIdx[e]!;
    outCol[k] = colIdx[e]!;
    lines[k] = edges.lines[e]!;
  }
  return {
    kind: 'coordinate',
    rows: n,
    cols: n,
    field: 'pattern',
    symmetry: 'general',
    rowIdx: outRow,
    colIdx: outCol,
    values: new Float64Array(kept).fill(1),
    lines,
    file,
    duplicatesDropped: edges.from.length - kept,
  };
}

interface Edges {
  from: Float64Array;
  to: Float64Array;
  lines: Int32Array;
  maxId: number;
}

function scanEdges(cur: ByteCursor): Edges {
  // A line takes at least 4 bytes ("0 1" and a newline).
  const cap = Math.floor((cur.end - cur.pos + 1) / 4) + 1;
  const from = new Float64Array(cap);
  const to = new Float64Array(cap);
  const lines = new Int32Array(cap);
  let m = 0;
  let maxId = -1;
  while (cur.nextContentLine(HASH, PERCENT)) {
    const line = cur.line;
    const a = readId(cur, 'first');
    cur.skipBlanks();
    if (cur.atLineEnd()) cur.fail('DY3012', 'expected two vertex ids on the line ("from to"), found one');
    const b = readId(cur, 'second');
    cur.skipBlanks();
    if (!cur.atLineEnd()) {
      // Lines ended by a carriage return alone (classic Mac OS) read as one line of many tokens.
      if (/\r./.test(cur.lineText(cur.tokenStart)))
        cur.fail('DY3012', 'the lines end in a carriage return alone; expected newlines (LF, or CRLF)');
      cur.fail(
        'DY3012',
        `expected two vertex ids on the line ("from to"), found ${2 + cur.tokensFrom(cur.pos)} tokens`,
      );
    }
    if (cur.pos < cur.end) {
      cur.pos++;
      cur.line++;
    }
    from[m] = a;
    to[m] = b;
    lines[m] = line;
    m++;
    if (a > maxId) maxId = a;
    if (b > maxId) maxId = b;
  }
  return { from: from.subarray(0, m), to: to.subarray(0, m), lines: lines.subarray(0, m), maxId };
}

/**
 * Compacts `perm` (entries sorted by row, then column, stably) to the first
 * entry of each run at the same position, the earliest line; returns how many remain.
 */
function dropRepeats(perm: Int32Array, rowIdx: Int32Array, colIdx: Int32Array): number {
  let kept = 0;
  let prev = -1;
  for (let k = 0; k < perm.length; k++) {
    const e = perm[k]!;
    if (prev >= 0 && rowIdx[prev] === rowIdx[e] && colIdx[prev] === colIdx[e]) continue;
    perm[kept++] = e;
    prev = e;
  }
  return kept;
}

/** Reads and parses an edge list file; DY3010 when it cannot be read. */
export function readEdgeListFile(path: string): MtxCoordinate {
  return parseEdgeList(readInputFile(path), path);
}

function readId(cur: ByteCursor, which: 'first' | 'second'): number {
  const v = cur.readInteger();
  if (v >= 0 && v <= MAX_ID && !Object.is(v, -0)) return v;
  const why = v > MAX_ID ? ` (ids above ${MAX_ID} are not supported)` : '';
  cur.fail(
    'DY3012',
    `expected a non-negative integer vertex id in the ${which} column, found "${cur.tokenText()}"${why}`,
  );
}

interface Numbered {
  n: number;
  rowIdx: Int32Array;
  colIdx: Int32Array;
}

/** Numbers the distinct ids of both columns 0..n-1 in ascending order. */
function numberVertices(from: Float64Array, to: Float64Array, maxId: number): Numbered {
  return maxId < TABLE_SLACK + 8 * from.length ? numberByTable(from, to, maxId) : numberBySorting(from, to);
}

/** Dense enough ids: a lookup table over 0..maxId. */
function numberByTable(from: Float64Array, to: Float64Array, maxId: number): Numbered {
  const m = from.length;
  const table = new Int32Array(maxId + 1);
  for (let k = 0; k < m; k++) {
    table[from[k]!] = 1;
    table[to[k]!] = 1;
  }
  let n = 0;
  for (let id = 0; id <= maxId; id++) if (table[id] !== 0) table[id] = ++n;
  const rowIdx = new Int32Array(m);
  const colIdx = new Int32Array(m);
  for (let k = 0; k < m; k++) {
    rowIdx[k] = table[from[k]!]! - 1;
    colIdx[k] = table[to[k]!]! - 1;
  }
  return { n, rowIdx, colIdx };
}

/** Sparse ids: sort the distinct ids, then binary search. */
function numberBySorting(from: Float64Array, to: Float64Array): Numbered {
  const m = from.length;
  const all = new Float64Array(2 * m);
  all.set(from);
  all.set(to, m);
  all.sort();
  let n = 0;
  for (let k = 0; k < all.length; k++) if (k === 0 || all[k] !== all[k - 1]) all[n++] = all[k]!;
  const ids = all.subarray(0, n);
  const rowIdx = new Int32Array(m);
  const colIdx = new Int32Array(m);
  for (let k = 0; k < m; k++) {
    rowIdx[k] = lowerBound(ids, from[k]!);
    colIdx[k] = lowerBound(ids, to[k]!);
  }
  return { n, rowIdx, colIdx };
}

function lowerBound(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
