/**
 * The float64 reference interpreter: evaluates graph IR directly, written for
 * clarity first. It is the oracle every backend is tested against.
 *
 * Each tensor op is compiled once per run into closures over a small context
 * (bound index values, the current entry of each sparse iteration), then run
 * over the result's positions: every position of a dense result, or the
 * stored entries of the pattern source of a sparse one. A reduction driven by
 * a sparse operand visits only that operand's stored entries (GraphBLAS
 * semantics); a reduction over no entries yields its identity. Integer
 * dtypes compute as the backends do (interp/ints.ts): wrapping in their width.
 */
import { children, type Expr } from '../ir/expr.js';
import { kernelFacts, type OpInfo } from '../ir/facts.js';
import { indexRanges, resolveDtypes, type ValueInfo } from '../ir/infer.js';
import type { Kernel, Op, RepeatOp } from '../ir/module.js';
import { converged, recordTrips, type RepeatTrips } from '../runtime/converge.js';
import { type Dim, type Dtype } from '../ir/types.js';
import { InputError } from '../runtime/errors.js';
import { MAX_ELEMENTS, type Tensor } from '../runtime/tensor.js';
import { bindInputs, type KernelInputs } from './bind.js';
import { identityIn, intOps } from './ints.js';
import { groupingOf, lookup, toTensor, type Pattern, type SparseVal, type Val } from './values.js';

interface Ctx {
  /** Value of each index variable, by slot. */
  idx: Float64Array;
  /** Current entry of each sparse iteration, by iterator slot. */
  cur: Int32Array;
  /** Operand values of the op being run, by operand slot. */
  vals: Val[];
}

type Fn = (c: Ctx) => number;
type Load = Extract<Expr, { k: 'load' }>;
type Reduce = Extract<Expr, { k: 'reduce' }>;

/** Where a sparse iteration gets its entries: which operand, and how they are aligned to index slots. */
interface Iter {
  slot: number;
  operand: number;
  /** Index variables at the row and column position of the iterated access. */
  rowIdx: string;
  colIdx: string;
}

class OpCompiler {
  readonly slots = new Map<string, number>();
  readonly operands: string[] = [];
  readonly iters: Iter[] = [];
  /** Aligned reads: a sparse load reading the entry its iteration is on. */
  readonly aligned = new Map<Load, Iter>();
  private readonly dtypes: Map<Expr, Dtype>;
  readonly ranges: Map<string, number>;
  lhsIter: Iter | undefined;

  constructor(
    readonly info: OpInfo,
    private readonly dims: ReadonlyMap<string, number>,
  ) {
    const env = (n: string): ValueInfo | undefined => info.operands.get(n);
    const dimOf = (d: Dim): number => (d.kind === 'lit' ? d.value : dims.get(d.name)!);
    this.ranges = new Map(
      [...indexRanges(info.op.indices, info.type.shape, info.op.expr, env)].map(([i, d]) => [i, dimOf(d)]),
    );
    for (const i of info.op.indices) this.slot(i);
    this.dtypes = resolveDtypes(info.op.expr, env, info.type.dtype);
  }

  slot(name: string): number {
    let s = this.slots.get(name);
    if (s === undefined) this.slots.set(name, (s = this.slots.size));
    return s;
  }

  operand(name: string): number {
    let j = this.operands.indexOf(name);
    if (j < 0) j = this.operands.push(name) - 1;
    return j;
  }

  isSparse(name: string): boolean {
    return this.info.operands.get(name)?.type.format !== 'dense';
  }

  newIter(load: Load): Iter {
    const it: Iter = {
      slot: this.iters.length,
      operand: this.operand(load.tensor),
      rowIdx: load.idx[0]!,
      colIdx: load.idx[1]!,
    };
    this.iters.push(it);
    return it;
  }

