import type { LExpr } from '../../ir/loops.js';

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

/** Index of the first load of `buf` in e (depth first; loads inside another load's index are not searched). */
export function firstLoadIndex(e: LExpr, buf: string): LExpr | undefined {
  switch (e.k) {
    case 'const':
    case 'var':
      return undefined;
    case 'load':
      return e.buf === buf ? e.index : undefined;
    case 'un':
    case 'cast':
      return firstLoadIndex(e.arg, buf);
    case 'bin':
      return firstLoadIndex(e.lhs, buf) ?? firstLoadIndex(e.rhs, buf);
    case 'select':
      return firstLoadIndex(e.cond, buf) ?? firstLoadIndex(e.then, buf) ?? firstLoadIndex(e.else, buf);
    case 'call':
      for (const a of e.args) {
        const r = firstLoadIndex(a, buf);
        if (r) return r;
      }
      return undefined;
  }
}
