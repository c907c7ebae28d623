/**
 * Implicit summation (DESIGN.md section 3): an index on the right side that is
 * neither on the left nor bound by an explicit reduction is summed over the
 * smallest subexpression holding all its occurrences. Factors of that
 * subexpression that do not mention the summed indices are hoisted out of the
 * sum (d * A[i,j] * r[j] becomes d * sum(j: A[i,j] * r[j])), which keeps the
 * core reduction recognisable to classification.
 */
import { children, withChildren, type Expr } from '../ir/expr.js';

/** Occurrences of each free (not reduction-bound) index in a subtree. */
function countFree(e: Expr, bound: ReadonlySet<string>, into: Map<string, number>): void {
  if (e.k === 'load') {
    for (const i of e.idx) if (!bound.has(i)) into.set(i, (into.get(i) ?? 0) + 1);
    return;
  }
  const inner = e.k === 'reduce' ? new Set([...bound, ...e.idx]) : bound;
  for (const c of children(e)) countFree(c, inner, into);
}

function mentions(e: Expr, idx: ReadonlySet<string>): boolean {
  const m = new Map<string, number>();
  countFree(e, new Set(), m);
  return [...m.keys()].some((i) => idx.has(i));
}

function factors(e: Expr): Expr[] {
  return e.k === 'bin' && e.op === '*' ? [...factors(e.lhs), ...factors(e.rhs)] : [e];
}

function product(fs: Expr[]): Expr {
  return fs.reduce((acc, f) => ({ k: 'bin', op: '*', lhs: acc, rhs: f }));
}

function makeSum(idx: string[], body: Expr): Expr {
  const sumIdx = new Set(idx);
  const fs = factors(body);
  const outside = fs.filter((f) => !mentions(f, sumIdx));
  const inside = fs.filter((f) => mentions(f, sumIdx));
  const span = body.span;
  const sum: Expr = { k: 'reduce', op: 'sum', idx, body: product(inside), ...(span ? { span } : {}) };
  return outside.length === 0 ? sum : { k: 'bin', op: '*', lhs: product(outside), rhs: sum, ...(span ? { span } : {}) };
}

export function insertImplicitSums(e: Expr, lhs: ReadonlySet<string>): Expr {
  const total = new Map<string, number>();
  countFree(e, new Set(), total);
  const implicit = [...total.keys()].filter((i) => !lhs.has(i));
  if (implicit.length === 0) return e;
  const go = (n: Expr, bound: ReadonlySet<string>): Expr => {
    const cs = children(n);
    const inner = n.k === 'reduce' ? new Set([...bound, ...n.idx]) : bound;
    const rebuilt = cs.length === 0 ? n : withChildren(n, cs.map((c) => go(c, inner)));
    const here = new Map<string, number>();
    countFree(n, bound, here);
    const childHolds = (i: string): boolean =>
      cs.some((c) => {
        const m = new Map<string, number>();
        countFree(c, inner, m);
        return m.get(i) === total.get(i);
      });
    const lca = implicit.filter((i) => here.get(i) === total.get(i) && !childHolds(i) && !bound.has(i));
    return lca.length === 0 ? rebuilt : makeSum(lca, rebuilt);
  };
  return go(e, new Set());
}
