/** Walking loop-IR expressions (shared by every emitter that inspects a nest). */
import type { LExpr } from './loops.js';

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
