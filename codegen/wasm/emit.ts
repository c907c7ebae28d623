/**
 * WebAssembly emitter: prints the kernel-level loop IR (ir/loops.ts, attached
 * by the lower-kernels pass) as one wasm module per kernel, one exported
 * function per LoopFunc, through the binaryen wrapper (./binaryen.ts).
 *
 * - Memory is imported (env.memory, shared, up to 4 GiB) so that the executor
 *   owns it and lays every buffer out itself.
 * - Function `name(off..., size..., lo, hi)`: i32 byte offsets of the buffers
 *   in LoopFunc order, the sizes as i32, and [lo, hi) clamping the top-level
 *   parallel loop (runtime/wasm/manifest.ts).
 * - Arithmetic happens in each node's element type: f32 programs compute in
 *   f32 (the reference interpreter computes in f64); bool is an i32 0/1;
 *   integer division truncates with a zero divisor giving 0; relu, min, max,
 *   abs, sqrt are native; exp, log, tanh, pow, sigmoid call Math (f64) via
 *   imports; the identity ±inf of an integer min/max is the type's max/min.
 * - Every module is validated (before and after binaryen's optimiser, level 3).
 */
import { kernelFacts } from '../../ir/facts.js';
import { lload, lvar, type LBuffer, type LElem, type LExpr, type LStmt, type LoopFunc } from '../../ir/loops.js';
import { flatRows } from '../cpu/flat.js';
import { PAIR_MIN_ENTRIES, pairMaxRows, pairedRows, type PairedRows } from '../cpu/pairs.js';
import type { Kernel, Op } from '../../ir/module.js';
import type { TensorType } from '../../ir/types.js';
import type { WasmManifest, WasmOp, WasmStep, WasmValueType } from '../../runtime/wasm/manifest.js';
import { GROUPS, SPREAD, planVector, spreadBuffers, VectorLoop, type ScalarEmitter } from './simd.js';
import { rowLocalBuffers, splitWrites } from './split.js';
import { FnBuilder, INT32_MAX, INT32_MIN, isFloat, kindOf, loadBinaryen, WasmModule, type Ref } from './binaryen.js';

export interface EmitOptions {
  /** Declare the imported memory shared (needed for threads); default true. */
  shared?: boolean;
  /** Keep the text form of the optimised module (for debugging and tests). */
  text?: boolean;
  /** 128-bit SIMD for dense loops over contiguous memory (codegen/wasm/simd.ts); default true. Results are bit-identical either way. */
  simd?: boolean;
  /** Two cursors over a long-rowed fold's rows (codegen/cpu/pairs.ts); default true. Results are bit-identical either way. */
  pairs?: boolean;
  /**
   * Vectors per SIMD block, widest first (default `GROUPS` of simd.ts). For
   * benchmarks that compare blockings (bench/wasm-groups.ts); results are
   * bit-identical for every choice. Strictly decreasing positive integers.
   */
  vectorBlocks?: readonly number[];
  /**
   * Most walks of a row's entries that share one block of the widest vectors in the ops' second
   * function, exported beside the first for ops that read rows through loaded indices (codegen/wasm/simd.ts
   * `SPREAD`, WasmOp.spread; the executor picks one per call). 1: no second function. Results are
   * bit-identical either way.
   */
  spreadWalks?: number;
}

/** Changes whenever emitted code may change for the same kernel and options (compile caches key on it). */
export const WASM_EMITTER_VERSION = 9;

export interface EmittedWasm {
  binary: Uint8Array;
  manifest: WasmManifest;
  text?: string;
}

const MAX_SPREAD = 16;

/** 65536 pages: 4 GiB, every i32 address. */
const MAX_PAGES = 65536;

interface Local {
  index: number;
  elem: LElem;
}

/** Emits one LoopFunc as a wasm function into W. */
class FuncEmitter implements ScalarEmitter {
  readonly F: FnBuilder;
  private readonly scopes: Map<string, Local>[] = [];
  private readonly bufs = new Map<string, { param: number; elem: LElem }>();
  private readonly loParam: number;
  private readonly hiParam: number;

