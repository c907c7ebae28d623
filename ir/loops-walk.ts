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
