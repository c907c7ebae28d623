/**
 * The C-family printer of loop-IR expressions shared by the CUDA and HLS
 * emitters. The arithmetic is the wasm emitter's (codegen/wasm/emit.ts
 * header): every operand is converted to its node's element type,
 * comparisons of different kinds compare in their common kind (double when
 * int and float meet), integer division goes to a helper that truncates and
 * gives 0 for a zero divisor, and integer +, -, * and negation wrap in
 * their width (computed in the unsigned type of that width: a signed
 * overflow would be undefined in C and C++, and gcc -O3 folded
 * `x * x + 2147483647` to 2147483647). What a target spells its own way is a
 * `CDialect`; how it names variables and loads is left to the subclass.
 */
import type { LElem, LExpr, LFunc } from '../../ir/loops.js';

export type LLoad = Extract<LExpr, { k: 'load' }>;
type LBin = Extract<LExpr, { k: 'bin' }>;
type LCall = Extract<LExpr, { k: 'call' }>;

export const isFloat = (t: LElem): boolean => t === 'f32' || t === 'f64';

/** Kind a value computes in: bool and index are 32-bit integers. */
export type Kind = 'f32' | 'f64' | 'i32' | 'i64';
export function kindOf(t: LElem): Kind {
  return t === 'f32' || t === 'f64' || t === 'i64' ? t : 'i32';
}

/** Type two compared operands are converted to: equal types stay, i32 with i64 is i64, any other mix is f64. */
export function commonType(a: LElem, b: LElem): LElem {
  if (a === b) return a;
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka === kb) return ka;
  return ka !== 'f32' && ka !== 'f64' && kb !== 'f32' && kb !== 'f64' ? 'i64' : 'f64';
}

const COMPARISONS: ReadonlySet<string> = new Set(['<', '<=', '>', '>=', '==', '!=']);

/** How a target represents bool values: C/C++ `bool`, or an int holding 0 or 1. */
export interface BoolRep {
  /** C text of a condition from a value of type t. */
  truthy(s: string, t: LElem): string;
  /** A value of type bool from C text that is a condition (comparison or logical operator, unparenthesised). */
  fromCond(c: string): string;
  /** Negation of a condition. */
  not(cond: string): string;
  /** A value of type bool from a non-bool number. */
  fromNumber(s: string): string;
}

export const NATIVE_BOOL: BoolRep = {
  truthy: (s, t) => (t === 'bool' ? s : `(${s} != 0)`),
  fromCond: (c) => `(${c})`,
  not: (c) => `(!${c})`,
  fromNumber: (s) => `(${s} != 0)`,
};

export const INT_BOOL: BoolRep = {
  truthy: (s) => `(${s} != 0)`,
  fromCond: (c) => `((${c}) ? 1 : 0)`,
  not: (c) => `(${c} ? 0 : 1)`,
  fromNumber: (s) => `(${s} != 0 ? 1 : 0)`,
};

/** What differs between the C-family targets. */
export interface CDialect {
  /** A literal of type t. */
  constant(value: number, t: LElem): string;
  bool: BoolRep;
  /** Whether a value of type `from` already is one of type `to` (no conversion printed). */
  same(from: LElem, to: LElem): boolean;
  /** C text of s (a number) converted to the non-bool type t. */
  convert(s: string, t: LElem): string;
  /** Integer division helper call (t integer). */
  idiv(a: string, b: string, t: LElem): string;
  /** The unsigned type of integer type t's width, which +, - and * on t compute in so that they wrap. */
  unsigned(t: 'i32' | 'i64'): string;
  /** abs, relu, min, max: helper call on operands of type t. */
  helper(fn: 'abs' | 'relu' | 'min' | 'max', t: LElem, args: readonly string[]): string;
  /**
   * A select of two values of type t, both already computed (a target whose compiler mistranslates `c ? a : b`
   * over loads prints a call; the others leave it undefined for the plain conditional).
   */
  select?(cond: string, a: string, b: string, t: LElem): string;
  /** Whether math function fn of a result of type t is computed in t (else in double, then converted). */
  mathIn(fn: MathFn, t: LElem): boolean;
  /** Math function fn on operands already of type t (t is the result's type or f64). */
  math(fn: MathFn, t: LElem, args: readonly string[]): string;
}