  constructor(
    readonly W: WasmModule,
    private readonly f: LoopFunc,
    private readonly simd: boolean,
    private readonly pairs: boolean,
    private readonly blocks: readonly number[],
    private readonly spread: number,
  ) {
    const nb = f.buffers.length;
    const ns = f.sizes.length;
    this.F = new FnBuilder(
      W,
      Array.from({ length: nb + ns + 2 }, () => W.b.i32),
    );
    f.buffers.forEach((b, i) => this.bufs.set(b.name, { param: i, elem: b.elem }));
    const sizes = new Map<string, Local>();
    f.sizes.forEach((s, i) => sizes.set(s, { index: nb + i, elem: 'index' }));
    this.scopes.push(sizes);
    this.loParam = nb + ns;
    this.hiParam = nb + ns + 1;
  }

  private fail(msg: string): never {
    throw new Error(`wasm emitter: ${this.f.name}: ${msg}`);
  }

  private lookup(name: string): Local {
    for (let s = this.scopes.length - 1; s >= 0; s--) {
      const l = this.scopes[s]!.get(name);
      if (l) return l;
    }
    return this.fail(`unknown variable '${name}'`);
  }

  private buf(name: string): { param: number; elem: LElem } {
    return this.bufs.get(name) ?? this.fail(`unknown buffer '${name}'`);
  }

  bufParam(name: string): number {
    return this.buf(name).param;
  }

  bufElem(name: string): LElem {
    return this.buf(name).elem;
  }

  scoped<T>(names: Map<string, Local>, fn: () => T): T {
    this.scopes.push(names);
    try {
      return fn();
    } finally {
      this.scopes.pop();
    }
  }

  scalarFor(s: Extract<LStmt, { k: 'for' }>, lo: Ref, hi: Ref): Ref {
    const v = this.F.local('index');
    const end = this.F.local('index');
    const body = this.scoped(new Map([[s.var, { index: v, elem: 'index' as LElem }]]), () => this.stmts(s.body));
    return this.F.forLoop(v, end, lo, hi, body);
  }

  /** The local of the size that bounds a top-level loop (the rows), if one does. */
  private rowsLocal(s: Extract<LStmt, { k: 'for' }>): number | undefined {
    if (s.hi.k !== 'var' || !this.f.sizes.includes(s.hi.name)) return undefined;
    return this.lookup(s.hi.name).index;
  }

