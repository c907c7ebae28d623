/**
 * annotate-cost: attaches to every tensor op symbolic work counts in terms of
 * data features and dims, for the cost models of the planner:
 *   items   positions computed (result elements, or stored entries of a sparse result)
 *   flops   arithmetic operations, reductions' combines included
 *   reads   compulsory bytes read: every operand's storage once
 *   writes  bytes written: the result's storage (values only when sparse)
 *   gathers irregular reads of dense operands at indices that come from a sparse operand
 *   loops   trips of the op's innermost loop with its column loop taken whole: the
 *           innermost reductions' multiplicity (the items without one), over columns
 *   columns the range of the column loop, a dense result's last index (1 for a
 *           sparse result, a scalar, and a vector whose rows each reduce; all
 *           of a matrix whose elements read only their own): a CPU kernel
 *           runs it in blocks of vector lanes, so a trip of the loop above it
 *           does a block's work (runtime/catalogue/cpu.ts `denseTrips`)
 * A reduction driven by sparse D visits nnz(D) entries in all, spread over the
 * indices bound outside it, so its multiplicity is outer * nnz(D) / (range of
 * D's outer-bound index) * (ranges of its dense indices).
 */
import { children, type Expr } from '../ir/expr.js';
import { kernelFacts, type OpInfo } from '../ir/facts.js';
import { indexRanges, type ValueInfo } from '../ir/infer.js';
import type { Kernel, Module, Op } from '../ir/module.js';
import type { Dim, Dtype, TensorType } from '../ir/types.js';
import { Poly } from '../runtime/plan/sym.js';
import type { Pass } from './manager.js';

export const DTYPE_BYTES: Record<Dtype, number> = { f32: 4, f64: 8, i32: 4, i64: 8, bool: 1 };

const dimPoly = (d: Dim): Poly => (d.kind === 'sym' ? Poly.symbol(d.name) : Poly.constant(d.value));

function divDim(p: Poly, d: Dim): Poly {
  return d.kind === 'sym' ? p.divBy(d.name) : p.scale(1 / d.value);
}

/** Storage size in bytes of a value of type t (sparse: values, column indices, row pointers). */
export function storageBytes(t: TensorType, nnz: Poly): Poly {
  const b = DTYPE_BYTES[t.dtype];
  if (t.format === 'dense') return t.shape.reduce((acc, d) => acc.mul(dimPoly(d)), Poly.constant(b));
  return nnz.scale(b + 4).add(dimPoly(t.shape[0]!).add(Poly.constant(1)).scale(4));
}

export interface OpCost {
  items: Poly;
  flops: Poly;
  reads: Poly;
  writes: Poly;
  gathers: Poly;
  loops: Poly;
  columns: Poly;
}

