/**
 * Implicit summation (docs/LANGUAGE.md, "Sums and reductions"): an index on the right side that is
 * neither on the left nor bound by an explicit reduction is summed over the
 * smallest subexpression holding all its occurrences. Factors of that
 * subexpression that do not mention the summed indices are hoisted out of the
 * sum (d * A[i,j] * r[j] becomes d * sum(j: A[i,j] * r[j])), which keeps the
 * core reduction recognisable to classification.
 */
import type { Span } from '../ir/diagnostics.js';
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

/**
 * The factors multiplied again. Each product takes the span of the expression the factors came from (`from`, an
 * original node of the source): an error in it points at that product, not at the whole statement, and never at a
 * stretch that starts inside one bracket and ends in another (factors hoisted out of the sum come from different
 * places).
 */
function product(fs: Expr[], from: Span | undefined): Expr {
  return fs.reduce((acc, f) => ({ k: 'bin', op: '*', lhs: acc, rhs: f, ...(from ? { span: from } : {}) }));
}

function makeSum(idx: string[], body: Expr): Expr {
  const sumIdx = new Set(idx);
  const fs = factors(body);
  const outside = fs.filter((f) => !mentions(f, sumIdx));
  const inside = fs.filter((f) => mentions(f, sumIdx));
  const span = body.span;
  const sum: Expr = { k: 'reduce', op: 'sum', idx, body: product(inside, span), ...(span ? { span } : {}) };
  return outside.length === 0
    ? sum
    : { k: 'bin', op: '*', lhs: product(outside, span), rhs: sum, ...(span ? { span } : {}) };
}

export function insertImplicitSums(e: Expr, lhs: ReadonlySet<string>): Expr {
  const total = new Map<string, number>();
  countFree(e, new Set(), total);
  const implicit = [...total.keys()].filter((i) => !lhs.has(i));
  if (implicit.length === 0) return e;
  const go = (n: Expr, bound: ReadonlySet<string>): Expr => {
    const cs = children(n);
    const inner = n.k === 'reduce' ? new Set([...bound, ...n.idx]) : bound;
    const rebuilt =
      cs.length === 0
        ? n
        : withChildren(
            n,
            cs.map((c) => go(c, inner)),
          );
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

type Load = Extract<Expr, { k: 'load' }>;

/**
 * An implicit sum confined to one operand of a product: its index occurs
 * only in `load`, a factor of `product` whose other factors index tensors of
 * their own, so that operand is summed on its own before the product
 * (`A[i, j] * x[k]` is sum(j: A[i, j]) * sum(k: x[k])). Usually a typo for
 * an index another operand has; explicit sums are taken as meant.
 */
export interface ConfinedSum {
  /** The product whose factor is summed alone. */
  product: Expr;
  /** Each confined index with the one access it occurs in. */
  confined: { index: string; load: Load }[];
  /** The other factors' accesses that have indices. */
  others: Load[];
}

function loadsOf(e: Expr, out: Load[] = []): Load[] {
  if (e.k === 'load') out.push(e);
  else for (const c of children(e)) loadsOf(c, out);
  return out;
}

/** Implicit sums of `e` (left-side indices `lhs`) confined to one operand of a product, one entry per product. */
export function confinedSums(e: Expr, lhs: ReadonlySet<string>): ConfinedSum[] {
  const total = new Map<string, number>();
  countFree(e, new Set(), total);
  const implicit = [...total.keys()].filter((i) => !lhs.has(i));
  if (implicit.length === 0) return [];
  // Each load with its free indices, and each node's parent.
  const parent = new Map<Expr, Expr>();
  const holders = new Map<string, Set<Load>>();
  const walk = (n: Expr, bound: ReadonlySet<string>): void => {
    if (n.k === 'load') {
      for (const i of n.idx) if (!bound.has(i)) holders.set(i, (holders.get(i) ?? new Set()).add(n));
      return;
    }
    const inner = n.k === 'reduce' ? new Set([...bound, ...n.idx]) : bound;
    for (const c of children(n)) {
      parent.set(c, n);
      walk(c, inner);
    }
  };
  walk(e, new Set());
  const isProduct = (n: Expr | undefined): boolean => n !== undefined && n.k === 'bin' && n.op === '*';
  const byProduct = new Map<Expr, ConfinedSum>();
  for (const i of implicit) {
    const loads = holders.get(i);
    if (!loads || loads.size !== 1) continue;
    const load = [...loads][0]!;
    if (!isProduct(parent.get(load))) continue;
    let top = parent.get(load)!;
    while (isProduct(parent.get(top))) top = parent.get(top)!;
    const others = factors(top)
      .filter((f) => f !== load)
      .flatMap((f) => loadsOf(f))
      .filter((l) => l.idx.length > 0);
    if (others.length === 0) continue;
    const entry = byProduct.get(top) ?? { product: top, confined: [], others };
    entry.confined.push({ index: i, load });
    byProduct.set(top, entry);
  }
  return [...byProduct.values()];
}
