/**
 * Rows two at a time: a parallel row loop whose body folds the row's entries
 * into one floating-point accumulator (SpMV's `acc = acc + A[p] * x[j]`,
 * PageRank's and SSSP's aggregations) is printed with two cursors, one
 * walking the rows that hold the first half of the call's entries and one
 * the rest, in lockstep, each with its own accumulator; when a cursor's row
 * ends it stores it and goes on with its next row, and the cursor left when
 * the other's half is done finishes its half alone.
 *
 * Why: a fold must add in order (./folds.ts), so one row is one chain of
 * dependent adds, and while the operands are cached the loop runs at the
 * add's latency; gcc without -ffast-math keeps one chain. Two cursors are
 * two independent chains, and every row still adds its entries in the same
 * order, so results are the one-row loop's bit for bit. Each cursor reads
 * its half's entries front to back, one stream as in the plain loop.
 * Measured against the plain loop (bench/cpu-pairs.ts, docs/PERFORMANCE.md
 * *Rows two at a time*: SpMV at one thread, f32 and f64, medians of three
 * runs) on the eight real matrices that take it: native 1.06-1.35x with the
 * matrix cached (bcsstk13 1.31-1.35x, Groebner_id2003_aug 1.26-1.30x,
 * bcsstk33 1.07x) and 0.85-1.20x with it evicted; wasm (codegen/wasm/emit.ts
 * prints the same loop) 1.00-1.16x and 0.94-1.12x. The halves split where
 * half the entries are behind: split by rows, Groebner_id2003_aug (90% of
 * its entries in its first 12% of rows) left one cursor 88% of the entries
 * and ran 0.93-0.98x in wasm. Short rows lose (in a C harness
 * 0.75-0.88x at 2.1 entries a row, luxembourg_osm, and 0.5-0.8x at 7.1,
 * bayer10), so the function takes the two cursors only where its rows hold
 * PAIR_MIN_ENTRIES entries a row or more on average (two reads of the row
 * pointers a call), and only while the gathered operand fits
 * PAIR_MAX_GATHER_BYTES: past it the misses, not the chain, set the pace.
 * Tried first and dropped: rows i and i + 1 in lockstep, which ran the f64 SpMV 1.00-1.43x as fast as the plain loop
 * with the matrix cached but 0.46-0.56x as fast with it evicted (bcsstk33,
 * Groebner_id2003_aug, a C harness; why was not found, this host has no
 * performance counters).
 */
import type { LoopFunc, LStmt } from '../../ir/loops.js';
import { entryLoopOf, reductionAt } from '../cuda/nest.js';
import type { CStmtPrinter, For } from './cprint.js';

/** Entries a row, on average over a call's rows, from which two cursors walk them (between 7.1, a loss, and 15.9, a gain). */
export const PAIR_MIN_ENTRIES = 12;

/** Bytes of the gathered operand (x) up to which the caches hold it: between the 458 KB and 4 MB measured. */
export const PAIR_MAX_GATHER_BYTES = 1 << 20;

/** The most rows (standing for the gathered operand's length: the function is not given it, the graph kernels' matrices are square) a fold of `elem` takes the two cursors at. */
export function pairMaxRows(elem: 'f32' | 'f64'): number {
  return Math.floor(PAIR_MAX_GATHER_BYTES / (elem === 'f32' ? 4 : 8));
}

/**
 * Whether a call over `rows` rows holding `entries` entries, of an op whose rows size is `allRows`, runs the two
 * cursors: the test both emitters print (pairedLoop here, codegen/wasm/emit.ts pairedFor), for callers that
 * report it.
 */
export function takesTwoCursors(rows: number, entries: number, allRows: number, elem: 'f32' | 'f64'): boolean {
  return rows >= 2 && allRows <= pairMaxRows(elem) && entries >= PAIR_MIN_ENTRIES * rows;
}

/** A row loop whose rows can run two at a time: the fold's accumulator, the fold, statements after it. */
export interface PairedRows {
  top: For;
  init: Extract<LStmt, { k: 'let' }>;
  /** The accumulator's type. */
  elem: 'f32' | 'f64';
  loop: For;
  post: readonly LStmt[];
  /** The buffer of the row pointers the fold's entry loop runs between. */
  ptr: string;
}

const hasFor = (ss: readonly LStmt[]): boolean =>
  ss.some((s) => s.k === 'for' || (s.k === 'if' && (hasFor(s.then) || hasFor(s.else ?? []))));

/** Whether `top`, a parallel loop of `f`, has the shape: one float fold over the row's entries (no loop inside), then straight-line statements. */
export function pairedRows(top: For, f: LoopFunc): PairedRows | undefined {
  if (!top.parallel) return undefined;
  const body = top.body;
  const loops = body.flatMap((s, i) => (hasFor([s]) ? [i] : []));
  // Straight-line statements before the fold would have to live across rows: none (SpMV, PageRank, SSSP have none).
  if (loops.length !== 1 || loops[0] !== 1) return undefined;
  const at = 1;
  const r = reductionAt(body, at);
  const elem = r?.init.type;
  if (!r || (elem !== 'f32' && elem !== 'f64') || hasFor(r.loop.body)) return undefined;
  const ptr = entryLoopOf(r.loop, top.var, f);
  if (ptr === undefined) return undefined;
  return { top, init: r.init, elem, loop: r.loop, post: body.slice(at + 1), ptr };
}

/** Variables a list of statements declares (lets and loop variables, at any depth). */
function declared(ss: readonly LStmt[], out = new Set<string>()): Set<string> {
  for (const s of ss) {
    if (s.k === 'let') out.add(s.var);
    else if (s.k === 'for') {
      out.add(s.var);
      declared(s.body, out);
    } else if (s.k === 'if') {
      declared(s.then, out);
      declared(s.else ?? [], out);
    }
  }
  return out;
}

