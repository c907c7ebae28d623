/**
 * The backend fuzzer's "huge" inputs (backends.test.ts: two programs by
 * default, every one that fits with DYPE_FUZZ_HUGE=1): thousands of rows,
 * mostly empty or of a few entries (sometimes a dozen or more), a few rows
 * of hundreds of entries or at the lengths where a schedule changes, and one
 * or two hub rows (sometimes a hub column) of thousands. They reach what the
 * other sizes never do: merge-path rows that cross several tiles (the
 * carries and the epilogue of its second kernel), adaptive-rows' long-row
 * pass in both forms, warp-per-row over rows of thousands of entries, and
 * the native and wasm split of rows by entries over two threads. A program
 * runs on them only where its checker's bounds still hold at these extents
 * and its work stays small enough (`hugeFits`).
 */
import { type Triple } from '../../helpers/interp-run.js';
import { pick, type Rng } from '../util.js';
import { Checker, paramInfo } from './checker.js';
import { type Assign, type Dim, MAX_TRIPS, type Node, type Program, type Stmt } from './program.js';

/**
 * Rows and columns of a huge input, and its dense widths: past a warp or not, a vector's multiple (4) or not, and
 * past 32 vectors of 4 (136: two passes of a warp's lanes).
 */
export const HUGE_EXTENT = { rows: 6000, k: 136 } as const;
export const HUGE_MIN_ROWS = 2500;
export const HUGE_WIDTHS = [1, 2, 5, 20, 33, 64, 136] as const;
/** Row lengths where a schedule changes (each drawn with one less or more as well). */
const EDGES = [32, 64, 128, 256, 512, 1024, 2048] as const;
/** A hub row (or column) of a huge input has at most this many entries. */
const HUB = 5000;
/** The most entries of a huge pattern (about: a few a row, the long rows and the hubs). */
const NNZ = 30_000;
/** Trips taken for a walk of a row or column nested in another reduction (most are short, some the hub). */
const NESTED_WALK = 200;
/** The most element operations (roughly) a program may take on a huge input: the reference runs them in JavaScript. */
const MAX_WORK = 2e8;

const extentOf = (d: Dim): number => (d === 'k' ? HUGE_EXTENT.k : HUGE_EXTENT.rows);

/** Whether a reduction's body reads a sparse value indexed by its letter (it walks a row or column). */
function walks(body: Node, letter: string, sparse: ReadonlySet<string>): boolean {
  if (body.k === 'ref') return sparse.has(body.name) && body.idx.includes(letter);
  return children(body).some((x) => walks(x, letter, sparse));
}

const children = (e: Node): Node[] =>
  Object.values(e).filter((x): x is Node => !!x && typeof x === 'object' && 'k' in x);

/**
 * Element operations of an expression at the huge extents, per element of its statement: a dense reduction takes
 * its dim's extent, a walk of a sparse row or column a few entries (rows are short on average), a walk nested in
 * another reduction NESTED_WALK (some are the hub's).
 */
function work(e: Node, sparse: ReadonlySet<string>, nested: boolean): number {
  if (e.k === 'red') {
    const trips = walks(e.body, e.idx, sparse) ? (nested ? NESTED_WALK : 8) : extentOf(e.dim);
    return trips * work(e.body, sparse, true);
  }
  return children(e).reduce((a, x) => a + work(x, sparse, nested), 1);
}

/**
 * Whether `p` may run on a huge input: the checker's bounds (f32 exactness of conditions, no i64 past 2^50, no
 * inexact float past 1e6) hold at the huge extents, no dense value has two dims of rows (up to 36M elements), and
 * its work (`work` times the elements assigned, times the trips of its loops) stays under MAX_WORK.
 */
export function hugeFits(p: Program): boolean {
  return hugeWork(p) <= MAX_WORK;
}

/** `hugeFits`' estimate of the work of `p` on a huge input: Infinity where the checker's bounds fail or a dense value is too big. */
export function hugeWork(p: Program): number {
  const vals = [...p.params, ...p.assigned];
  if (vals.some((v) => !v.pattern && v.dims.filter((d) => d !== 'k').length > 1)) return Infinity;
  const check = new Checker(new Map(p.params.map((v) => [v.name, paramInfo(v)])), extentOf);
  for (const s of p.body) check.stmt(s, () => MAX_TRIPS);
  if (check.problems.length > 0) return Infinity;
  const sparse = new Set(vals.filter((v) => v.pattern).map((v) => v.name));
  let total = 0;
  const visit = (ss: readonly Stmt[], trips: number): void => {
    for (const s of ss) {
      if (s.k === 'repeat') {
        const n = 'lit' in s.count ? s.count.lit : 3;
        visit(s.body, trips * (s.until ? MAX_TRIPS : n));
        continue;
      }
      const elements = sparse.has(s.lhs)
        ? NNZ
        : s.idx.reduce((a, l) => a * (l === 'c' ? HUGE_EXTENT.k : HUGE_EXTENT.rows), 1);
      total += trips * elements * work(s.rhs, sparse, false);
    }
  };
  visit(p.body, 1);
  return total;
}

/**
 * The entries of a huge sparse input: many empty rows (runs of them and scattered ones), the others a few entries,
 * a few rows of 129-1100 entries, one or two hub rows of 1500-5000, and sometimes a hub column (a long column of
 * CSC, or a long walk of a transposed op). `value` draws each entry's value.
 */