  /** The iteration a sparse load inside `active` iterations lines up with, if any. */
  private alignTo(load: Load, active: readonly { load: Load; iter: Iter }[]): Iter | undefined {
    for (let a = active.length - 1; a >= 0; a--) {
      const { load: src, iter } = active[a]!;
      if (src.idx.join(',') !== load.idx.join(',')) continue;
      const root = (n: string): string => this.info.operands.get(n)?.root ?? n;
      if (root(src.tensor) === root(load.tensor)) return iter;
    }
    return undefined;
  }

  compile(e: Expr, active: readonly { load: Load; iter: Iter }[]): Fn {
    switch (e.k) {
      case 'const': {
        const v = e.value;
        return () => v;
      }
      case 'dim': {
        const v = this.dims.get(e.name)!;
        return () => v;
      }
      case 'load':
        return this.load(e, active);
      case 'neg': {
        const a = this.compile(e.arg, active);
        const int = intOps(this.dtypes.get(e)!);
        return int ? (c) => int.neg(a(c)) : (c) => -a(c);
      }
      case 'not': {
        const a = this.compile(e.arg, active);
        return (c) => (a(c) === 0 ? 1 : 0);
      }
      case 'bin':
        return this.binary(e, active);
      case 'select': {
        const p = this.compile(e.cond, active);
        const t = this.compile(e.then, active);
        const f = this.compile(e.else, active);
        return (c) => (p(c) !== 0 ? t(c) : f(c));
      }
      case 'call':
        return this.call(e, active);
      case 'reduce':
        return this.reduce(e, active);
    }
  }

  private load(e: Load, active: readonly { load: Load; iter: Iter }[]): Fn {
    const j = this.operand(e.tensor);
    if (e.idx.length === 0) return (c) => (c.vals[j] as { data: Float64Array }).data[0]!;
    if (!this.isSparse(e.tensor)) {
      const slots = e.idx.map((i) => this.slot(i));
      const shape = this.info.operands.get(e.tensor)!.type.shape.map((_, p) => this.ranges.get(e.idx[p]!)!);
      const strides = shape.map((_, p) => shape.slice(p + 1).reduce((a, b) => a * b, 1));
      if (slots.length === 1) {
        const s0 = slots[0]!;
        return (c) => (c.vals[j] as { data: Float64Array }).data[c.idx[s0]!]!;
      }
      if (slots.length === 2) {
        const [s0, s1] = slots as [number, number];
        const st = strides[0]!;
        return (c) => (c.vals[j] as { data: Float64Array }).data[c.idx[s0]! * st + c.idx[s1]!]!;
      }
      return (c) => {
        let off = 0;
        for (let p = 0; p < slots.length; p++) off += c.idx[slots[p]!]! * strides[p]!;
        return (c.vals[j] as { data: Float64Array }).data[off]!;
      };
    }
    const iter = this.alignTo(e, active);
    const r = this.slot(e.idx[0]!);
    const col = this.slot(e.idx[1]!);
    if (iter) {
      this.aligned.set(e, iter);
      const it = iter.slot;
      const src = iter.operand;
      // Same pattern object: read the current entry. Otherwise (a value
      // reassigned with a pattern of its own) fall back to a lookup.
      return (c) => {
        const v = c.vals[j] as SparseVal;
        return v.pattern === (c.vals[src] as SparseVal).pattern
          ? v.values[c.cur[it]!]!
          : lookup(v, c.idx[r]!, c.idx[col]!, 0);
      };
    }
    // A dense result reading a sparse operand at its own positions: missing entries are 0.
    return (c) => lookup(c.vals[j] as SparseVal, c.idx[r]!, c.idx[col]!, 0);
  }