  /**
   * The row loop over [lo, hi) with two cursors over its halves by entries (codegen/cpu/pairs.ts, the native library's same
   * loop) where the rows hold PAIR_MIN_ENTRIES entries a row or more and the gathered operand fits
   * PAIR_MAX_GATHER_BYTES; the plain loop otherwise. Each row adds its entries in the same order: the same results.
   */
  private pairedFor(r: PairedRows, lo: Ref, hi: Ref, rows: number): Ref {
    const m = this.W.m;
    const F = this.F;
    const idx = (): number => F.local('index');
    const [l0, h0, mid, ia, ib, pa, ea, pb, eb, stop, end, flag, half, top, cut] = Array.from({ length: 15 }, idx);
    const t = r.init.type;
    const accA = F.local(t);
    const accB = F.local(t);
    const g = (l: number): Ref => F.get(l, 'index');
    const c = (x: number): Ref => m.i32.const(x);
    const loc = (l: number, elem: LElem = 'index'): Local => ({ index: l, elem });
    const A = new Map([
      [r.top.var, loc(ia)],
      [r.loop.var, loc(pa)],
      [r.init.var, loc(accA, t)],
    ]);
    const B = new Map([
      [r.top.var, loc(ib)],
      [r.loop.var, loc(pb)],
      [r.init.var, loc(accB, t)],
    ]);
    const ptrAt = (l: number): Ref =>
      this.scoped(new Map([['#at', loc(l)]]), () => this.as(lload(r.ptr, lvar('#at')), 'index'));
    const fold = (S: Map<string, Local>): Ref[] => this.scoped(S, () => this.stmts(r.loop.body));
    const post = (S: Map<string, Local>): Ref[] => this.scoped(S, () => this.stmts(r.post));
    const rowEnd = (S: Map<string, Local>): Ref => this.scoped(S, () => this.as(r.loop.hi, 'index'));
    const out = F.label('P');
    const again = F.label('Q');
    const lock = F.label('K');
    // A cursor whose row is done stores it and takes its next row, or ends the lockstep at the end of its half.
    const next = (S: Map<string, Local>, p: number, e: number, i: number, acc: number, last: number): Ref =>
      m.if(
        m.i32.eq(g(p), g(e)),
        m.block(null, [
          ...post(S),
          F.set(acc, this.as(r.init.value, t)),
          F.set(i, m.i32.add(g(i), c(1))),
          m.br(out, m.i32.eq(g(i), g(last))),
          F.set(e, rowEnd(S)),
        ]),
      );
    // The cursor left: its row's last entries, then the rest of its half as the plain loop.
    const finish = (S: Map<string, Local>, p: number, e: number, i: number, last: number): Ref =>
      m.if(
        m.i32.lt_s(g(i), g(last)),
        m.block(null, [
          F.forLoop(p, end, g(p), g(e), fold(S)),
          ...post(S),
          F.forLoop(
            i,
            end,
            m.i32.add(g(i), c(1)),
            g(last),
            this.scoped(new Map([[r.top.var, loc(i)]]), () => this.stmts(r.top.body)),
          ),
        ]),
      );
    const search = F.label('S');
    const probe = F.label('T');
    const paired = m.block(null, [
      // mid: the first row of [l0 + 1, h0 - 1] with half the range's entries before it (a binary search).
      F.set(half, m.i32.add(ptrAt(l0), m.i32.shr_u(m.i32.sub(ptrAt(h0), ptrAt(l0)), c(1)))),
      F.set(mid, m.i32.add(g(l0), c(1))),
      F.set(top, m.i32.sub(g(h0), c(1))),
      m.block(search, [
        m.loop(
          probe,
          m.block(null, [
            m.br(search, m.i32.ge_s(g(mid), g(top))),
            F.set(cut, m.i32.add(g(mid), m.i32.shr_u(m.i32.sub(g(top), g(mid)), c(1)))),
            m.if(m.i32.lt_s(ptrAt(cut), g(half)), F.set(mid, m.i32.add(g(cut), c(1))), F.set(top, g(cut))),
            m.br(probe),
          ]),
        ),
      ]),
      F.set(ia, g(l0)),
      F.set(ib, g(mid)),
      F.set(
        pa,
        this.scoped(A, () => this.as(r.loop.lo, 'index')),
      ),
      F.set(ea, rowEnd(A)),
      F.set(
        pb,
        this.scoped(B, () => this.as(r.loop.lo, 'index')),
      ),
      F.set(eb, rowEnd(B)),
      F.set(accA, this.as(r.init.value, t)),
      F.set(accB, this.as(r.init.value, t)),
      m.block(out, [
        m.loop(
          again,
          m.block(null, [
            // stop = pa + min(ea - pa, eb - pb)
            F.set(
              stop,
              m.i32.add(
                g(pa),
                m.select(
                  m.i32.lt_s(m.i32.sub(g(ea), g(pa)), m.i32.sub(g(eb), g(pb))),
                  m.i32.sub(g(ea), g(pa)),
                  m.i32.sub(g(eb), g(pb)),
                ),
              ),
            ),
            m.if(
              m.i32.lt_s(g(pa), g(stop)),
              m.loop(
                lock,
                m.block(null, [
                  ...fold(A),
                  ...fold(B),
                  F.set(pa, m.i32.add(g(pa), c(1))),
                  F.set(pb, m.i32.add(g(pb), c(1))),
                  m.br(lock, m.i32.lt_s(g(pa), g(stop))),
                ]),
              ),
            ),
            next(A, pa, ea, ia, accA, mid),
            next(B, pb, eb, ib, accB, h0),
            m.br(again),
          ]),
        ),
      ]),
      finish(A, pa, ea, ia, mid),
      finish(B, pb, eb, ib, h0),
    ]);
    return m.block(null, [
      F.set(l0, lo),
      F.set(h0, hi),
      F.set(flag, c(0)),
      // The pointers are read only for a range of two rows or more, and only while the gathered operand fits.
      m.if(
        m.i32.and(m.i32.ge_s(m.i32.sub(g(h0), g(l0)), c(2)), m.i32.le_s(F.get(rows, 'index'), c(pairMaxRows(r.elem)))),
        F.set(
          flag,
          m.i32.ge_u(m.i32.div_u(m.i32.sub(ptrAt(h0), ptrAt(l0)), c(PAIR_MIN_ENTRIES)), m.i32.sub(g(h0), g(l0))),
        ),
      ),
      m.if(g(flag), paired, this.scalarFor(r.top, g(l0), g(h0))),
    ]);
  }