export function hugePattern(rng: Rng, rows: number, cols: number, value: () => number): Triple[] {
  const byRow: Set<number>[] = Array.from({ length: rows }, () => new Set());
  const empty = new Uint8Array(rows);
  // Runs of empty rows, sometimes one longer than a merge-path tile (2048 diagonals) or a native split.
  for (let runs = 1 + rng.int(3); runs > 0; runs--) {
    const start = rng.int(rows);
    const len = runs === 1 && rng.next() < 0.3 ? 2100 + rng.int(900) : 50 + rng.int(400);
    for (let r = start; r < Math.min(rows, start + len); r++) empty[r] = 1;
  }
  // Mostly a few entries a row, as graphs have; sometimes a dozen or more (the native backend's row pairs).
  const dense = rng.next() < 0.2;
  const scattered = dense ? 0.05 : pick(rng, [0.1, 0.3, 0.5]);
  for (let r = 0; r < rows; r++) if (rng.next() < scattered) empty[r] = 1;
  const mean = dense ? 12 + rng.int(10) : 1 + rng.int(4);
  for (let r = 0; r < rows; r++) {
    if (empty[r]) continue;
    const n = rng.int(2 * mean + 1);
    for (let q = 0; q < n; q++) byRow[r]!.add(rng.int(cols));
  }
  /** `n` distinct columns of row r: a random subset, or a run of neighbours. */
  const fill = (r: number, n: number): void => {
    n = Math.min(n, cols);
    if (rng.next() < 0.3) {
      const start = rng.int(cols - n + 1);
      for (let c = start; c < start + n; c++) byRow[r]!.add(c);
    } else while (byRow[r]!.size < n) byRow[r]!.add(rng.int(cols));
  };
  for (let q = 2 + rng.int(5); q > 0; q--) fill(rng.int(rows), 129 + rng.int(972));
  // Rows at the lengths where a schedule changes: 32 x a group's lanes (adaptive-rows), a block's 256 lanes,
  // adaptive-rows' 1024 entries in the SpMM form, a merge-path tile.
  for (let q = rng.int(4); q > 0; q--) fill(rng.int(rows), pick(rng, EDGES) + rng.int(3) - 1);
  const hubs = 1 + rng.int(2);
  for (let q = 0; q < hubs; q++) {
    // A hub may sit among the empty rows, or at either end.
    const r = pick(rng, [rng.int(rows), rng.int(rows), 0, rows - 1]);
    fill(r, 1500 + rng.int(HUB - 1499));
  }
  if (rng.next() < 0.4) {
    const c = rng.int(cols);
    const n = Math.min(rows, 1500 + rng.int(HUB - 1499));
    for (let q = 0; q < n; q++) byRow[rng.int(rows)]!.add(c);
  }
  const ts: Triple[] = [];
  for (let r = 0; r < rows; r++) for (const c of [...byRow[r]!].sort((a, b) => a - b)) ts.push([r, c, value()]);
  return ts;
}

/** What a report says of a huge pattern: its empty rows, and its longest rows and columns. */
export function hugeShape(rows: number, cols: number, ts: readonly Triple[]): string {
  const perRow = new Int32Array(rows);
  const perCol = new Int32Array(cols);
  for (const [r, c] of ts) {
    perRow[r]!++;
    perCol[c]!++;
  }
  const longest = (n: Int32Array, what: string): string =>
    [...n.keys()]
      .filter((i) => n[i]! > 128)
      .sort((a, b) => n[b]! - n[a]!)
      .slice(0, 4)
      .map((i) => `${what} ${i}: ${n[i]}`)
      .join(', ');
  const empty = perRow.reduce((a, n) => a + (n === 0 ? 1 : 0), 0);
  return `${empty} empty rows; long ${[longest(perRow, 'row'), longest(perCol, 'column')].filter((x) => x).join(', ')}`;
}

/**
 * The shapes of `p`'s statements that fold a sparse pattern's rows (sum, min or max over the entries of row i) into
 * a dense value a result holds or a later statement reads: 'spmv' (a vector) and 'spmm' (rows of the dense width
 * k), the merge-path and adaptive-rows shapes whose long-row paths huge inputs reach.
 */
export function hugeShapes(p: Program): Set<'spmv' | 'spmm'> {
  const sparse = new Set([...p.params, ...p.assigned].filter((v) => v.pattern).map((v) => v.name));
  const rowWalk = (e: Node): boolean =>
    (e.k === 'red' &&
      e.op !== 'any' &&
      e.op !== 'all' &&
      reads(e.body).some((r) => sparse.has(r.name) && r.idx[0] === 'i' && r.idx[1] === e.idx)) ||
    children(e).some(rowWalk);
  const statements = (ss: readonly Stmt[]): Assign[] =>
    ss.flatMap((s) => (s.k === 'assign' ? [s] : statements(s.body)));
  const all = statements(p.body);
  const used = new Set([...p.results.map((v) => v.name), ...all.flatMap((s) => reads(s.rhs).map((r) => r.name))]);
  const out = new Set<'spmv' | 'spmm'>();
  for (const s of all)
    if (used.has(s.lhs) && !sparse.has(s.lhs) && rowWalk(s.rhs)) {
      if (s.idx.length === 1) out.add('spmv');
      else if (s.idx.length === 2 && s.idx[1] === 'c') out.add('spmm');
    }
  return out;
}

/** The reads of values in an expression. */
function reads(e: Node): Extract<Node, { k: 'ref' }>[] {
  return e.k === 'ref' ? [e] : children(e).flatMap(reads);
}
