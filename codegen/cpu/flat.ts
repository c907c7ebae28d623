/**
 * A dense elementwise op over whole rows, printed as one loop over its
 * elements: `for i { for j < K { Y[i*K + j] = f(X[i*K + j], ...) } }`, where
 * every access is at i*K + j and nothing else reads i or j, covers the
 * elements lo*K .. hi*K - 1 of every buffer in order, so
 *   for p in [lo*K, hi*K) { Y[p] = f(X[p], ...) }
 * does the same operations on the same elements, bit for bit. gcc vectorises
 * the row's loop of K for whole vectors only, and wasm's lanes
 * (codegen/wasm/simd.ts) in blocks of vectors: rows of 4 f32 columns ran in
 * the scalar tail, and relu over them runs 5.1-7.3x faster as one loop on the
 * native target, 2.0-2.2x on wasm (docs/PERFORMANCE.md, *Elementwise rows as
 * one loop*). Both backends print it (codegen/cpu/emit.ts, codegen/wasm/emit.ts),
 * and annotate-cost counts such an op's elements as one column loop.
 */
import type { LExpr, LStmt, LoopFunc } from '../../ir/loops.js';
import type { For } from './cprint.js';

/** The row loop's one column loop, its body's accesses rewritten to that loop's variable; undefined without the shape. */
export function flatRows(s: For, f: LoopFunc): For | undefined {
  if (!s.parallel || s.body.length !== 1) return undefined;
  const inner = s.body[0]!;
  if (inner.k !== 'for' || inner.parallel || inner.lo.k !== 'const' || inner.lo.value !== 0) return undefined;
  const width = inner.hi;
  if (width.k !== 'var' || !f.sizes.includes(width.name)) return undefined;
  const i = s.var;
  const j = inner.var;
  const element = (e: LExpr): boolean =>
    e.k === 'bin' &&
    e.op === '+' &&
    e.rhs.k === 'var' &&
    e.rhs.name === j &&
    e.lhs.k === 'bin' &&
    e.lhs.op === '*' &&
    e.lhs.lhs.k === 'var' &&
    e.lhs.lhs.name === i &&
    e.lhs.rhs.k === 'var' &&
    e.lhs.rhs.name === width.name;
  const at: LExpr = { k: 'var', name: j };
  // Undefined where i or j is read other than as the element's index (a broadcast b[j], a row's own value).
  const expr = (e: LExpr): LExpr | undefined => {
    switch (e.k) {
      case 'const':
        return e;
      case 'var':
        return e.name === i || e.name === j ? undefined : e;
      case 'load':
        return element(e.index) ? { ...e, index: at } : undefined;
      case 'bin': {
        const [lhs, rhs] = [expr(e.lhs), expr(e.rhs)];
        return lhs && rhs ? { ...e, lhs, rhs } : undefined;
      }
      case 'un':
      case 'cast': {
        const arg = expr(e.arg);
        return arg ? { ...e, arg } : undefined;
      }
      case 'call': {
        const args = e.args.map(expr);
        return args.every((a) => a !== undefined) ? { ...e, args: args as LExpr[] } : undefined;
      }
      case 'select': {
        const [cond, then, other] = [expr(e.cond), expr(e.then), expr(e.else)];
        return cond && then && other ? { ...e, cond, then, else: other } : undefined;
      }
    }
  };
  const body: LStmt[] = [];
  for (const x of inner.body) {
    if (x.k === 'let') {
      const value = expr(x.value);
      if (!value) return undefined;
      body.push({ ...x, value });
    } else if (x.k === 'store') {
      const value = expr(x.value);
      if (!value || !element(x.index)) return undefined;
      body.push({ ...x, index: at, value });
    } else return undefined;
  }
  return { ...inner, body };
}