  /** Element type of an expression (as the loop IR states it). */
  typeOf(e: LExpr): LElem {
    switch (e.k) {
      case 'const':
        return e.type;
      case 'var':
        return this.lookup(e.name).elem;
      case 'load':
        return this.buf(e.buf).elem;
      case 'bin':
      case 'un':
      case 'call':
      case 'select':
        return e.type;
      case 'cast':
        return e.to;
    }
  }

  /** Emits e converted to element type `to`. */
  as(e: LExpr, to: LElem): Ref {
    return this.W.convert(this.expr(e), this.typeOf(e), to);
  }

  /** Operands of a comparison: their common type (f64 when kinds differ, so that the comparison is exact). */
  private common(a: LElem, b: LElem): LElem {
    if (a === b) return a;
    const [ka, kb] = [kindOf(a), kindOf(b)];
    if (ka === kb) return ka;
    if (ka === 'i64' && kb === 'i32') return 'i64';
    if (kb === 'i64' && ka === 'i32') return 'i64';
    return 'f64';
  }

  expr(e: LExpr): Ref {
    const W = this.W;
    const m = W.m;
    switch (e.k) {
      case 'const':
        return W.constant(e.value, e.type);
      case 'var': {
        const l = this.lookup(e.name);
        return this.F.get(l.index, l.elem);
      }
      case 'load': {
        const b = this.buf(e.buf);
        return W.load(b.elem, this.F.get(b.param, 'i32'), this.as(e.index, 'index'));
      }
      case 'bin':
        return this.bin(e);
      case 'un': {
        const t = e.type;
        if (e.op === 'not') return m.i32.eqz(W.truthy(this.expr(e.arg), this.typeOf(e.arg)));
        const x = this.as(e.arg, t);
        switch (kindOf(t)) {
          case 'f32':
            return m.f32.neg(x);
          case 'f64':
            return m.f64.neg(x);
          case 'i64':
            return m.i64.sub(m.i64.const(0n), x);
          case 'i32':
            return m.i32.sub(m.i32.const(0), x);
        }
        break;
      }
      case 'call':
        return this.call(e);
      case 'select': {
        const t = e.type;
        // An `if` rather than `select`: only the taken arm is evaluated (binaryen turns cheap ones into select).
        return m.if(W.truthy(this.expr(e.cond), this.typeOf(e.cond)), this.as(e.then, t), this.as(e.else, t));
      }
      case 'cast':
        return this.as(e.arg, e.to);
    }
  }

