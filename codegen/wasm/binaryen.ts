/**
 * The one thin wrapper around the binaryen API that the wasm emitter uses:
 * lazy loading, element types, constants, conversions, loads and stores with
 * natural alignment, loops, and module finishing (validate, optimise, emit).
 * binaryen is imported lazily (`await import('binaryen')`, seconds under
 * transforms): only codegen/wasm loads it, never `dype check` or the runtime.
 */
import type BinaryenNs from 'binaryen';

export type Binaryen = typeof BinaryenNs;
export type Ref = number;
export type WType = number;

/** Element kinds as the emitter sees them; `index` and `bool` are i32. */
export type Elem = 'f32' | 'f64' | 'i32' | 'i64' | 'bool' | 'index';

let loaded: Promise<Binaryen> | undefined;

/** Imports binaryen once per process. */
export function loadBinaryen(): Promise<Binaryen> {
  loaded ??= import('binaryen').then((m) => (m as { default?: Binaryen }).default ?? (m as unknown as Binaryen));
  return loaded;
}

export const INT32_MAX = 0x7fffffff;
export const INT32_MIN = -0x80000000;

export function isFloat(e: Elem): e is 'f32' | 'f64' {
  return e === 'f32' || e === 'f64';
}

/** The wasm value kind an element is computed in. */
export function kindOf(e: Elem): 'f32' | 'f64' | 'i32' | 'i64' {
  return e === 'f32' || e === 'f64' || e === 'i64' ? e : 'i32';
}

/** Bytes per stored element (bool is one i32). */
export function elemBytes(e: Elem): number {
  return e === 'f64' || e === 'i64' ? 8 : 4;
}

/** A function being built: parameters, extra locals, unique labels. */
export class FnBuilder {
  readonly vars: WType[] = [];
  private labels = 0;
  constructor(
    readonly W: WasmModule,
    readonly params: WType[],
  ) {}

  local(e: Elem): number {
    this.vars.push(this.W.type(e));
    return this.params.length + this.vars.length - 1;
  }

  /** A v128 local (SIMD lanes). */
  vlocal(): number {
    this.vars.push(this.W.b.v128);
    return this.params.length + this.vars.length - 1;
  }

  get(index: number, e: Elem): Ref {
    return this.W.m.local.get(index, this.W.type(e));
  }

  set(index: number, value: Ref): Ref {
    return this.W.m.local.set(index, value);
  }

  label(prefix: string): string {
    return `${prefix}${this.labels++}`;
  }

  /** for (v = lo; v < end; v++) body, with `end` evaluated once; v and end are i32 locals. */
  forLoop(v: number, end: number, lo: Ref, hi: Ref, body: Ref[]): Ref {
    const m = this.W.m;
    const b = this.label('B');
    const l = this.label('L');
    const gv = (): Ref => m.local.get(v, this.W.b.i32);
    const ge = (): Ref => m.local.get(end, this.W.b.i32);
    return m.block(null, [
      m.local.set(v, lo),
      m.local.set(end, hi),
      m.block(b, [
        m.br_if(b, m.i32.ge_s(gv(), ge())),
        m.loop(
          l,
          m.block(null, [...body, m.local.set(v, m.i32.add(gv(), m.i32.const(1))), m.br_if(l, m.i32.lt_s(gv(), ge()))]),
        ),
      ]),
    ]);
  }
}

/** A module under construction. */
export class WasmModule {
  readonly m: BinaryenNs.Module;
  private readonly imported = new Set<string>();
  private readonly helpers = new Set<string>();

  constructor(
    readonly b: Binaryen,
    readonly shared: boolean,
    readonly maxPages: number,
  ) {
    this.m = new b.Module();
    const F = b.Features;
    this.m.setFeatures(
      F.MutableGlobals | F.NontrappingFPToInt | F.BulkMemory | F.SignExt | F.SIMD128 | (shared ? F.Atomics : 0),
    );
    this.m.setMemory(1, maxPages, null, [], shared, false, '0');
    this.m.addMemoryImport('0', 'env', 'memory', shared);
  }

  type(e: Elem): WType {
    const b = this.b;
    return { f32: b.f32, f64: b.f64, i32: b.i32, i64: b.i64 }[kindOf(e)];
  }

  /** A constant of element type e; ±inf of an integer type is its max / min. */
  constant(value: number, e: Elem): Ref {
    const m = this.m;
    switch (kindOf(e)) {
      case 'f32':
        return m.f32.const(value);
      case 'f64':
        return m.f64.const(value);
      case 'i64': {
        const big =
          value === Infinity
            ? 0x7fffffffffffffffn
            : value === -Infinity
              ? -0x8000000000000000n
              : BigInt(Math.trunc(Number.isNaN(value) ? 0 : value));
        return m.i64.const(BigInt.asIntN(64, big));
      }
      case 'i32':
        if (e === 'bool') return m.i32.const(value !== 0 ? 1 : 0);
        if (value === Infinity) return m.i32.const(INT32_MAX);
        if (value === -Infinity) return m.i32.const(INT32_MIN);
        return m.i32.const(Number.isNaN(value) ? 0 : Math.trunc(value) | 0);
    }
  }