  private binary(e: Extract<Expr, { k: 'bin' }>, active: readonly { load: Load; iter: Iter }[]): Fn {
    const a = this.compile(e.lhs, active);
    const b = this.compile(e.rhs, active);
    // Integers wrap in their width and divide truncating, 0 for a zero divisor (interp/ints.ts).
    const int = intOps(this.dtypes.get(e)!);
    switch (e.op) {
      case '+':
        return int ? (c) => int.add(a(c), b(c)) : (c) => a(c) + b(c);
      case '-':
        return int ? (c) => int.sub(a(c), b(c)) : (c) => a(c) - b(c);
      case '*':
        return int ? (c) => int.mul(a(c), b(c)) : (c) => a(c) * b(c);
      case '/':
        return int ? (c) => int.div(a(c), b(c)) : (c) => a(c) / b(c);
      case '<':
        return (c) => (a(c) < b(c) ? 1 : 0);
      case '<=':
        return (c) => (a(c) <= b(c) ? 1 : 0);
      case '>':
        return (c) => (a(c) > b(c) ? 1 : 0);
      case '>=':
        return (c) => (a(c) >= b(c) ? 1 : 0);
      case '==':
        return (c) => (a(c) === b(c) ? 1 : 0);
      case '!=':
        return (c) => (a(c) !== b(c) ? 1 : 0);
      case '&&':
        return (c) => (a(c) !== 0 && b(c) !== 0 ? 1 : 0);
      case '||':
        return (c) => (a(c) !== 0 || b(c) !== 0 ? 1 : 0);
    }
  }

  private call(e: Extract<Expr, { k: 'call' }>, active: readonly { load: Load; iter: Iter }[]): Fn {
    const a = this.compile(e.args[0]!, active);
    const b = e.args[1] ? this.compile(e.args[1], active) : a;
    switch (e.fn) {
      case 'relu':
        return (c) => {
          const x = a(c);
          return x > 0 ? x : x === x ? 0 : x;
        };
      case 'exp':
        return (c) => Math.exp(a(c));
      case 'log':
        return (c) => Math.log(a(c));
      case 'sqrt':
        return (c) => Math.sqrt(a(c));
      case 'abs': {
        const int = intOps(this.dtypes.get(e)!);
        return int ? (c) => int.abs(a(c)) : (c) => Math.abs(a(c));
      }
      case 'sigmoid':
        return (c) => 1 / (1 + Math.exp(-a(c)));
      case 'tanh':
        return (c) => Math.tanh(a(c));
      case 'min':
        return (c) => Math.min(a(c), b(c));
      case 'max':
        return (c) => Math.max(a(c), b(c));
      case 'pow':
        return (c) => Math.pow(a(c), b(c));
    }
  }

  private reduce(e: Reduce, active: readonly { load: Load; iter: Iter }[]): Fn {
    const driverName = this.info.sparsity.drivers.get(e);
    let driverLoad: Load | undefined;
    if (driverName !== undefined) {
      const find = (n: Expr): void => {
        if (driverLoad) return;
        if (n.k === 'load' && n.tensor === driverName && n.idx.some((i) => e.idx.includes(i))) driverLoad = n;
        else children(n).forEach(find);
      };
      find(e.body);
    }
    const iter = driverLoad ? this.newIter(driverLoad) : undefined;
    const inner = iter ? [...active, { load: driverLoad!, iter }] : active;
    const body = this.compile(e.body, inner);
    const dtype = this.dtypes.get(e)!;
    const fold = folder(e.op, dtype);
    const identity = identityIn(e.op, dtype);
    const denseIdx = e.idx.filter((i) => !driverLoad?.idx.includes(i));
    const dense = denseIdx.map((i) => ({ slot: this.slot(i), n: this.ranges.get(i)! }));
    const loop = (c: Ctx, depth: number, acc: number): number => {
      if (depth === dense.length) return fold(acc, body(c));
      const { slot, n } = dense[depth]!;
      for (let v = 0; v < n; v++) {
        c.idx[slot] = v;
        acc = loop(c, depth + 1, acc);
      }
      return acc;
    };
    if (!iter || !driverLoad) return (c) => loop(c, 0, identity);
    const rowReduced = e.idx.includes(iter.rowIdx);
    const colReduced = e.idx.includes(iter.colIdx);
    const rs = this.slot(iter.rowIdx);
    const cs = this.slot(iter.colIdx);
    const it = iter.slot;
    const j = iter.operand;
    const by: 'row' | 'col' | undefined = rowReduced && colReduced ? undefined : rowReduced ? 'col' : 'row';
    return (c) => {
      const p: Pattern = (c.vals[j] as SparseVal).pattern;
      let acc = identity;
      let lo = 0;
      let hi = p.ri.length;
      let ids: Int32Array | undefined;
      if (by) {
        const g = groupingOf(p, by);
        const key = c.idx[by === 'row' ? rs : cs]!;
        lo = g.ptr[key]!;
        hi = g.ptr[key + 1]!;
        ids = g.ids;
      }
      for (let q = lo; q < hi; q++) {
        const ent = ids ? ids[q]! : q;
        c.cur[it] = ent;
        if (rowReduced) c.idx[rs] = p.ri[ent]!;
        if (colReduced) c.idx[cs] = p.ci[ent]!;
        acc = loop(c, 0, acc);
      }
      return acc;
    };
  }
}