  private bin(e: Extract<LExpr, { k: 'bin' }>): Ref {
    const W = this.W;
    const m = W.m;
    switch (e.op) {
      case '&&':
      case '||': {
        const a = W.truthy(this.expr(e.lhs), this.typeOf(e.lhs));
        const b = W.truthy(this.expr(e.rhs), this.typeOf(e.rhs));
        return e.op === '&&' ? m.i32.and(a, b) : m.i32.or(a, b);
      }
      case '<':
      case '<=':
      case '>':
      case '>=':
      case '==':
      case '!=': {
        const t = this.common(this.typeOf(e.lhs), this.typeOf(e.rhs));
        const a = this.as(e.lhs, t);
        const b = this.as(e.rhs, t);
        const k = kindOf(t);
        if (k === 'f32' || k === 'f64') {
          const F = k === 'f32' ? m.f32 : m.f64;
          return { '<': F.lt, '<=': F.le, '>': F.gt, '>=': F.ge, '==': F.eq, '!=': F.ne }[e.op](a, b);
        }
        const I = k === 'i64' ? m.i64 : m.i32;
        return { '<': I.lt_s, '<=': I.le_s, '>': I.gt_s, '>=': I.ge_s, '==': I.eq, '!=': I.ne }[e.op](a, b);
      }
      default: {
        const t = e.type;
        const a = this.as(e.lhs, t);
        const b = this.as(e.rhs, t);
        const k = kindOf(t);
        if (k === 'f32' || k === 'f64') {
          const F = k === 'f32' ? m.f32 : m.f64;
          switch (e.op) {
            case '+':
              return F.add(a, b);
            case '-':
              return F.sub(a, b);
            case '*':
              return F.mul(a, b);
            case '/':
            case 'idiv':
              return F.div(a, b);
          }
        }
        const I = k === 'i64' ? m.i64 : m.i32;
        switch (e.op) {
          case '+':
            return I.add(a, b);
          case '-':
            return I.sub(a, b);
          case '*':
            return I.mul(a, b);
          case '/':
          case 'idiv':
            return W.idiv(k === 'i64' ? 'i64' : 'i32', a, b);
        }
      }
    }
  }

  private call(e: Extract<LExpr, { k: 'call' }>): Ref {
    const W = this.W;
    const m = W.m;
    const t = e.type;
    const k = kindOf(t);
    const F = k === 'f32' ? m.f32 : m.f64;
    const tmp = (x: Ref): [() => Ref, Ref] => {
      const l = this.F.local(t);
      return [() => this.F.get(l, t), this.F.set(l, x)];
    };
    // f64 host math, converted around.
    const host = (fn: 'exp' | 'log' | 'tanh' | 'pow'): Ref =>
      W.convert(
        W.hostCall(
          fn,
          e.args.map((a) => this.as(a, 'f64')),
        ),
        'f64',
        t,
      );
    switch (e.fn) {
      case 'exp':
      case 'log':
      case 'tanh':
      case 'pow':
        return host(e.fn);
      case 'sigmoid': {
        // 1 / (1 + exp(-x)) in f64, as the interpreter computes it.
        const x = this.as(e.args[0]!, 'f64');
        const s = m.f64.div(m.f64.const(1), m.f64.add(m.f64.const(1), W.hostCall('exp', [m.f64.neg(x)])));
        return W.convert(s, 'f64', t);
      }
      case 'relu': {
        const x = this.as(e.args[0]!, t);
        // max(x, +0): NaN stays NaN, -0 becomes +0, as the interpreter's relu.
        if (isFloat(t)) return F.max(x, W.constant(0, t));
        const [g, set] = tmp(x);
        const I = k === 'i64' ? m.i64 : m.i32;
        return m.block(null, [set, m.select(I.gt_s(g(), W.constant(0, t)), g(), W.constant(0, t))], W.type(t));
      }
      case 'abs':
      case 'sqrt': {
        if (isFloat(t)) return e.fn === 'abs' ? F.abs(this.as(e.args[0]!, t)) : F.sqrt(this.as(e.args[0]!, t));
        if (e.fn === 'sqrt') return W.convert(m.f64.sqrt(this.as(e.args[0]!, 'f64')), 'f64', t);
        const [g, set] = tmp(this.as(e.args[0]!, t));
        const I = k === 'i64' ? m.i64 : m.i32;
        const zero = W.constant(0, t);
        return m.block(null, [set, m.select(I.ge_s(g(), zero), g(), I.sub(W.constant(0, t), g()))], W.type(t));
      }
      case 'min':
      case 'max': {
        const a = this.as(e.args[0]!, t);
        const b = this.as(e.args[1]!, t);
        if (isFloat(t)) return e.fn === 'min' ? F.min(a, b) : F.max(a, b);
        const [ga, sa] = tmp(a);
        const [gb, sb] = tmp(b);
        const I = k === 'i64' ? m.i64 : m.i32;
        const pick = e.fn === 'min' ? I.lt_s(ga(), gb()) : I.gt_s(ga(), gb());
        return m.block(null, [sa, sb, m.select(pick, ga(), gb())], W.type(t));
      }
    }
  }

