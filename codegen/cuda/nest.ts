/**
 * Facts about a loop nest that decide which GPU schedules apply: the
 * parallel top loop, reductions (a local set to its identity, then folded by
 * one loop), entry loops over a row-pointer buffer, and free variables.
 * Everything here reads the loop IR; nothing goes back to index notation.
 */
import type { LExpr, LStmt, LoopFunc } from '../../ir/loops.js';
import { walkLExpr } from '../../ir/loops-walk.js';

export type For = Extract<LStmt, { k: 'for' }>;
export type Let = Extract<LStmt, { k: 'let' }>;
export type FoldOp = 'sum' | 'min' | 'max' | 'or' | 'and';

const IDENTITY: Record<FoldOp, number> = { sum: 0, min: Infinity, max: -Infinity, or: 0, and: 1 };

export function exprVars(e: LExpr, out: Set<string> = new Set()): Set<string> {
  walkLExpr(e, (x) => {
    if (x.k === 'var') out.add(x.name);
  });
  return out;
}

export function walkStmts(ss: readonly LStmt[], f: (s: LStmt) => void): void {
  for (const s of ss) {
    f(s);
    if (s.k === 'for') walkStmts(s.body, f);
    else if (s.k === 'if') {
      walkStmts(s.then, f);
      if (s.else) walkStmts(s.else, f);
    }
  }
}

/** Every expression of the statements (bounds, values, indices, conditions). */
export function stmtExprs(ss: readonly LStmt[]): LExpr[] {
  const out: LExpr[] = [];
  walkStmts(ss, (s) => {
    if (s.k === 'for') out.push(s.lo, s.hi);
    else if (s.k === 'let' || s.k === 'set') out.push(s.value);
    else if (s.k === 'store') out.push(s.index, s.value);
    else out.push(s.cond);
  });
  return out;
}

/** Variables declared by the statements (loop variables and lets, at any depth). */
export function declared(ss: readonly LStmt[]): Set<string> {
  const out = new Set<string>();
  walkStmts(ss, (s) => {
    if (s.k === 'for' || s.k === 'let') out.add(s.var);
  });
  return out;
}

/** Variables the statements read but do not declare. */
export function freeVars(ss: readonly LStmt[]): Set<string> {
  const used = new Set<string>();
  for (const e of stmtExprs(ss)) exprVars(e, used);
  walkStmts(ss, (s) => {
    if (s.k === 'set') used.add(s.var);
  });
  const d = declared(ss);
  return new Set([...used].filter((v) => !d.has(v)));
}

export function hasStore(ss: readonly LStmt[]): boolean {
  let found = false;
  walkStmts(ss, (s) => {
    if (s.k === 'store') found = true;
  });
  return found;
}

/** Variables declared outside `ss` that `ss` assigns with `set`. */
export function outerSets(ss: readonly LStmt[]): Set<string> {
  const d = declared(ss);
  const out = new Set<string>();
  walkStmts(ss, (s) => {
    if (s.k === 'set' && !d.has(s.var)) out.add(s.var);
  });
  return out;
}

export function loads(e: LExpr, out: Extract<LExpr, { k: 'load' }>[] = []): Extract<LExpr, { k: 'load' }>[] {
  walkLExpr(e, (x) => {
    if (x.k === 'load') out.push(x);
  });
  return out;
}

/** `acc = fold(acc, x)` with x not reading acc: the fold and x. */
export function foldOf(s: LStmt, acc: string): { op: FoldOp; x: LExpr } | undefined {
  if (s.k !== 'set' || s.var !== acc) return undefined;
  const v = s.value;
  const isAcc = (e: LExpr): boolean => e.k === 'var' && e.name === acc;
  let r: { op: FoldOp; x: LExpr } | undefined;
  if (v.k === 'bin' && isAcc(v.lhs)) {
    if (v.op === '+') r = { op: 'sum', x: v.rhs };
    else if (v.op === '||') r = { op: 'or', x: v.rhs };
    else if (v.op === '&&') r = { op: 'and', x: v.rhs };
  } else if (v.k === 'call' && (v.fn === 'min' || v.fn === 'max') && v.args.length === 2 && isAcc(v.args[0]!))
    r = { op: v.fn, x: v.args[1]! };
  if (r && exprVars(r.x).has(acc)) return undefined;
  return r;
}