function folder(op: Reduce['op'], dtype: Dtype): (acc: number, x: number) => number {
  switch (op) {
    case 'sum':
      return intOps(dtype)?.add ?? ((acc, x) => acc + x);
    case 'min':
      return (acc, x) => Math.min(acc, x);
    case 'max':
      return (acc, x) => Math.max(acc, x);
    case 'any':
      return (acc, x) => (acc !== 0 || x !== 0 ? 1 : 0);
    case 'all':
      return (acc, x) => (acc !== 0 && x !== 0 ? 1 : 0);
  }
}

interface CompiledOp {
  run(env: ReadonlyMap<string, Val>): Val;
}

function compileOp(info: OpInfo, dims: ReadonlyMap<string, number>, kernel: string): CompiledOp {
  const oc = new OpCompiler(info, dims);
  const { op, type, sparsity } = info;
  let lhsLoad: Load | undefined;
  if (type.format !== 'dense' && sparsity.patternSource !== undefined) {
    lhsLoad = { k: 'load', tensor: sparsity.patternSource, idx: [...op.indices] };
    oc.lhsIter = oc.newIter(lhsLoad);
  }
  const f = oc.compile(op.expr, lhsLoad && oc.lhsIter ? [{ load: lhsLoad, iter: oc.lhsIter }] : []);
  const lhsSlots = op.indices.map((i) => oc.slot(i));
  const lhsRanges = op.indices.map((i) => oc.ranges.get(i)!);
  const toBool = type.dtype === 'bool';
  const nSlots = oc.slots.size;
  return {
    run(env) {
      const vals = oc.operands.map((n) => {
        const v = env.get(n);
        // The checker accepts a value assigned only inside a repeat; with zero trips it never exists.
        if (!v)
          throw new InputError(
            'DY3015',
            `kernel ${kernel}`,
            undefined,
            `'${n}' was never computed: the repeat that assigns it ran zero times`,
          );
        return v;
      });
      const ctx: Ctx = { idx: new Float64Array(nSlots), cur: new Int32Array(oc.iters.length), vals };
      if (oc.lhsIter) {
        const src = ctx.vals[oc.lhsIter.operand] as SparseVal;
        const p = src.pattern;
        const values = new Float64Array(p.ri.length);
        const [r0, c0] = lhsSlots as [number, number];
        for (let ent = 0; ent < values.length; ent++) {
          ctx.cur[oc.lhsIter.slot] = ent;
          ctx.idx[r0] = p.ri[ent]!;
          ctx.idx[c0] = p.ci[ent]!;
          const v = f(ctx);
          values[ent] = toBool ? (v !== 0 ? 1 : 0) : v;
        }
        return { kind: 'sparse', pattern: p, values };
      }
      const size = lhsRanges.reduce((a, b) => a * b, 1);
      if (size > MAX_ELEMENTS)
        throw new InputError(
          'DY3031',
          `kernel ${kernel}`,
          undefined,
          `'${op.result}' is dense [${lhsRanges.join(', ')}]: ${size} elements; at most ${MAX_ELEMENTS} fit`,
        );
      const data = new Float64Array(size);
      const rank = lhsSlots.length;
      const pos = new Array<number>(rank).fill(0);
      for (let flat = 0; flat < size; flat++) {
        for (let p = 0; p < rank; p++) ctx.idx[lhsSlots[p]!] = pos[p]!;
        const v = f(ctx);
        data[flat] = toBool ? (v !== 0 ? 1 : 0) : v;
        for (let p = rank - 1; p >= 0; p--) {
          if (++pos[p]! < lhsRanges[p]!) break;
          pos[p] = 0;
        }
      }
      return { kind: 'dense', shape: lhsRanges, data };
    },
  };
}

