/**
 * Prints loop-IR expressions and statements as CUDA C++ (device code). The
 * rules are the wasm emitter's (codegen/wasm/emit.ts header): every operand
 * is converted to its node's element type, comparisons of different kinds
 * compare in double, integer division truncates and a zero divisor gives 0,
 * min/max/relu keep NaN, ±inf is the identity of a float min/max and the
 * type's MAX/MIN that of an integer one. exp, log, tanh, pow and sigmoid use
 * the float function of the node's type (expf for f32), not double as the
 * interpreter does: a difference of an ulp or two that the check tolerates.
 */
import type { LElem, LExpr, LStmt, LoopFunc } from '../../ir/loops.js';
import { Scope, type NameContext } from './names.js';
import { exprVars, stmtExprs } from './nest.js';

export type LLoad = Extract<LExpr, { k: 'load' }>;

/** C type of a value in registers. */
export function cType(t: LElem): string {
  switch (t) {
    case 'f32':
      return 'float';
    case 'f64':
      return 'double';
    case 'i64':
      return 'long long';
    case 'bool':
      return 'bool';
    case 'i32':
    case 'index':
      return 'int';
  }
}

/** C type of a buffer element: bool is stored as one int (0 or 1), as the wasm backend stores it. */
export function storageType(t: LElem): string {
  return t === 'bool' ? 'int' : cType(t);
}

type Kind = 'f32' | 'f64' | 'i32' | 'i64';
function kindOf(t: LElem): Kind {
  return t === 'f32' || t === 'f64' || t === 'i64' ? t : 'i32';
}
const isFloat = (t: LElem): boolean => t === 'f32' || t === 'f64';

/** A numeric literal of type t (C syntax; infinities of integer types are the type's extremes). */
export function cConst(value: number, t: LElem): string {
  if (t === 'bool') return value !== 0 ? 'true' : 'false';
  if (isFloat(t)) {
    const f = t === 'f32';
    if (value === Infinity) return f ? 'INFINITY' : '((double)INFINITY)';
    if (value === -Infinity) return f ? '(-INFINITY)' : '(-(double)INFINITY)';
    if (Number.isNaN(value)) return f ? 'NAN' : '((double)NAN)';
    const v = f ? Math.fround(value) : value;
    let s = Object.is(v, -0) ? '-0.0' : String(v);
    if (!/[.eE]/.test(s)) s += '.0';
    const lit = `${s}${f ? 'f' : ''}`;
    return v < 0 || Object.is(v, -0) ? `(${lit})` : lit;
  }
  if (t === 'i64') {
    if (value === Infinity || value >= 2 ** 63) return 'LLONG_MAX';
    if (value === -Infinity || value <= -(2 ** 63)) return 'LLONG_MIN';
    return value < 0 ? `(${BigInt(Math.trunc(value))}LL)` : `${BigInt(Math.trunc(value))}LL`;
  }
  if (value === Infinity || value >= 2 ** 31) return 'INT_MAX';
  if (value === -Infinity || value <= -(2 ** 31)) return 'INT_MIN';
  return value < 0 ? `(${Math.trunc(value)})` : String(Math.trunc(value));
}

export interface BufInfo {
  c: string;
  elem: LElem;
}

/**
 * Names and types of one LoopFunc in C: buffers, sizes and every variable
 * its body declares share one injective Scope, so no mangled name shadows
 * another.
 */
export class FuncNames {
  readonly scope: Scope;
  readonly bufs = new Map<string, BufInfo>();
  readonly sizes = new Map<string, string>();
  readonly vars = new Map<string, LElem>();
  /** Variables some expression reads (a let nobody reads is not printed). */
  readonly used = new Set<string>();

  constructor(
    readonly f: LoopFunc,
    ctx: NameContext,
  ) {
    this.scope = new Scope(ctx, `op ${f.op}`);
    for (const b of f.buffers) this.bufs.set(b.name, { c: this.scope.add(b.name), elem: b.elem });
    for (const s of f.sizes) {
      this.sizes.set(s, this.scope.add(s));
      this.vars.set(s, 'index');
    }
    const visit = (ss: readonly LStmt[]): void => {
      for (const s of ss) {
        if (s.k === 'for') {
          this.declare(s.var, 'index');
          visit(s.body);
        } else if (s.k === 'let') this.declare(s.var, s.type);
        else if (s.k === 'if') {
          visit(s.then);
          if (s.else) visit(s.else);
        }
      }
    };
    visit(f.body);
    for (const e of stmtExprs(f.body)) exprVars(e, this.used);
  }