export type MathFn = Exclude<LFunc, 'abs' | 'relu' | 'min' | 'max'>;

/** Prints expressions in a dialect; subclasses say how variables and loads are named and typed. */
export abstract class CExprPrinter {
  constructor(readonly dialect: CDialect) {}

  abstract varElem(name: string): LElem;
  abstract bufElem(buf: string): LElem;
  abstract var(name: string): string;
  abstract load(e: LLoad): string;

  typeOf(e: LExpr): LElem {
    switch (e.k) {
      case 'const':
        return e.type;
      case 'var':
        return this.varElem(e.name);
      case 'load':
        return this.bufElem(e.buf);
      case 'cast':
        return e.to;
      default:
        return e.type;
    }
  }

  /** e converted to type `to` (no conversion when it already has it). */
  as(e: LExpr, to: LElem): string {
    const from = this.typeOf(e);
    const s = this.expr(e);
    if (this.dialect.same(from, to)) return s;
    if (to === 'bool') return this.dialect.bool.fromNumber(s);
    return this.dialect.convert(s, to);
  }

  /** Whether arithmetic node e wraps in its integer width (element integers; not a target's own index arithmetic). */
  protected wraps(e: Extract<LExpr, { k: 'bin' | 'un' }>): boolean {
    return e.type === 'i32' || e.type === 'i64';
  }

  truthy(e: LExpr): string {
    return this.dialect.bool.truthy(this.expr(e), this.typeOf(e));
  }

  expr(e: LExpr): string {
    switch (e.k) {
      case 'const':
        return this.dialect.constant(e.value, e.type);
      case 'var':
        return this.var(e.name);
      case 'load':
        return this.load(e);
      case 'cast':
        return this.as(e.arg, e.to);
      case 'un': {
        if (e.op === 'not') return this.dialect.bool.not(this.truthy(e.arg));
        const a = this.as(e.arg, e.type);
        if (this.wraps(e)) {
          const u = this.dialect.unsigned(e.type as 'i32' | 'i64');
          return this.dialect.convert(`((${u})0 - (${u})${a})`, e.type);
        }
        return `(-${a})`;
      }
      case 'select': {
        const [c, a, b] = [this.truthy(e.cond), this.as(e.then, e.type), this.as(e.else, e.type)];
        return this.dialect.select?.(c, a, b, e.type) ?? `(${c} ? ${a} : ${b})`;
      }
      case 'call':
        return this.call(e);
      case 'bin':
        return this.bin(e);
    }
  }

  private bin(e: LBin): string {
    const D = this.dialect;
    if (e.op === '&&' || e.op === '||') return D.bool.fromCond(`${this.truthy(e.lhs)} ${e.op} ${this.truthy(e.rhs)}`);
    if (COMPARISONS.has(e.op)) {
      const t = commonType(this.typeOf(e.lhs), this.typeOf(e.rhs));
      return D.bool.fromCond(`${this.as(e.lhs, t)} ${e.op} ${this.as(e.rhs, t)}`);
    }
    const t = e.type;
    const a = this.as(e.lhs, t);
    const b = this.as(e.rhs, t);
    // Float `idiv` is plain division, as in the wasm emitter (lowering only makes idiv of integers).
    if (e.op === '/' || e.op === 'idiv') return isFloat(t) ? `(${a} / ${b})` : D.idiv(a, b, t);
    if (this.wraps(e)) {
      const u = D.unsigned(t as 'i32' | 'i64');
      return D.convert(`((${u})${a} ${e.op} (${u})${b})`, t);
    }
    return `(${a} ${e.op} ${b})`;
  }

  private call(e: LCall): string {
    const t = e.type;
    const fn = e.fn;
    if (fn === 'abs' || fn === 'relu' || fn === 'min' || fn === 'max') {
      return this.dialect.helper(
        fn,
        t,
        e.args.map((a) => this.as(a, t)),
      );
    }
    const inT = this.dialect.mathIn(fn, t);
    const at: LElem = inT ? t : 'f64';
    const call = this.dialect.math(
      fn,
      at,
      e.args.map((a) => this.as(a, at)),
    );
    return inT ? call : this.dialect.convert(call, t);
  }
}
