/** Walking loop-IR expressions (shared by every emitter that inspects a nest). */
import type { LExpr, LStmt } from './loops.js';

/** Calls f on e and then on each subexpression, depth first, operands left to right. */
export function walkLExpr(e: LExpr, f: (e: LExpr) => void): void {
  f(e);
  switch (e.k) {
    case 'const':
    case 'var':
      return;
    case 'load':
      return walkLExpr(e.index, f);
    case 'un':
    case 'cast':
      return walkLExpr(e.arg, f);
    case 'bin':
      walkLExpr(e.lhs, f);
      return walkLExpr(e.rhs, f);
    case 'select':
      walkLExpr(e.cond, f);
      walkLExpr(e.then, f);
      return walkLExpr(e.else, f);
    case 'call':
      for (const a of e.args) walkLExpr(a, f);
  }
}

/** Calls f on every expression of the statements (and each subexpression), in order, nested statements included. */
export function walkLStmts(body: readonly LStmt[], f: (e: LExpr) => void): void {
  for (const s of body) {
    switch (s.k) {
      case 'for':
        walkLExpr(s.lo, f);
        walkLExpr(s.hi, f);
        walkLStmts(s.body, f);
        break;
      case 'let':
      case 'set':
        walkLExpr(s.value, f);
        break;
      case 'store':
        walkLExpr(s.index, f);
        walkLExpr(s.value, f);
        break;
      case 'if':
        walkLExpr(s.cond, f);
        walkLStmts(s.then, f);
        if (s.else) walkLStmts(s.else, f);
        break;
    }
  }
}

/** Whether any expression of the statements loads from buffer `buf`. */
export function loadsFrom(body: readonly LStmt[], buf: string): boolean {
  let hit = false;
  walkLStmts(body, (e) => void (hit ||= e.k === 'load' && e.buf === buf));
  return hit;
}

/** Whether e reads any of the names. */
export function mentionsAny(e: LExpr, names: ReadonlySet<string>): boolean {
  let hit = false;
  walkLExpr(e, (x) => {
    if (x.k === 'var' && names.has(x.name)) hit = true;
  });
  return hit;
}

/** Whether e reads memory (a load anywhere in it). */
export function hasLoad(e: LExpr): boolean {
  let hit = false;
  walkLExpr(e, (x) => {
    if (x.k === 'load') hit = true;
  });
  return hit;
}

/**
 * The coefficient of k in an index expression affine in k with literal factors (+, -, and * by a literal of
 * index type): 0 where e mentions none of `varying` (k among them), null where it is not of that form or
 * mentions another name of `varying`.
 */
export function indexCoefficient(e: LExpr, k: string, varying: ReadonlySet<string>): number | null {
  if (!mentionsAny(e, varying)) return 0;
  if (e.k === 'var') return e.name === k ? 1 : null;
  if (e.k !== 'bin' || e.type !== 'index') return null;
  const a = indexCoefficient(e.lhs, k, varying);
  const b = indexCoefficient(e.rhs, k, varying);
  if (a === null || b === null) return null;
  if (e.op === '+') return a + b;
  if (e.op === '-') return a - b;
  if (e.op === '*') {
    if (a === 0 && e.lhs.k === 'const') return e.lhs.value * b;
    if (b === 0 && e.rhs.k === 'const') return e.rhs.value * a;
  }
  return null;
}