  private stmts(ss: readonly LStmt[], top = false): Ref[] {
    this.scopes.push(new Map());
    const out = ss.map((s) => this.stmt(s, top));
    this.scopes.pop();
    return out;
  }

  private stmt(s: LStmt, top: boolean): Ref {
    const W = this.W;
    const m = W.m;
    const scope = this.scopes[this.scopes.length - 1]!;
    switch (s.k) {
      case 'for': {
        let lo = this.as(s.lo, 'index');
        let hi = this.as(s.hi, 'index');
        if (top && s.parallel) {
          // Clamp to the slice [lo, hi) this call was given.
          const a = this.F.local('index');
          const b = this.F.local('index');
          const P = (i: number): Ref => this.F.get(i, 'index');
          lo = m.block(
            null,
            [
              this.F.set(a, lo),
              m.select(m.i32.gt_s(P(this.loParam), this.F.get(a, 'index')), P(this.loParam), this.F.get(a, 'index')),
            ],
            W.b.i32,
          );
          hi = m.block(
            null,
            [
              this.F.set(b, hi),
              m.select(m.i32.lt_s(P(this.hiParam), this.F.get(b, 'index')), P(this.hiParam), this.F.get(b, 'index')),
            ],
            W.b.i32,
          );
        }
        // Whole rows of an elementwise op as one loop over their elements (codegen/cpu/flat.ts): its vectors no
        // longer stop at each row's end.
        const flat = top && s.parallel ? flatRows(s, this.f) : undefined;
        if (flat) {
          const width = (): Ref => this.as(flat.hi, 'index');
          const [from, to] = [m.i32.mul(lo, width()), m.i32.mul(hi, width())];
          const flatPlan = this.simd ? planVector(flat, this.f.buffers) : undefined;
          return flatPlan
            ? new VectorLoop(this, flat, flatPlan, this.blocks, this.spread).emit(from, to)
            : this.scalarFor(flat, from, to);
        }
        const plan = this.simd ? planVector(s, this.f.buffers) : undefined;
        if (plan) return new VectorLoop(this, s, plan, this.blocks, this.spread).emit(lo, hi);
        const rows = top && this.pairs ? this.rowsLocal(s) : undefined;
        const paired = rows !== undefined ? pairedRows(s, this.f) : undefined;
        return paired ? this.pairedFor(paired, lo, hi, rows!) : this.scalarFor(s, lo, hi);
      }
      case 'let': {
        const value = this.as(s.value, s.type);
        const l = this.F.local(s.type);
        scope.set(s.var, { index: l, elem: s.type });
        return this.F.set(l, value);
      }
      case 'set': {
        const l = this.lookup(s.var);
        return this.F.set(l.index, this.as(s.value, l.elem));
      }
      case 'store': {
        const b = this.buf(s.buf);
        return W.store(b.elem, this.F.get(b.param, 'i32'), this.as(s.index, 'index'), this.as(s.value, b.elem));
      }
      case 'if': {
        const cond = W.truthy(this.expr(s.cond), this.typeOf(s.cond));
        const then = m.block(null, this.stmts(s.then));
        return s.else ? m.if(cond, then, m.block(null, this.stmts(s.else))) : m.if(cond, then);
      }
    }
  }