export function opCost(info: OpInfo): OpCost {
  const { op, type, sparsity, operands } = info;
  const env = (n: string): ValueInfo | undefined => operands.get(n);
  const ranges = indexRanges(op.indices, type.shape, op.expr, env);
  const rootOf = (n: string): string => operands.get(n)?.root ?? n;
  const nnz = (n: string): Poly => Poly.symbol(`nnz(${rootOf(n)})`);
  const items =
    type.format !== 'dense' && sparsity.patternSource
      ? nnz(sparsity.patternSource)
      : op.indices.reduce((acc, i) => acc.mul(dimPoly(ranges.get(i)!)), Poly.constant(1));
  let flops = new Poly();
  let gathers = new Poly();
  // The multiplicities of the reductions with none inside them: the trips of the op's innermost loops.
  let innermost = new Poly();
  /** Whether e holds a reduction. */
  const walk = (e: Expr, mult: Poly, driven: ReadonlySet<string>): boolean => {
    switch (e.k) {
      case 'const':
      case 'dim':
        return false;
      case 'load':
        if (operands.get(e.tensor)?.type.format === 'dense' && e.idx.some((i) => driven.has(i)))
          gathers = gathers.add(mult);
        return false;
      case 'reduce': {
        const driver = sparsity.drivers.get(e);
        let inner = mult;
        let innerDriven = driven;
        const dLoad = driver === undefined ? undefined : findLoad(e.body, driver, e.idx);
        if (dLoad) {
          inner = inner.mul(nnz(dLoad.tensor));
          for (const i of dLoad.idx) if (!e.idx.includes(i)) inner = divDim(inner, ranges.get(i)!);
          for (const x of e.idx) if (!dLoad.idx.includes(x)) inner = inner.mul(dimPoly(ranges.get(x)!));
          innerDriven = new Set([...driven, ...dLoad.idx.filter((i) => e.idx.includes(i))]);
        } else for (const x of e.idx) inner = inner.mul(dimPoly(ranges.get(x)!));
        flops = flops.add(inner);
        if (!walk(e.body, inner, innerDriven)) innermost = innermost.add(inner);
        return true;
      }
      case 'neg':
      case 'not':
        flops = flops.add(mult);
        return walk(e.arg, mult, driven);
      case 'bin':
        flops = flops.add(mult);
        // Both sides walked: each counts its work, whichever holds a reduction.
        return [walk(e.lhs, mult, driven), walk(e.rhs, mult, driven)].some(Boolean);
      case 'select':
        flops = flops.add(mult);
        return [e.cond, e.then, e.else].map((c) => walk(c, mult, driven)).some(Boolean);
      case 'call':
        flops = flops.add(mult);
        return e.args.map((a) => walk(a, mult, driven)).some(Boolean);
    }
  };
  // A sparse result visits its pattern row by row: the column index comes from the pattern.
  const reduces = walk(
    op.expr,
    items,
    new Set(type.format !== 'dense' && sparsity.patternSource ? [op.indices[1]!] : []),
  );
  // The last index of a dense result is a loop of contiguous columns, unless it is a vector's row loop around a
  // reduction (SpMV, GEMV: each row's sum is one accumulator's, in order). A matrix whose every element reads only
  // its own elements runs its rows as one loop (codegen/cpu/flat.ts): all of it is the column loop.
  const last = type.format === 'dense' && (op.indices.length >= 2 || !reduces) ? op.indices.at(-1) : undefined;
  const column = last === undefined ? undefined : ranges.get(last)!;
  const whole = !reduces && type.format === 'dense' && op.indices.length === 2 && ownElements(op.expr, op.indices, env);
  const columns = whole ? items : column ? dimPoly(column) : Poly.constant(1);
  const trips = reduces ? innermost : items;
  const loops = whole ? Poly.constant(1) : column ? divDim(trips, column) : trips;
  // A sparse result shares its pattern's indices: only its values are written.
  const writes = type.format === 'dense' ? storageBytes(type, new Poly()) : items.scale(DTYPE_BYTES[type.dtype]);
  let reads = new Poly();
  for (const [name, v] of operands) reads = reads.add(storageBytes(v.type, nnz(name)));
  return { items, flops, reads, writes, gathers, loops, columns };
}

/** Whether every load in e is of a dense operand at exactly the result's indices (an elementwise op's own elements). */
function ownElements(e: Expr, indices: readonly string[], env: (n: string) => ValueInfo | undefined): boolean {
  if (e.k === 'load')
    return (
      env(e.tensor)?.type.format === 'dense' &&
      e.idx.length === indices.length &&
      e.idx.every((x, q) => x === indices[q])
    );
  if (e.k === 'dim') return true;
  return children(e).every((c) => ownElements(c, indices, env));
}

function findLoad(e: Expr, tensor: string, reduced: readonly string[]): Extract<Expr, { k: 'load' }> | undefined {
  if (e.k === 'load') return e.tensor === tensor && e.idx.some((i) => reduced.includes(i)) ? e : undefined;
  for (const c of children(e)) {
    const f = findLoad(c, tensor, reduced);
    if (f) return f;
  }
  return undefined;
}

export function annotateKernel(k: Kernel): Kernel {
  const facts = kernelFacts(k);
  const visit = (ops: Op[]): Op[] =>
    ops.map((op) => {
      if (op.kind === 'repeat') return { ...op, body: visit(op.body) };
      const c = opCost(facts.ops.get(op.id)!);
      return {
        ...op,
        attrs: {
          ...op.attrs,
          items: c.items.toString(),
          flops: c.flops.toString(),
          reads: c.reads.toString(),
          writes: c.writes.toString(),
          gathers: c.gathers.toString(),
          loops: c.loops.toString(),
          columns: c.columns.toString(),
        },
      };
    });
  return { ...k, body: visit(k.body) };
}

export const annotateCostPass: Pass = {
  name: 'annotate-cost',
  description:
    'attach symbolic work counts (items, flops, reads, writes, gathers, loops, columns) in terms of data features',
  run: (m: Module): Module => ({ kernels: m.kernels.map(annotateKernel) }),
};