  /** value != 0 as an i32 0/1 (NaN counts as true, as in the interpreter). */
  truthy(x: Ref, from: Elem): Ref {
    const m = this.m;
    switch (kindOf(from)) {
      case 'f32':
        return m.f32.ne(x, m.f32.const(0));
      case 'f64':
        return m.f64.ne(x, m.f64.const(0));
      case 'i64':
        return m.i64.ne(x, m.i64.const(0));
      case 'i32':
        return m.i32.ne(x, m.i32.const(0));
    }
  }

  /** Converts x from one element type to another (bool: != 0; float to int: truncating, saturating). */
  convert(x: Ref, from: Elem, to: Elem): Ref {
    if (from === to) return x;
    if (to === 'bool') return this.truthy(x, from);
    const [f, t] = [kindOf(from), kindOf(to)];
    if (f === t) return x;
    const m = this.m;
    switch (t) {
      case 'f32':
        return f === 'f64' ? m.f32.demote(x) : f === 'i64' ? m.f32.convert_s.i64(x) : m.f32.convert_s.i32(x);
      case 'f64':
        return f === 'f32' ? m.f64.promote(x) : f === 'i64' ? m.f64.convert_s.i64(x) : m.f64.convert_s.i32(x);
      case 'i64':
        return f === 'i32' ? m.i64.extend_s(x) : f === 'f32' ? m.i64.trunc_s_sat.f32(x) : m.i64.trunc_s_sat.f64(x);
      case 'i32':
        return f === 'i64' ? m.i32.wrap(x) : f === 'f32' ? m.i32.trunc_s_sat.f32(x) : m.i32.trunc_s_sat.f64(x);
    }
  }

  /** Address base + index * size of e (i32 arithmetic; addresses are unsigned). */
  private addr(base: Ref, index: Ref, e: Elem): Ref {
    const m = this.m;
    const shift = elemBytes(e) === 8 ? 3 : 2;
    return m.i32.add(base, m.i32.shl(index, m.i32.const(shift)));
  }

  load(e: Elem, base: Ref, index: Ref): Ref {
    const m = this.m;
    const a = this.addr(base, index, e);
    switch (kindOf(e)) {
      case 'f32':
        return m.f32.load(0, 4, a);
      case 'f64':
        return m.f64.load(0, 8, a);
      case 'i64':
        return m.i64.load(0, 8, a);
      case 'i32':
        return m.i32.load(0, 4, a);
    }
  }

  store(e: Elem, base: Ref, index: Ref, value: Ref): Ref {
    const m = this.m;
    const a = this.addr(base, index, e);
    switch (kindOf(e)) {
      case 'f32':
        return m.f32.store(0, 4, a, value);
      case 'f64':
        return m.f64.store(0, 8, a, value);
      case 'i64':
        return m.i64.store(0, 8, a, value);
      case 'i32':
        return m.i32.store(0, 4, a, value);
    }
  }

  /** A host function of module "math" (Math.exp etc.), f64 in and out. */
  hostCall(name: 'exp' | 'log' | 'tanh' | 'pow', args: Ref[]): Ref {
    const b = this.b;
    if (!this.imported.has(name)) {
      this.imported.add(name);
      this.m.addFunctionImport(`math.${name}`, 'math', name, b.createType(args.map(() => b.f64)), b.f64);
    }
    return this.m.call(`math.${name}`, args, b.f64);
  }

  importedHosts(): string[] {
    return [...this.imported].sort();
  }

  /** Integer division truncating toward zero; a zero divisor yields 0, and x / -1 is -x (wrapping), never a trap. */
  idiv(kind: 'i32' | 'i64', a: Ref, d: Ref): Ref {
    const name = `idiv_${kind}`;
    const m = this.m;
    const b = this.b;
    if (!this.helpers.has(name)) {
      this.helpers.add(name);
      const T = kind === 'i32' ? b.i32 : b.i64;
      const I = kind === 'i32' ? m.i32 : m.i64;
      const c = (v: number): Ref => (kind === 'i32' ? m.i32.const(v) : m.i64.const(BigInt(v)));
      const ga = (): Ref => m.local.get(0, T);
      const gd = (): Ref => m.local.get(1, T);
      const body = m.if(I.eq(gd(), c(0)), c(0), m.if(I.eq(gd(), c(-1)), I.sub(c(0), ga()), I.div_s(ga(), gd())));
      this.m.addFunction(name, b.createType([T, T]), T, [], body);
    }
    return m.call(name, [a, d], kind === 'i32' ? b.i32 : b.i64);
  }

  addExportedFunction(name: string, params: WType[], vars: WType[], body: Ref[]): void {
    const b = this.b;
    this.m.addFunction(name, b.createType(params), b.none, vars, this.m.block(null, body));
    this.m.addFunctionExport(name, name);
  }

  /** Validates (throws when invalid), optimises at level 3 and validates again; returns the binary. */
  finish(what: string): Uint8Array {
    if (!this.m.validate())
      throw new Error(`wasm emitter: the module of ${what} does not validate:\n${this.m.emitText().slice(0, 4000)}`);
    this.b.setOptimizeLevel(3);
    this.b.setShrinkLevel(0);
    this.m.optimize();
    if (!this.m.validate()) throw new Error(`wasm emitter: the optimised module of ${what} does not validate`);
    const bin = this.m.emitBinary();
    return bin;
  }

  text(): string {
    return this.m.emitText();
  }

  dispose(): void {
    this.m.dispose();
  }
}