export interface Reduction {
  init: Let;
  loop: For;
  op: FoldOp;
}

/**
 * `block[i]` is a loop that folds into exactly one accumulator declared with
 * the fold's identity right before it (`block[i-1]`), writes no buffer and
 * assigns nothing else outside itself: its iterations may be split and the
 * partial results combined in any order.
 */
export function reductionAt(block: readonly LStmt[], i: number): Reduction | undefined {
  const loop = block[i];
  const init = block[i - 1];
  if (!loop || loop.k !== 'for' || !init || init.k !== 'let') return undefined;
  if (hasStore(loop.body)) return undefined;
  const sets = outerSets(loop.body);
  if (sets.size !== 1 || !sets.has(init.var)) return undefined;
  let op: FoldOp | undefined;
  let ok = true;
  let reads = 0;
  walkStmts(loop.body, (s) => {
    if (s.k === 'set' && s.var === init.var) {
      const f = foldOf(s, init.var);
      if (!f || (op !== undefined && op !== f.op)) ok = false;
      else op = f.op;
    }
  });
  for (const e of stmtExprs(loop.body)) if (exprVars(e).has(init.var)) reads++;
  // The only reads of acc are the folds' own left operands.
  let folds = 0;
  walkStmts(loop.body, (s) => {
    if (s.k === 'set' && s.var === init.var) folds++;
  });
  if (!ok || op === undefined || reads !== folds) return undefined;
  if (init.value.k !== 'const' || init.value.value !== IDENTITY[op]) return undefined;
  if (exprVars(loop.lo).has(init.var) || exprVars(loop.hi).has(init.var)) return undefined;
  return { init, loop, op };
}

/** The op's single parallel top loop, or undefined (a scalar op, run serially). */
export function topLoop(f: LoopFunc): For | undefined {
  if (f.body.length !== 1) return undefined;
  const s = f.body[0]!;
  return s.k === 'for' && s.parallel ? s : undefined;
}

/** Whether e reads only sizes and constants (so the host can evaluate it). */
export function onlySizes(e: LExpr, f: LoopFunc): boolean {
  return [...exprVars(e)].every((v) => f.sizes.includes(v)) && loads(e).length === 0;
}

export const isConst0 = (e: LExpr): boolean => e.k === 'const' && e.value === 0;

/** A loop over row `v`'s entries: `ptr[v] .. ptr[v + 1]` for a rowPtr/colPtr buffer; returns the buffer. */
export function entryLoopOf(s: For, v: string, f: LoopFunc): string | undefined {
  const lo = s.lo;
  const hi = s.hi;
  if (lo.k !== 'load' || hi.k !== 'load' || lo.buf !== hi.buf) return undefined;
  const b = f.buffers.find((x) => x.name === lo.buf);
  if (!b || (b.role !== 'rowPtr' && b.role !== 'colPtr')) return undefined;
  if (lo.index.k !== 'var' || lo.index.name !== v) return undefined;
  const h = hi.index;
  if (
    h.k !== 'bin' ||
    h.op !== '+' ||
    h.lhs.k !== 'var' ||
    h.lhs.name !== v ||
    h.rhs.k !== 'const' ||
    h.rhs.value !== 1
  )
    return undefined;
  return b.name;
}

/** The op reads a sparse operand through its row (column) pointers. */
export function isSparseOp(f: LoopFunc): boolean {
  return f.buffers.some((b) => b.role === 'rowPtr' || b.role === 'colPtr');
}

/** Buffers the body writes. */
export function writtenBuffers(f: LoopFunc): Set<string> {
  const out = new Set<string>();
  walkStmts(f.body, (s) => {
    if (s.k === 'store') out.add(s.buf);
  });
  return out;
}
