/**
 * Executes the loop IR (ir/loops.ts) in JS: each LoopFunc is printed once as
 * a JS function over Float64Array / Int32Array buffers (a model of what the
 * wasm, CUDA and HLS emitters print), and a kernel runs its ops' functions in
 * program order, repeat regions included, exactly as interpretKernel does.
 * Every value is computed in float64 with the interpreter's operations
 * (integers wrapping in their width, interp/ints.ts), so
 * results must equal the interpreter's bit for bit; this is the oracle for
 * the lower-kernels pass.
 *
 * Sparse operands are handed over in the layout their buffer roles ask for
 * (CSR or CSC, built from the interpreter's entry lists and cached per
 * value); a sparse result, written aligned with its pattern source's layout,
 * is put back into the source's entry order and shares its Pattern object.
 */
import { kernelFacts } from '../ir/facts.js';
import { lowerKernelLoops } from '../ir/loops-lower.js';
import type { LElem, LExpr, LStmt, LoopFunc } from '../ir/loops.js';
import type { Kernel, Op } from '../ir/module.js';
import type { Dim } from '../ir/types.js';
import { InputError } from '../runtime/errors.js';
import { bindInputs, type KernelInputs } from './bind.js';
import { constIn, I32, I64 } from './ints.js';
import { runTrips, type InterpretResult } from './interpret.js';
import { recordTrips, type RepeatTrips } from '../runtime/converge.js';
import { groupingOf, toTensor, type SparseVal, type Val } from './values.js';

type Buf = Float64Array | Int32Array;
type Compiled = (bufs: readonly Buf[], sizes: readonly number[]) => void;

interface LayoutBufs {
  ptr: Int32Array;
  idx: Int32Array;
  vals: Float64Array;
  /** Entry id (in the pattern's own order) of each position of the layout. */
  ids: Int32Array | undefined;
}

const layoutCache = new WeakMap<SparseVal, { csr?: LayoutBufs; csc?: LayoutBufs }>();

function layoutOf(v: SparseVal, layout: 'csr' | 'csc'): LayoutBufs {
  let c = layoutCache.get(v);
  if (!c) layoutCache.set(v, (c = {}));
  const hit = c[layout];
  if (hit) return hit;
  const by = layout === 'csr' ? 'row' : 'col';
  const g = groupingOf(v.pattern, by);
  const minor = layout === 'csr' ? v.pattern.ci : v.pattern.ri;
  const n = minor.length;
  const idx = new Int32Array(n);
  const vals = new Float64Array(n);
  for (let q = 0; q < n; q++) {
    const e = g.ids ? g.ids[q]! : q;
    idx[q] = minor[e]!;
    vals[q] = v.values[e]!;
  }
  return (c[layout] = { ptr: g.ptr, idx, vals, ids: g.ids });
}

const num = (v: number): string =>
  Object.is(v, -0)
    ? '-0'
    : Number.isNaN(v)
      ? 'NaN'
      : v === Infinity
        ? 'Infinity'
        : v === -Infinity
          ? '-Infinity'
          : String(v);