export interface InterpretResult {
  outputs: Map<string, Tensor>;
  dims: Map<string, number>;
  /** Trips each repeat region ran, and whether its `until` test stopped it. */
  repeats: RepeatTrips[];
}

/** Runs one kernel of a typed module (after infer-types) on the given inputs. */
export function interpretKernel(k: Kernel, inputs: KernelInputs): InterpretResult {
  const { env, dims } = bindInputs(k, inputs);
  const facts = kernelFacts(k);
  const compiled = new Map<string, CompiledOp>();
  const repeats = new Map<string, RepeatTrips>();
  const runRegion = (op: RepeatOp, n: number, body: () => void): void => {
    const r = runTrips(n, op.until && (() => env.get(op.until!.value)), body, op.until?.within);
    recordTrips(repeats, op.id, n, op.until, r.trips, r.stopped);
  };
  const exec = (ops: readonly Op[]): void => {
    for (const op of ops) {
      if (op.kind === 'repeat') {
        let n: number;
        if (op.count.kind === 'lit') n = op.count.value;
        else {
          n = (env.get(op.count.name) as { data: Float64Array }).data[0]!;
          if (!Number.isSafeInteger(n) || n < 0)
            throw new InputError(
              'DY3015',
              `--param ${op.count.name}`,
              undefined,
              `repeat count must be a non-negative integer, got ${n}`,
            );
        }
        runRegion(op, n, () => exec(op.body));
        continue;
      }
      let c = compiled.get(op.id);
      if (!c) compiled.set(op.id, (c = compileOp(facts.ops.get(op.id)!, dims, k.name)));
      env.set(op.result, c.run(env));
    }
  };
  exec(k.body);
  const outputs = new Map<string, Tensor>();
  for (const r of k.results) {
    const v = env.get(r.name);
    if (!v)
      throw new InputError(
        'DY3015',
        `kernel ${k.name}`,
        undefined,
        `result '${r.name}' was never computed: the repeat that assigns it ran zero times`,
      );
    outputs.set(r.name, toTensor(v, r.type.format));
  }
  return { outputs, dims, repeats: [...repeats.values()] };
}

/**
 * Runs up to `n` trips of `body`; with `watch`, stops after the trip in
 * which the watched value stopped changing. Values are never mutated in
 * place here (each op makes a new one), so the value before a trip is kept
 * by reference.
 */
export function runTrips(
  n: number,
  watch: (() => Val | undefined) | undefined,
  body: () => void,
  within: number | undefined,
): { trips: number; stopped: boolean } {
  for (let t = 0; t < n; t++) {
    const before = watch?.();
    body();
    if (watch && before && converged(dataOf(before), dataOf(watch()!), within)) return { trips: t + 1, stopped: true };
  }
  return { trips: n, stopped: false };
}

function dataOf(v: Val): Float64Array {
  return v.kind === 'dense' ? v.data : v.values;
}