  emit(name: string): void {
    const body = this.stmts(this.f.body, true);
    this.W.addExportedFunction(name, this.F.params, this.F.vars, body);
  }
}

function valueType(t: TensorType): WasmValueType {
  return { format: t.format, dtype: t.dtype, shape: t.shape.map((d) => (d.kind === 'lit' ? d.value : d.name)) };
}

function program(ops: readonly Op[]): WasmStep[] {
  return ops.map((op): WasmStep =>
    op.kind === 'repeat'
      ? {
          kind: 'repeat',
          id: op.id,
          count: op.count.kind === 'lit' ? op.count.value : { param: op.count.name },
          ...(op.until ? { until: { ...op.until } } : {}),
          body: program(op.body),
        }
      : { kind: 'op', op: op.id },
  );
}

/** The export of an op's function in spread walks (codegen/wasm/simd.ts `SPREAD`). */
const spreadExport = (name: string): string => `${name}_spread`;

/**
 * The manifest of a kernel whose loops lower-kernels attached. `spread`: the module exports each op that
 * reads rows through loaded indices in spread walks too (WasmOp.spread); other backends' functions do not.
 */
export function wasmManifest(k: Kernel, imports: string[], shared: boolean, spread = false): WasmManifest {
  const loops = k.loops;
  if (!loops) throw new Error(`wasm emitter: kernel ${k.name} has no loop IR; run the lower-kernels pass first`);
  const facts = kernelFacts(k);
  const values: Record<string, WasmValueType> = {};
  for (const [n, t] of facts.values) values[n] = valueType(t);
  // Pattern roots: every sparse value shares the entry list of one sparse input.
  const roots: Record<string, string> = {};
  for (const p of k.params) if (p.type.format !== 'dense' && p.type.shape.length === 2) roots[p.name] = p.name;
  const setRoot = (v: string, r: string): void => {
    if (roots[v] !== undefined && roots[v] !== r)
      throw new Error(
        `wasm emitter: kernel ${k.name}: sparse value '${v}' takes the patterns of both '${roots[v]}' and '${r}'`,
      );
    roots[v] = r;
  };
  const ops: WasmOp[] = loops.map((f) => {
    const info = facts.ops.get(f.op);
    if (!info) throw new Error(`wasm emitter: kernel ${k.name}: no op ${f.op}`);
    if (info.type.format !== 'dense') {
      const P = info.sparsity.patternSource;
      const r = P !== undefined ? roots[P] : undefined;
      if (r === undefined)
        throw new Error(`wasm emitter: kernel ${k.name}, op ${f.op}: sparse result '${f.result}' has no pattern root`);
      setRoot(f.result, r);
    }
    const gathered = spread ? spreadBuffers(f) : [];
    const top = f.body.filter((s) => s.k === 'for');
    const splittable = f.body.length === 1 && top.length === 1 && top[0]!.k === 'for' && top[0]!.parallel;
    // Balance a split by the row pointers the top loop indexes with its variable, when there are some.
    let balanceBy: WasmOp['balanceBy'];
    let balanceBuf: LBuffer | undefined;
    if (splittable) {
      const ptr = f.buffers.find((b) => b.role === 'rowPtr' || b.role === 'colPtr');
      const loopVar = (top[0] as Extract<LStmt, { k: 'for' }>).var;
      const src = JSON.stringify(top[0]);
      if (ptr && src.includes(`"k":"load","buf":"${ptr.name}","index":{"k":"var","name":"${loopVar}"}`)) {
        const r = roots[ptr.of];
        if (r !== undefined) {
          balanceBy = { root: r, layout: ptr.role === 'rowPtr' ? 'csr' : 'csc' };
          balanceBuf = ptr;
        }
      }
    }
    let splitRange: string | number | undefined;
    if (splittable) {
      const t = top[0] as Extract<LStmt, { k: 'for' }>;
      const lo0 = t.lo.k === 'const' && t.lo.value === 0;
      if (lo0 && t.hi.k === 'var') splitRange = t.hi.name;
      else if (lo0 && t.hi.k === 'const') splitRange = t.hi.value;
    }
    // Entries written by a split must be the balancing pattern's own (same root).
    const writes = splittable
      ? splitWrites(
          f,
          top[0] as Extract<LStmt, { k: 'for' }>,
          values[f.result]?.shape ?? [],
          balanceBy && roots[f.result] === balanceBy.root ? balanceBuf : undefined,
        )
      : undefined;
    const rowLocal =
      writes && balanceBuf
        ? rowLocalBuffers(f, top[0] as Extract<LStmt, { k: 'for' }>, balanceBuf, (b) => roots[b.of])
        : undefined;
    return {
      export: f.name,
      op: f.op,
      result: f.result,
      out: f.out,
      buffers: f.buffers.map((b) => ({
        name: b.name,
        elem: b.elem,
        role: b.role,
        of: b.of,
        ...(b.layout ? { layout: b.layout } : {}),
      })),
      sizes: [...f.sizes],
      schedules: [...f.schedules],
      splittable,
      ...(splitRange !== undefined ? { splitRange } : {}),
      ...(balanceBy ? { balanceBy } : {}),
      ...(writes ? { splitWrites: writes } : {}),
      ...(rowLocal && rowLocal.length > 0 ? { rowLocal } : {}),
      ...(gathered.length > 0 ? { spread: { export: spreadExport(f.name), gathered } } : {}),
    };
  });
  return {
    format: 'dype-wasm-manifest',
    version: 1,
    kernel: k.name,
    params: k.params.map((p) => ({ name: p.name, type: valueType(p.type) })),
    results: k.results.map((r) => ({ name: r.name, type: valueType(r.type) })),
    values,
    roots,
    ops,
    program: program(k.body),
    imports,
    sharedMemory: shared,
    maxPages: MAX_PAGES,
  };
}

