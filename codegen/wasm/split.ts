/**
 * What a split op writes: when an op's top-level parallel loop is clamped to
 * rows [lo, hi) (threads of one CPU, or instances of a split stage), which
 * elements of its out buffer does it write? The engine must know it to
 * all-gather the slices of a split stage; here it is proved from the loop IR
 * rather than assumed:
 *   - 'rows': every store to the out buffer is at `i` (a vector) or at
 *     `i * W + e`, where W is the product of the out value's trailing dims
 *     and e does not mention i, and the value's first dim is the loop's range:
 *     rows [lo, hi) of a row-major result;
 *   - 'entries': every store is at the entry variable p of a loop
 *     `for p in ptr[i] .. ptr[i + 1]` over the pointers the split balances
 *     by, into values aligned with that layout: entries [ptr[lo], ptr[hi]).
 * Anything else (a transpose's strided store, a scatter) is undefined: the
 * op is not split across instances.
 */
import type { LBuffer, LExpr, LoopFunc, LStmt } from '../../ir/loops.js';
import { walkLExpr } from '../../ir/loops-walk.js';

export type SplitWrites = 'rows' | 'entries';

type For = Extract<LStmt, { k: 'for' }>;

function mentions(e: LExpr, v: string): boolean {
  let hit = false;
  walkLExpr(e, (x) => void (hit ||= x.k === 'var' && x.name === v));
  return hit;
}

/** Stores to `buf` with the entry loops enclosing each (innermost last). */
function stores(body: readonly LStmt[], buf: string, loops: For[], out: { index: LExpr; loops: For[] }[]): void {
  for (const s of body) {
    if (s.k === 'store' && s.buf === buf) out.push({ index: s.index, loops: [...loops] });
    else if (s.k === 'for') stores(s.body, buf, [...loops, s], out);
    else if (s.k === 'if') {
      stores(s.then, buf, loops, out);
      if (s.else) stores(s.else, buf, loops, out);
    }
  }
}

/** `i * W + e` (either operand order) with W the trailing dims' product and e free of i, or `i` alone when there are none. */
function rowIndex(ix: LExpr, i: string, trailing: readonly (string | number)[]): boolean {
  const isI = (e: LExpr): boolean => e.k === 'var' && e.name === i;
  if (trailing.length === 0) return isI(ix);
  if (ix.k !== 'bin' || ix.op !== '+') return false;
  const scaled = (e: LExpr): boolean => {
    if (e.k !== 'bin' || e.op !== '*') return false;
    const w = isI(e.lhs) ? e.rhs : isI(e.rhs) ? e.lhs : undefined;
    return w !== undefined && isWidth(w, trailing);
  };
  return (scaled(ix.lhs) && !mentions(ix.rhs, i)) || (scaled(ix.rhs) && !mentions(ix.lhs, i));
}

/** The product of the trailing dims, as the lowering writes it (`c`, `5`, `(a * b)`). */
function isWidth(e: LExpr, dims: readonly (string | number)[]): boolean {
  if (dims.length === 1) {
    const d = dims[0]!;
    return typeof d === 'number' ? e.k === 'const' && e.value === d : e.k === 'var' && e.name === d;
  }
  if (e.k !== 'bin' || e.op !== '*') return false;
  return isWidth(e.lhs, dims.slice(0, -1)) && isWidth(e.rhs, dims.slice(-1));
}

/**
 * `shape`: the out value's shape (dim names or literals); `balance`: the
 * pointer buffer the split is balanced by, if any.
 */
