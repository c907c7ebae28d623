import type { LExpr } from '../../ir/loops.js';

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
