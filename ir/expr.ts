/**
 * Scalar expressions in index notation, the body of every tensor op. Nodes
 * may carry the source span they came from (never printed) so that checks
 * shared by the frontend and the passes can point at the program text.
 */
import type { Span } from './diagnostics.js';

export const REDUCE_OPS = ['sum', 'min', 'max', 'any', 'all'] as const;
export type ReduceOp = (typeof REDUCE_OPS)[number];

export const UNARY_FUNCS = ['relu', 'exp', 'log', 'sqrt', 'abs', 'sigmoid', 'tanh'] as const;
export const BINARY_FUNCS = ['min', 'max', 'pow'] as const;
export type FuncName = (typeof UNARY_FUNCS)[number] | (typeof BINARY_FUNCS)[number];

export type ArithOp = '+' | '-' | '*' | '/';
export type CompareOp = '<' | '<=' | '>' | '>=' | '==' | '!=';
export type LogicOp = '&&' | '||';
export type BinOp = ArithOp | CompareOp | LogicOp;

export type Expr =
  /** A literal. `int` records whether it was written as an integer (it then adopts the dtype it meets). */
  | { k: 'const'; value: number; int: boolean; span?: Span }
  /** A dim symbol used as a value; adopts the dtype it meets, like an integer literal. */
  | { k: 'dim'; name: string; span?: Span }
  /** A tensor element `%T[i, j]`, or a scalar `%s` (no indices). */
  | { k: 'load'; tensor: string; idx: string[]; span?: Span }
  | { k: 'neg'; arg: Expr; span?: Span }
  | { k: 'not'; arg: Expr; span?: Span }
  | { k: 'bin'; op: BinOp; lhs: Expr; rhs: Expr; span?: Span }
  | { k: 'select'; cond: Expr; then: Expr; else: Expr; span?: Span }
  | { k: 'call'; fn: FuncName; args: Expr[]; span?: Span }
  | { k: 'reduce'; op: ReduceOp; idx: string[]; body: Expr; span?: Span };

export function isReduceOp(s: string): s is ReduceOp {
  return (REDUCE_OPS as readonly string[]).includes(s);
}
export function funcArity(fn: string): number | undefined {
  if ((UNARY_FUNCS as readonly string[]).includes(fn)) return 1;
  if ((BINARY_FUNCS as readonly string[]).includes(fn)) return 2;
  return undefined;
}

/** Binding strength of binary operators in the IR text (ternary is 1, unary 7); comparisons do not chain. */
export const BIN_PRECEDENCE: Readonly<Record<BinOp, number>> = {
  '||': 2,
  '&&': 3,
  '<': 4,
  '<=': 4,
  '>': 4,
  '>=': 4,
  '==': 4,
  '!=': 4,
  '+': 5,
  '-': 5,
  '*': 6,
  '/': 6,
};

export function isCompare(op: BinOp): op is CompareOp {
  return op === '<' || op === '<=' || op === '>' || op === '>=' || op === '==' || op === '!=';
}
export function isLogic(op: BinOp): op is LogicOp {
  return op === '&&' || op === '||';
}

/** The identity of a reduction: what a reduction over no entries yields. */
export function reduceIdentity(op: ReduceOp): number {
  switch (op) {
    case 'sum':
      return 0;
    case 'min':
      return Infinity;
    case 'max':
      return -Infinity;
    case 'any':
      return 0;
    case 'all':
      return 1;
  }
}

export function children(e: Expr): Expr[] {
  switch (e.k) {
    case 'const':
    case 'dim':
    case 'load':
      return [];
    case 'neg':
    case 'not':
      return [e.arg];
    case 'bin':
      return [e.lhs, e.rhs];
    case 'select':
      return [e.cond, e.then, e.else];
    case 'call':
      return e.args;
    case 'reduce':
      return [e.body];
  }
}

/** Rebuilds a node with new children (same order as `children`). */
export function withChildren(e: Expr, cs: Expr[]): Expr {
  switch (e.k) {
    case 'const':
    case 'dim':
    case 'load':
      return e;
    case 'neg':
    case 'not':
      return { ...e, arg: cs[0]! };
    case 'bin':
      return { ...e, lhs: cs[0]!, rhs: cs[1]! };
    case 'select':
      return { ...e, cond: cs[0]!, then: cs[1]!, else: cs[2]! };
    case 'call':
      return { ...e, args: cs };
    case 'reduce':
      return { ...e, body: cs[0]! };
  }
}

/** Bottom-up rewrite. */
export function mapExpr(e: Expr, f: (e: Expr) => Expr): Expr {
  const cs = children(e);
  const mapped =
    cs.length === 0
      ? e
      : withChildren(
          e,
          cs.map((c) => mapExpr(c, f)),
        );
  return f(mapped);
}

/** Pre-order visit; `scope` lists reduction indices bound around the node. */
export function walkExpr(
  e: Expr,
  visit: (e: Expr, scope: readonly string[]) => void,
  scope: readonly string[] = [],
): void {
  visit(e, scope);
  const inner = e.k === 'reduce' ? [...scope, ...e.idx] : scope;
  for (const c of children(e)) walkExpr(c, visit, inner);
}

export function loadsOf(e: Expr): Extract<Expr, { k: 'load' }>[] {
  const out: Extract<Expr, { k: 'load' }>[] = [];
  walkExpr(e, (n) => {
    if (n.k === 'load') out.push(n);
  });
  return out;
}

export function tensorsRead(e: Expr): Set<string> {
  return new Set(loadsOf(e).map((l) => l.tensor));
}

export function containsReduce(e: Expr): boolean {
  let found = false;
  walkExpr(e, (n) => {
    if (n.k === 'reduce') found = true;
  });
  return found;
}

/** Index variables occurring free in e (not bound by a reduction inside e). */
export function freeIndices(e: Expr): Set<string> {
  const out = new Set<string>();
  walkExpr(e, (n, scope) => {
    if (n.k === 'load') for (const i of n.idx) if (!scope.includes(i)) out.add(i);
  });
  return out;
}

/** Renames index variables (free and bound) by a total or partial map. */
export function renameIndices(e: Expr, m: ReadonlyMap<string, string>): Expr {
  const r = (i: string): string => m.get(i) ?? i;
  return mapExpr(e, (n) => {
    if (n.k === 'load') return { ...n, idx: n.idx.map(r) };
    if (n.k === 'reduce') return { ...n, idx: n.idx.map(r) };
    return n;
  });
}

export function exprEquals(a: Expr, b: Expr): boolean {
  if (a.k !== b.k) return false;
  switch (a.k) {
    case 'const':
      return b.k === 'const' && Object.is(a.value, b.value) && a.int === b.int;
    case 'dim':
      return b.k === 'dim' && a.name === b.name;
    case 'load':
      return b.k === 'load' && a.tensor === b.tensor && a.idx.join() === b.idx.join();
    case 'bin':
      if (b.k !== 'bin' || a.op !== b.op) return false;
      break;
    case 'call':
      if (b.k !== 'call' || a.fn !== b.fn) return false;
      break;
    case 'reduce':
      if (b.k !== 'reduce' || a.op !== b.op || a.idx.join() !== b.idx.join()) return false;
      break;
    default:
      break;
  }
  const ca = children(a);
  const cb = children(b);
  return ca.length === cb.length && ca.every((c, i) => exprEquals(c, cb[i]!));
}

export function stripSpans(e: Expr): Expr {
  return mapExpr(e, (n) => {
    if (n.span === undefined) return n;
    const { span: _s, ...rest } = n;
    void _s;
    return rest as Expr;
  });
}