export function splitWrites(
  f: LoopFunc,
  top: For,
  shape: readonly (string | number)[],
  balance: LBuffer | undefined,
): SplitWrites | undefined {
  const out = f.buffers.find((b) => b.name === f.out);
  if (!out) return undefined;
  const found: { index: LExpr; loops: For[] }[] = [];
  stores(top.body, out.name, [], found);
  if (found.length === 0) return undefined;
  const i = top.var;
  if (out.role === 'dense' || out.role === 'scalar') {
    const range = top.hi;
    const first = shape[0];
    const sameRange =
      first !== undefined &&
      (typeof first === 'number'
        ? range.k === 'const' && range.value === first
        : range.k === 'var' && range.name === first);
    if (!sameRange || (shape.length === 1 && out.role === 'scalar')) return undefined;
    return found.every((s) => rowIndex(s.index, i, shape.slice(1))) ? 'rows' : undefined;
  }
  if (out.role !== 'values' || !balance) return undefined;
  const layout = out.layout ?? 'csr';
  if ((balance.role === 'rowPtr' ? 'csr' : 'csc') !== layout) return undefined;
  const entryLoop = (l: For): boolean =>
    l.lo.k === 'load' &&
    l.lo.buf === balance.name &&
    l.lo.index.k === 'var' &&
    l.lo.index.name === i &&
    l.hi.k === 'load' &&
    l.hi.buf === balance.name &&
    l.hi.index.k === 'bin' &&
    l.hi.index.op === '+' &&
    l.hi.index.lhs.k === 'var' &&
    l.hi.index.lhs.name === i &&
    l.hi.index.rhs.k === 'const' &&
    l.hi.index.rhs.value === 1;
  return found.every(
    (s) => s.index.k === 'var' && s.loops.some((l) => l.var === (s.index as { name: string }).name && entryLoop(l)),
  )
    ? 'entries'
    : undefined;
}

/**
 * Buffers an op reads only at the rows it runs (when its loop is clamped to
 * [lo, hi)): the balancing pointers at i and i + 1, and indices or values in
 * the same layout of the same pattern at the entry variable of a loop
 * `for p in ptr[i] .. ptr[i + 1]`. A split instance needs only
 * ptr[lo .. hi] and entries [ptr[lo], ptr[hi]) of them, not the whole
 * pattern. Names of the buffers, in buffer order.
 */
export function rowLocalBuffers(
  f: LoopFunc,
  top: For,
  balance: LBuffer,
  rootOf: (b: LBuffer) => string | undefined,
): string[] {
  const i = top.var;
  const layout = balance.role === 'rowPtr' ? 'csr' : 'csc';
  const root = rootOf(balance);
  const entryVars = new Set<string>();
  const isI = (e: LExpr): boolean => e.k === 'var' && e.name === i;
  const isI1 = (e: LExpr): boolean =>
    e.k === 'bin' && e.op === '+' && isI(e.lhs) && e.rhs.k === 'const' && e.rhs.value === 1;
  const local = new Map<string, boolean>();
  const candidates = f.buffers.filter(
    (b) =>
      b.role !== 'dense' &&
      b.role !== 'scalar' &&
      (b.layout ?? (b.role === 'rowPtr' || b.role === 'colIdx' ? 'csr' : 'csc')) === layout &&
      rootOf(b) === root,
  );
  for (const b of candidates) local.set(b.name, true);
  // Loads are checked where they stand: walkLExpr visits every load, those inside other indices too.
  const visitExpr = (e: LExpr): void =>
    walkLExpr(e, (x) => {
      if (x.k !== 'load' || !local.has(x.buf)) return;
      const b = f.buffers.find((y) => y.name === x.buf)!;
      const ok =
        b.role === 'rowPtr' || b.role === 'colPtr'
          ? isI(x.index) || isI1(x.index)
          : x.index.k === 'var' && entryVars.has(x.index.name);
      if (!ok) local.set(x.buf, false);
    });
  const visit = (ss: readonly LStmt[]): void => {
    for (const s of ss) {
      switch (s.k) {
        case 'for': {
          visitExpr(s.lo);
          visitExpr(s.hi);
          const entry =
            s.lo.k === 'load' &&
            s.lo.buf === balance.name &&
            isI(s.lo.index) &&
            s.hi.k === 'load' &&
            s.hi.buf === balance.name &&
            isI1(s.hi.index);
          if (entry) entryVars.add(s.var);
          visit(s.body);
          if (entry) entryVars.delete(s.var);
          break;
        }
        case 'let':
        case 'set':
          visitExpr(s.value);
          break;
        case 'store':
          visitExpr(s.index);
          visitExpr(s.value);
          // A store into a pattern buffer is a write, not a read: it is the op's result.
          break;
        case 'if':
          visitExpr(s.cond);
          visit(s.then);
          if (s.else) visit(s.else);
          break;
      }
    }
  };
  visit(top.body);
  return f.buffers.filter((b) => local.get(b.name) === true && b.name !== f.out).map((b) => b.name);
}