/** Prints a LoopFunc as the body of a JS function(B, S, H) (buffers, sizes, helpers). */
function printJs(f: LoopFunc): string {
  const bufIx = new Map(f.buffers.map((b, i) => [b.name, i]));
  const sizeIx = new Map(f.sizes.map((s, i) => [s, i]));
  const boolBuf = new Set(f.buffers.filter((b) => b.elem === 'bool').map((b) => b.name));
  const id = (n: string): string => (sizeIx.has(n) ? `s${sizeIx.get(n)}` : `v_${n.replace(/\W/g, '_')}`);
  const buf = (n: string): string => {
    const i = bufIx.get(n);
    if (i === undefined) throw new Error(`loop function ${f.name}: unknown buffer ${n}`);
    return `b${i}`;
  };
  const ex = (e: LExpr): string => {
    switch (e.k) {
      case 'const':
        return `(${num(constIn(e.value, e.type === 'bool' ? 'index' : e.type))})`;
      case 'var':
        return id(e.name);
      case 'load':
        return `${buf(e.buf)}[${ex(e.index)}]`;
      case 'bin': {
        const [a, b] = [ex(e.lhs), ex(e.rhs)];
        const int = intName(e.type);
        if (int && (e.op === '+' || e.op === '-' || e.op === '*' || e.op === 'idiv'))
          return `H.${int}.${e.op === '+' ? 'add' : e.op === '-' ? 'sub' : e.op === '*' ? 'mul' : 'div'}(${a}, ${b})`;
        switch (e.op) {
          case '+':
          case '-':
          case '*':
          case '/':
            return `(${a} ${e.op} ${b})`;
          case 'idiv':
            return `H.idiv(${a}, ${b})`;
          case '==':
            return `(${a} === ${b} ? 1 : 0)`;
          case '!=':
            return `(${a} !== ${b} ? 1 : 0)`;
          case '&&':
            return `(${a} !== 0 && ${b} !== 0 ? 1 : 0)`;
          case '||':
            return `(${a} !== 0 || ${b} !== 0 ? 1 : 0)`;
          default:
            return `(${a} ${e.op} ${b} ? 1 : 0)`;
        }
      }
      case 'un': {
        const int = intName(e.type);
        if (e.op === 'neg') return int ? `H.${int}.neg(${ex(e.arg)})` : `(-${ex(e.arg)})`;
        return `(${ex(e.arg)} === 0 ? 1 : 0)`;
      }
      case 'call': {
        const as = e.args.map(ex);
        const int = intName(e.type);
        if (int && e.fn === 'abs') return `H.${int}.abs(${as[0]})`;
        if (e.fn === 'relu' || e.fn === 'sigmoid') return `H.${e.fn}(${as[0]})`;
        return `Math.${e.fn}(${as.join(', ')})`;
      }
      case 'select':
        return `(${ex(e.cond)} !== 0 ? ${ex(e.then)} : ${ex(e.else)})`;
      case 'cast':
        // Values are float64 throughout; only a cast to bool changes one.
        return e.to === 'bool' ? `(${ex(e.arg)} !== 0 ? 1 : 0)` : ex(e.arg);
    }
  };
  let ends = 0;
  const st = (ss: readonly LStmt[], ind: string, out: string[]): void => {
    for (const s of ss) {
      switch (s.k) {
        case 'for': {
          const end = `e${ends++}`;
          out.push(
            `${ind}for (let ${id(s.var)} = ${ex(s.lo)}, ${end} = ${ex(s.hi)}; ${id(s.var)} < ${end}; ${id(s.var)}++) {`,
          );
          st(s.body, ind + '  ', out);
          out.push(`${ind}}`);
          break;
        }
        case 'let':
          out.push(`${ind}let ${id(s.var)} = ${ex(s.value)};`);
          break;
        case 'set':
          out.push(`${ind}${id(s.var)} = ${ex(s.value)};`);
          break;
        case 'store': {
          const v = ex(s.value);
          out.push(`${ind}${buf(s.buf)}[${ex(s.index)}] = ${boolBuf.has(s.buf) ? `(${v} !== 0 ? 1 : 0)` : v};`);
          break;
        }
        case 'if':
          out.push(`${ind}if (${ex(s.cond)} !== 0) {`);
          st(s.then, ind + '  ', out);
          if (s.else) {
            out.push(`${ind}} else {`);
            st(s.else, ind + '  ', out);
          }
          out.push(`${ind}}`);
          break;
      }
    }
  };
  const out: string[] = ['"use strict";'];
  f.buffers.forEach((_, i) => out.push(`const b${i} = B[${i}];`));
  f.sizes.forEach((_, i) => out.push(`const s${i} = S[${i}];`));
  st(f.body, '', out);
  return out.join('\n');
}

/** Which integer arithmetic (interp/ints.ts) a node of type t computes in: element integers only, not indices. */
const intName = (t: LElem): 'i32' | 'i64' | undefined => (t === 'i32' || t === 'i64' ? t : undefined);

const HELPERS = {
  i32: I32,
  i64: I64,
  // Integer division truncates; by zero it yields 0 rather than trapping (as the interpreter).
  idiv: (a: number, d: number): number => (d === 0 ? 0 : Math.trunc(a / d)),
  relu: (x: number): number => (x > 0 ? x : x === x ? 0 : x),
  sigmoid: (x: number): number => 1 / (1 + Math.exp(-x)),
};