  private declare(v: string, t: LElem): void {
    const had = this.vars.get(v);
    if (had !== undefined && had !== t) throw new Error(`cuda emitter: ${this.f.name}: variable '${v}' declared as ${had} and ${t}`);
    this.vars.set(v, t);
    this.scope.add(v);
  }

  v(name: string): string {
    return this.scope.get(name);
  }

  buf(name: string): BufInfo {
    const b = this.bufs.get(name);
    if (!b) throw new Error(`cuda emitter: ${this.f.name}: unknown buffer '${name}'`);
    return b;
  }
}

/** Expression printer; `rename` substitutes C text for a variable (a loop variable rebound by a schedule). */
export class ExprPrinter {
  constructor(
    readonly names: FuncNames,
    private readonly rename: ReadonlyMap<string, string> = new Map(),
    /** Loads a schedule serves from elsewhere (shared-memory tiles and caches): C text, or undefined for a plain load. */
    private readonly loadHook?: (e: LLoad) => string | undefined,
  ) {}

  with(rename: ReadonlyMap<string, string>, loadHook?: (e: LLoad) => string | undefined): ExprPrinter {
    return new ExprPrinter(this.names, new Map([...this.rename, ...rename]), loadHook ?? this.loadHook);
  }

  typeOf(e: LExpr): LElem {
    switch (e.k) {
      case 'const':
        return e.type;
      case 'var': {
        const t = this.names.vars.get(e.name);
        if (t === undefined) throw new Error(`cuda emitter: ${this.names.f.name}: unknown variable '${e.name}'`);
        return t;
      }
      case 'load':
        return this.names.buf(e.buf).elem;
      case 'cast':
        return e.to;
      default:
        return e.type;
    }
  }

  /** e converted to type `to` (no cast when it already has it). */
  as(e: LExpr, to: LElem): string {
    const from = this.typeOf(e);
    const s = this.expr(e);
    if (cType(from) === cType(to) && from !== 'bool') return s;
    if (from === 'bool' && to === 'bool') return s;
    if (to === 'bool') return `(${s} != 0)`;
    return `((${cType(to)})${s})`;
  }

  private truthy(e: LExpr): string {
    const t = this.typeOf(e);
    return t === 'bool' ? this.expr(e) : `(${this.expr(e)} != 0)`;
  }

  private common(a: LElem, b: LElem): LElem {
    const [ka, kb] = [kindOf(a), kindOf(b)];
    if (ka === kb) return ka;
    if ((ka === 'i64' && kb === 'i32') || (kb === 'i64' && ka === 'i32')) return 'i64';
    return 'f64';
  }

  var(name: string): string {
    return this.rename.get(name) ?? this.names.v(name);
  }

  load(e: LLoad): string {
    const hooked = this.loadHook?.(e);
    if (hooked !== undefined) return hooked;
    return `${this.names.buf(e.buf).c}[${this.as(e.index, 'index')}]`;
  }

  expr(e: LExpr): string {
    switch (e.k) {
      case 'const':
        return cConst(e.value, e.type);
      case 'var':
        return this.var(e.name);
      case 'load':
        return this.load(e);
      case 'cast':
        return this.as(e.arg, e.to);
      case 'un':
        if (e.op === 'not') return `(!${this.truthy(e.arg)})`;
        return `(-${this.as(e.arg, e.type)})`;
      case 'select':
        return `(${this.truthy(e.cond)} ? ${this.as(e.then, e.type)} : ${this.as(e.else, e.type)})`;
      case 'call':
        return this.call(e);
      case 'bin':
        return this.bin(e);
    }
  }

  private bin(e: Extract<LExpr, { k: 'bin' }>): string {
    switch (e.op) {
      case '&&':
      case '||':
        return `(${this.truthy(e.lhs)} ${e.op} ${this.truthy(e.rhs)})`;
      case '<':
      case '<=':
      case '>':
      case '>=':
      case '==':
      case '!=': {
        const t = this.common(this.typeOf(e.lhs), this.typeOf(e.rhs));
        return `(${this.as(e.lhs, t)} ${e.op} ${this.as(e.rhs, t)})`;
      }
      case 'idiv':
        return `dy_idiv(${this.as(e.lhs, e.type)}, ${this.as(e.rhs, e.type)})`;
      case '/':
        return isFloat(e.type) ? `(${this.as(e.lhs, e.type)} / ${this.as(e.rhs, e.type)})` : `dy_idiv(${this.as(e.lhs, e.type)}, ${this.as(e.rhs, e.type)})`;
      default:
        return `(${this.as(e.lhs, e.type)} ${e.op} ${this.as(e.rhs, e.type)})`;
    }
  }