/** Compiles a kernel (after lower-kernels) to one validated, optimised wasm module and its manifest. */
export async function emitWasm(k: Kernel, opts: EmitOptions = {}): Promise<EmittedWasm> {
  const loops = k.loops;
  if (!loops) throw new Error(`wasm emitter: kernel ${k.name} has no loop IR; run the lower-kernels pass first`);
  const blocks = opts.vectorBlocks ?? GROUPS;
  if (blocks.length === 0 || blocks.some((g, q) => !Number.isInteger(g) || g < 1 || (q > 0 && g >= blocks[q - 1]!)))
    throw new Error(
      `wasm emitter: vectorBlocks must be strictly decreasing positive integers, got [${blocks.join(', ')}]`,
    );
  const spread = opts.spreadWalks ?? SPREAD;
  // Each block of w walks copies the loop body w times.
  if (!Number.isInteger(spread) || spread < 1 || spread > MAX_SPREAD)
    throw new Error(`wasm emitter: spreadWalks must be an integer in 1..${MAX_SPREAD}, got ${spread}`);
  const b = await loadBinaryen();
  const shared = opts.shared ?? true;
  const W = new WasmModule(b, shared, MAX_PAGES);
  try {
    const simd = opts.simd ?? true;
    const spreading = simd && spread > 1;
    for (const f of loops) {
      new FuncEmitter(W, f, simd, opts.pairs ?? true, blocks, 1).emit(f.name);
      if (spreading && spreadBuffers(f).length > 0)
        new FuncEmitter(W, f, simd, opts.pairs ?? true, blocks, spread).emit(spreadExport(f.name));
    }
    const binary = W.finish(`kernel ${k.name}`);
    const manifest = wasmManifest(k, W.importedHosts(), shared, spreading);
    return opts.text ? { binary, manifest, text: W.text() } : { binary, manifest };
  } finally {
    W.dispose();
  }
}

export { INT32_MAX, INT32_MIN };