/**
 * C text of the row loop over [lo, hi) (C expressions of type long long): two cursors, one over the first half of
 * the rows and one over the second, where the rows hold PAIR_MIN_ENTRIES entries a row or more; the plain loop
 * otherwise. Iterations of a parallel loop are independent, so the order in which rows finish changes no result.
 */
export function pairedLoop(
  r: PairedRows,
  sp: CStmtPrinter,
  ind: string,
  lo: string,
  hi: string,
  rows: string,
): string[] {
  const p = sp.p;
  const P = p.names.buf(r.ptr).c;
  const ia = p.var(r.top.var);
  const [mid, end, ib, pa, ea, pb, eb, n, stop, t, top, c] = [
    'mid',
    'end',
    'i',
    'pa',
    'ea',
    'pb',
    'eb',
    'n',
    'stop',
    't',
    'top',
    'c',
  ].map((x) => sp.fresh(x));
  // The second cursor's copy: every variable the row body declares renamed, its row ib, its entry pb.
  const renameB = new Map<string, string>([[r.top.var, ib!]]);
  for (const v of declared(r.top.body)) renameB.set(v, sp.fresh(`b_${v.replace(/[^A-Za-z0-9_]/g, '_')}`));
  renameB.set(r.loop.var, pb!);
  const a = sp.over(p.with(new Map([[r.loop.var, pa!]])));
  const b = sp.over(p.with(renameB));
  const reset = { k: 'set', var: r.init.var, value: r.init.value } as const;
  const in2 = `${ind}  `;
  const in3 = `${in2}  `;
  const in4 = `${in3}  `;
  // A cursor's row is done: its statements after the fold, then the next row (or the end of its half).
  const next = (q: CStmtPrinter, i: string, e: string, last: string): string[] => [
    `${in3}if (${q.p.var(r.loop.var)} == ${e}) {`,
    ...q.block(r.post, in4),
    ...q.stmt(reset, in4),
    `${in4}if (++${i} == ${last}) break;`,
    `${in4}${e} = ${q.p.as(r.loop.hi, 'index')};`,
    `${in3}}`,
  ];
  // A cursor left when the other's half is done: its row's last entries, then its half's rows as the plain loop.
  const finish = (q: CStmtPrinter, i: string, e: string, last: string): string[] => [
    `${in2}if (${i} < ${last}) {`,
    `${in3}for (; ${q.p.var(r.loop.var)} < ${e}; ++${q.p.var(r.loop.var)}) {`,
    ...q.block(r.loop.body, in4),
    `${in3}}`,
    ...q.block(r.post, in3),
    `${in3}for (++${i}; ${i} < ${last}; ++${i}) {`,
    ...q.over(q.p.with(new Map([[r.loop.var, p.var(r.loop.var)]]))).block(r.top.body, in4),
    `${in3}}`,
    `${in2}}`,
  ];
  return [
    `${ind}if (${hi} - ${lo} >= 2 && ${rows} <= ${pairMaxRows(r.elem)} &&`,
    `${ind}    (long long)(${P}[${hi}] - ${P}[${lo}]) >= ${PAIR_MIN_ENTRIES}LL * (${hi} - ${lo})) {`,
    // The halves split at the row where half the range's entries are behind: a skewed matrix (Groebner_id2003_aug,
    // 90% of its entries in its first 12% of rows) split by rows left one cursor 88% of the entries.
    `${in2}const int ${end} = (int)${hi}, ${t} = ${P}[${lo}] + (${P}[${hi}] - ${P}[${lo}]) / 2;`,
    `${in2}int ${mid} = (int)${lo} + 1, ${top} = ${end} - 1;`,
    `${in2}while (${mid} < ${top}) {`,
    `${in3}const int ${c} = ${mid} + (${top} - ${mid}) / 2;`,
    `${in3}if (${P}[${c}] < ${t}) ${mid} = ${c} + 1;`,
    `${in3}else ${top} = ${c};`,
    `${in2}}`,
    `${in2}int ${ia} = (int)${lo}, ${ib} = ${mid};`,
    `${in2}int ${pa} = ${a.p.as(r.loop.lo, 'index')}, ${ea} = ${a.p.as(r.loop.hi, 'index')};`,
    `${in2}int ${pb} = ${b.p.as(r.loop.lo, 'index')}, ${eb} = ${b.p.as(r.loop.hi, 'index')};`,
    ...a.stmt(r.init, in2),
    ...b.stmt(r.init, in2),
    `${in2}for (;;) {`,
    `${in3}const int ${n} = ${ea} - ${pa} < ${eb} - ${pb} ? ${ea} - ${pa} : ${eb} - ${pb};`,
    `${in3}for (const int ${stop} = ${pa} + ${n}; ${pa} < ${stop}; ++${pa}, ++${pb}) {`,
    `${in4}{`,
    ...a.block(r.loop.body, `${in4}  `),
    `${in4}}`,
    `${in4}{`,
    ...b.block(r.loop.body, `${in4}  `),
    `${in4}}`,
    `${in3}}`,
    ...next(a, ia, ea!, mid!),
    ...next(b, ib!, eb!, end!),
    `${in2}}`,
    ...finish(a, ia, ea!, mid!),
    ...finish(b, ib!, eb!, end!),
    `${ind}} else {`,
    ...sp.forStmt(r.top, in2, `(int)${lo}`, `(int)${hi}`),
    `${ind}}`,
  ];
}