  private call(e: Extract<LExpr, { k: 'call' }>): string {
    const t = e.type;
    const a = (i: number, to: LElem = t): string => this.as(e.args[i]!, to);
    const f32 = t === 'f32';
    switch (e.fn) {
      case 'exp':
      case 'log':
      case 'tanh':
        if (isFloat(t)) return `${e.fn}${f32 ? 'f' : ''}(${a(0)})`;
        return `((${cType(t)})${e.fn}(${a(0, 'f64')}))`;
      case 'pow':
        if (isFloat(t)) return `pow${f32 ? 'f' : ''}(${a(0)}, ${a(1)})`;
        return `((${cType(t)})pow(${a(0, 'f64')}, ${a(1, 'f64')}))`;
      case 'sqrt':
        if (isFloat(t)) return `sqrt${f32 ? 'f' : ''}(${a(0)})`;
        return `((${cType(t)})sqrt(${a(0, 'f64')}))`;
      case 'sigmoid':
        if (isFloat(t)) return `dy_sigmoid(${a(0)})`;
        return `((${cType(t)})dy_sigmoid(${a(0, 'f64')}))`;
      case 'abs':
        return `dy_abs(${a(0)})`;
      case 'relu':
        return `dy_relu(${a(0)})`;
      case 'min':
      case 'max':
        return `dy_${e.fn}(${a(0)}, ${a(1)})`;
    }
  }
}

/** Prints statements with default rules; schedules override `forStmt` and `storeStmt`. */
export class StmtPrinter {
  private ends = 0;

  constructor(public p: ExprPrinter) {}

  fresh(prefix: string): string {
    return `dy_${prefix}${this.ends++}`;
  }

  block(ss: readonly LStmt[], ind: string): string[] {
    return ss.flatMap((s) => this.stmt(s, ind));
  }

  stmt(s: LStmt, ind: string): string[] {
    const p = this.p;
    switch (s.k) {
      case 'for':
        return this.forStmt(s, ind);
      case 'let':
        // A let nobody reads (the column of an entry whose value alone is summed) is dropped; loads are pure.
        if (!p.names.used.has(s.var)) return [];
        return [`${ind}${cType(s.type)} ${p.var(s.var)} = ${p.as(s.value, s.type)};`];
      case 'set':
        return [`${ind}${p.var(s.var)} = ${p.as(s.value, p.names.vars.get(s.var)!)};`];
      case 'store':
        return this.storeStmt(s, ind);
      case 'if': {
        const cond = p.typeOf(s.cond) === 'bool' ? p.expr(s.cond) : `(${p.expr(s.cond)} != 0)`;
        const out = [`${ind}if (${cond}) {`, ...this.block(s.then, `${ind}  `)];
        if (s.else) out.push(`${ind}} else {`, ...this.block(s.else, `${ind}  `));
        out.push(`${ind}}`);
        return out;
      }
    }
  }

  forStmt(s: Extract<LStmt, { k: 'for' }>, ind: string): string[] {
    const p = this.p;
    const v = p.var(s.var);
    const end = this.fresh('end');
    return [`${ind}for (int ${v} = ${p.as(s.lo, 'index')}, ${end} = ${p.as(s.hi, 'index')}; ${v} < ${end}; ++${v}) {`, ...this.block(s.body, `${ind}  `), `${ind}}`];
  }

  storeLine(s: Extract<LStmt, { k: 'store' }>): string {
    const p = this.p;
    const b = p.names.buf(s.buf);
    const value = b.elem === 'bool' ? `(${p.as(s.value, 'bool')} ? 1 : 0)` : p.as(s.value, b.elem);
    return `${b.c}[${p.as(s.index, 'index')}] = ${value};`;
  }

  storeStmt(s: Extract<LStmt, { k: 'store' }>, ind: string): string[] {
    return [`${ind}${this.storeLine(s)}`];
  }
}
