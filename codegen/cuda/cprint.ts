/**
 * Prints loop-IR expressions and statements as CUDA C++ (device code):
 * the CUDA dialect of codegen/c/expr.ts, names and the statement printer. The
 * rules are the wasm emitter's (codegen/wasm/emit.ts header): every operand
 * is converted to its node's element type, comparisons of different kinds
 * compare in double, integer division truncates and a zero divisor gives 0,
 * min/max/relu keep NaN, ±inf is the identity of a float min/max and the
 * type's MAX/MIN that of an integer one. exp, log, tanh, pow and sigmoid use
 * the float function of the node's type (expf for f32), not double as the
 * interpreter does: a difference of an ulp or two that the check tolerates.
 */
import type { LElem, LExpr, LStmt, LoopFunc } from '../../ir/loops.js';
import { CExprPrinter, isFloat, NATIVE_BOOL, type CDialect, type LLoad } from '../c/expr.js';
import { Scope, type NameContext } from './names.js';
import { exprVars, stmtExprs } from './nest.js';

export type { LLoad };

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
    if (had !== undefined && had !== t)
      throw new Error(`cuda emitter: ${this.f.name}: variable '${v}' declared as ${had} and ${t}`);
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

/** CUDA C++ spellings: native bool, C casts, float math functions for float results, dy_ helpers of program.cu.hbs. */
export const CUDA_DIALECT: CDialect = {
  constant: cConst,
  bool: NATIVE_BOOL,
  same: (from, to) => cType(from) === cType(to),
  convert: (s, t) => `((${cType(t)})${s})`,
  idiv: (a, b) => `dy_idiv(${a}, ${b})`,
  unsigned: (t) => (t === 'i64' ? 'unsigned long long' : 'unsigned'),
  helper: (fn, _t, args) => `dy_${fn}(${args.join(', ')})`,
  mathIn: (_fn, t) => isFloat(t),
  math: (fn, t, args) =>
    fn === 'sigmoid' || fn === 'pow'
      ? `dy_${fn}(${args.join(', ')})`
      : `${fn}${t === 'f32' ? 'f' : ''}(${args.join(', ')})`,
};

/**
 * An index with a product in 64-bit arithmetic: `B[j * k + c]` passes 2^31
 * once rows x K does, long before any size does (sizes and indices are int).
 * Sums and differences above the product are widened with it; an index
 * without a product stays int, as does everything it is built from.
 */
function widened(e: LExpr): LExpr {
  if (e.k !== 'bin' || (e.type !== 'index' && e.type !== 'i32') || !['+', '-', '*'].includes(e.op)) return e;
  const wide: LExpr = { ...e, type: 'i64', lhs: widened(e.lhs), rhs: widened(e.rhs) };
  WIDENED.add(wide);
  return wide;
}

/** Index arithmetic made 64-bit by `widened`: it cannot overflow, so it is printed signed, not wrapping. */
const WIDENED = new WeakSet<LExpr>();

function hasProduct(e: LExpr): boolean {
  return e.k === 'bin' && ['+', '-', '*'].includes(e.op) && (e.op === '*' || hasProduct(e.lhs) || hasProduct(e.rhs));
}

/** Expression printer; `rename` substitutes C text for a variable (a loop variable rebound by a schedule). */
export class ExprPrinter extends CExprPrinter {
  constructor(
    readonly names: FuncNames,
    private readonly rename: ReadonlyMap<string, string> = new Map(),
    /** Loads a schedule serves from elsewhere (shared-memory tiles and caches): C text, or undefined for a plain load. */
    private readonly loadHook?: (e: LLoad) => string | undefined,
  ) {
    super(CUDA_DIALECT);
  }

  with(rename: ReadonlyMap<string, string>, loadHook?: (e: LLoad) => string | undefined): ExprPrinter {
    return new ExprPrinter(this.names, new Map([...this.rename, ...rename]), loadHook ?? this.loadHook);
  }

  /** This printer with more renames and a load hook tried before its own. */
  over(rename: ReadonlyMap<string, string>, loadHook: (e: LLoad) => string | undefined): ExprPrinter {
    const own = this.loadHook;
    return new ExprPrinter(this.names, new Map([...this.rename, ...rename]), (e) => loadHook(e) ?? own?.(e));
  }

  protected override wraps(e: Extract<LExpr, { k: 'bin' | 'un' }>): boolean {
    return super.wraps(e) && !WIDENED.has(e);
  }

  varElem(name: string): LElem {
    const t = this.names.vars.get(name);
    if (t === undefined) throw new Error(`cuda emitter: ${this.names.f.name}: unknown variable '${name}'`);
    return t;
  }

  bufElem(buf: string): LElem {
    return this.names.buf(buf).elem;
  }

  var(name: string): string {
    return this.rename.get(name) ?? this.names.v(name);
  }

  load(e: LLoad): string {
    const hooked = this.loadHook?.(e);
    if (hooked !== undefined) return hooked;
    return `${this.names.buf(e.buf).c}[${this.index(e.index)}]`;
  }

  /** A buffer index: 64-bit where it multiplies (see `widened`). */
  index(e: LExpr): string {
    return hasProduct(e) ? this.as(widened(e), 'i64') : this.as(e, 'index');
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
        const out = [`${ind}if (${p.truthy(s.cond)}) {`, ...this.block(s.then, `${ind}  `)];
        if (s.else) out.push(`${ind}} else {`, ...this.block(s.else, `${ind}  `));
        out.push(`${ind}}`);
        return out;
      }
    }
  }

  /** s by the rules of StmtPrinter.stmt (a subclass's forStmt and storeStmt still apply) with printer q in effect. */
  baseStmt(q: ExprPrinter, s: LStmt, ind: string): string[] {
    const p = this.p;
    this.p = q;
    try {
      return StmtPrinter.prototype.stmt.call(this, s, ind);
    } finally {
      this.p = p;
    }
  }

  forStmt(s: Extract<LStmt, { k: 'for' }>, ind: string): string[] {
    const p = this.p;
    const v = p.var(s.var);
    const end = this.fresh('end');
    return [
      `${ind}for (int ${v} = ${p.as(s.lo, 'index')}, ${end} = ${p.as(s.hi, 'index')}; ${v} < ${end}; ++${v}) {`,
      ...this.block(s.body, `${ind}  `),
      `${ind}}`,
    ];
  }

  storeLine(s: Extract<LStmt, { k: 'store' }>): string {
    const p = this.p;
    const b = p.names.buf(s.buf);
    const value = b.elem === 'bool' ? `(${p.as(s.value, 'bool')} ? 1 : 0)` : p.as(s.value, b.elem);
    return `${b.c}[${p.index(s.index)}] = ${value};`;
  }

  storeStmt(s: Extract<LStmt, { k: 'store' }>, ind: string): string[] {
    return [`${ind}${this.storeLine(s)}`];
  }
}