/** The JS source a LoopFunc runs as (for debugging and for tests of the executor itself). */
export function loopFuncJs(f: LoopFunc): string {
  return printJs(f);
}

function compile(f: LoopFunc): Compiled {
  const fn = new Function('B', 'S', 'H', printJs(f)) as (
    B: readonly Buf[],
    S: readonly number[],
    H: typeof HELPERS,
  ) => void;
  return (bufs, sizes) => fn(bufs, sizes, HELPERS);
}

/** Runs one kernel through its loop IR (lowered here if lower-kernels has not run). */
export function runKernelViaLoops(k: Kernel, inputs: KernelInputs): InterpretResult {
  const { env, dims } = bindInputs(k, inputs);
  const facts = kernelFacts(k);
  const funcs = new Map((k.loops ?? lowerKernelLoops(k)).map((f) => [f.op, f]));
  const compiled = new Map<string, Compiled>();
  const repeats = new Map<string, RepeatTrips>();
  const dimOf = (d: Dim): number => (d.kind === 'lit' ? d.value : dims.get(d.name)!);
  const get = (n: string): Val => {
    const v = env.get(n);
    if (!v)
      throw new InputError(
        'DY3015',
        `kernel ${k.name}`,
        undefined,
        `'${n}' was never computed: the repeat that assigns it ran zero times`,
      );
    return v;
  };
  const runOp = (opId: string): void => {
    const f = funcs.get(opId);
    if (!f) throw new Error(`kernel ${k.name}: no loop function for ${opId}`);
    let c = compiled.get(opId);
    if (!c) compiled.set(opId, (c = compile(f)));
    const info = facts.ops.get(opId)!;
    const P = info.sparsity.patternSource;
    const src = info.type.format !== 'dense' && P !== undefined ? (get(P) as SparseVal) : undefined;
    let outBuf: Float64Array | undefined;
    const bufs = f.buffers.map((b): Buf => {
      if (b.name === f.out) {
        const n = src ? src.values.length : info.type.shape.reduce((a, d) => a * dimOf(d), 1);
        return (outBuf = new Float64Array(n));
      }
      const v = get(b.of);
      if (v.kind === 'dense') return v.data;
      const l = layoutOf(v, b.layout ?? 'csr');
      return b.role === 'values' ? l.vals : b.role === 'rowPtr' || b.role === 'colPtr' ? l.ptr : l.idx;
    });
    // nnz(X) sizes only size the output, which is allocated above.
    c(
      bufs,
      f.sizes.map((s) => dims.get(s) ?? 0),
    );
    let result: Val;
    if (src) {
      const layout = f.buffers.find((b) => b.name === f.out)!.layout ?? 'csr';
      const ids = groupingOf(src.pattern, layout === 'csr' ? 'row' : 'col').ids;
      const values = new Float64Array(outBuf!.length);
      for (let q = 0; q < values.length; q++) values[ids ? ids[q]! : q] = outBuf![q]!;
      result = { kind: 'sparse', pattern: src.pattern, values };
    } else result = { kind: 'dense', shape: info.type.shape.map(dimOf), data: outBuf! };
    env.set(f.result, result);
  };
  const exec = (ops: readonly Op[]): void => {
    for (const op of ops) {
      if (op.kind !== 'repeat') {
        runOp(op.id);
        continue;
      }
      let n: number;
      if (op.count.kind === 'lit') n = op.count.value;
      else {
        n = (get(op.count.name) as { data: Float64Array }).data[0]!;
        if (!Number.isSafeInteger(n) || n < 0)
          throw new InputError(
            'DY3015',
            `--param ${op.count.name}`,
            undefined,
            `repeat count must be a non-negative integer, got ${n}`,
          );
      }
      const r = runTrips(n, op.until && (() => env.get(op.until!.value)), () => exec(op.body), op.until?.within);
      recordTrips(repeats, op.id, n, op.until, r.trips, r.stopped);
    }
  };
  exec(k.body);
  const outputs = new Map<string, ReturnType<typeof toTensor>>();
  for (const r of k.results) outputs.set(r.name, toTensor(get(r.name), r.type.format));
  return { outputs, dims, repeats: [...repeats.values()] };
}
