/**
 * Loop-IR expressions and statements printed as C++ for Vitis HLS (and g++
 * in C simulation). The arithmetic follows the wasm emitter's rules, so a
 * kernel computes what the reference interpreter computes up to f32
 * rounding: each node in its element type; comparisons of mixed kinds in
 * double; integer division truncating with a zero divisor giving 0; exp,
 * log, tanh, pow and sigmoid in double; relu/min/max propagating NaN
 * (helpers in hls-templates/kernel/dype_ops.h).
 *
 * Callers decide how buffers and variables are named through `Names`: a
 * design substitutes a streamed value for `A.vals[p]`, a window for `x[j]`.
 */
import type { LElem, LExpr, LStmt } from '../../ir/loops.js';

export interface Names {
  /** C++ text of a load of `buf` at `index` (index already printed). */
  load(buf: string, index: LExpr): string;
  /** C++ text of a variable (loop variable, local, size). */
  variable(name: string): string;
  /** Element type of a buffer and of a variable. */
  bufElem(buf: string): LElem;
  varElem(name: string): LElem;
}

export function cppType(e: LElem): string {
  switch (e) {
    case 'f32':
      return 'float';
    case 'f64':
      return 'double';
    case 'i64':
      return 'int64_t';
    default:
      return 'int32_t';
  }
}

const isFloat = (e: LElem): boolean => e === 'f32' || e === 'f64';

/** A C++ identifier for a buffer or value name (`r.next` -> `r_next`); names are validated identifiers plus dots. */
export function ident(name: string): string {
  const id = name.replace(/[^A-Za-z0-9_]/g, '_');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(id)) throw new Error(`hls: '${name}' cannot be made a C++ identifier`);
  return id;
}

export function cppConst(value: number, t: LElem): string {
  if (isFloat(t)) {
    const T = cppType(t);
    if (value === Infinity) return `std::numeric_limits<${T}>::infinity()`;
    if (value === -Infinity) return `(-std::numeric_limits<${T}>::infinity())`;
    if (Number.isNaN(value)) return `std::numeric_limits<${T}>::quiet_NaN()`;
    let s = String(value);
    if (!/[.eE]/.test(s)) s += '.0';
    return t === 'f32' ? `${s}f` : s;
  }
  if (t === 'bool') return value !== 0 ? '1' : '0';
  if (value === Infinity) return `std::numeric_limits<${cppType(t)}>::max()`;
  if (value === -Infinity) return `std::numeric_limits<${cppType(t)}>::min()`;
  return t === 'i64' ? `int64_t(${Math.trunc(value)}LL)` : `int32_t(${Math.trunc(value)})`;
}

export class CppPrinter {
  constructor(private readonly names: Names) {}

  typeOf(e: LExpr): LElem {
    switch (e.k) {
      case 'const':
        return e.type;
      case 'var':
        return this.names.varElem(e.name);
      case 'load':
        return this.names.bufElem(e.buf);
      case 'cast':
        return e.to;
      default:
        return e.type;
    }
  }

  /** e converted to element type `to`. */
  as(e: LExpr, to: LElem): string {
    const t = this.typeOf(e);
    const s = this.expr(e);
    if (t === to || (to === 'index' && t === 'i32') || (to === 'i32' && t === 'index')) return s;
    if (to === 'bool') return `(${s} != 0 ? 1 : 0)`;
    return `${cppType(to)}(${s})`;
  }

  private common(a: LElem, b: LElem): LElem {
    if (a === b) return a;
    const k = (x: LElem): LElem => (x === 'index' || x === 'bool' ? 'i32' : x);
    const [ka, kb] = [k(a), k(b)];
    if (ka === kb) return ka;
    if ((ka === 'i64' && kb === 'i32') || (kb === 'i64' && ka === 'i32')) return 'i64';
    return 'f64';
  }

  expr(e: LExpr): string {
    switch (e.k) {
      case 'const':
        return cppConst(e.value, e.type);
      case 'var':
        return this.names.variable(e.name);
      case 'load':
        return this.names.load(e.buf, e.index);
      case 'cast':
        return this.as(e.arg, e.to);
      case 'select':
        return `(${this.truthy(e.cond)} ? ${this.as(e.then, e.type)} : ${this.as(e.else, e.type)})`;
      case 'un':
        if (e.op === 'not') return `(${this.truthy(e.arg)} ? 0 : 1)`;
        return `(-${this.as(e.arg, e.type)})`;
      case 'call':
        return this.call(e);
      case 'bin':
        return this.bin(e);
    }
  }

  truthy(e: LExpr): string {
    return `(${this.expr(e)} != 0)`;
  }

  private bin(e: Extract<LExpr, { k: 'bin' }>): string {
    switch (e.op) {
      case '&&':
      case '||':
        return `((${this.truthy(e.lhs)} ${e.op} ${this.truthy(e.rhs)}) ? 1 : 0)`;
      case '<':
      case '<=':
      case '>':
      case '>=':
      case '==':
      case '!=': {
        const t = this.common(this.typeOf(e.lhs), this.typeOf(e.rhs));
        return `((${this.as(e.lhs, t)} ${e.op} ${this.as(e.rhs, t)}) ? 1 : 0)`;
      }
      default: {
        const t = e.type;
        const a = this.as(e.lhs, t);
        const b = this.as(e.rhs, t);
        if ((e.op === '/' || e.op === 'idiv') && !isFloat(t)) return `dype_idiv<${cppType(t)}>(${a}, ${b})`;
        return `(${a} ${e.op === 'idiv' ? '/' : e.op} ${b})`;
      }
    }
  }

  private call(e: Extract<LExpr, { k: 'call' }>): string {
    const t = e.type;
    const T = cppType(t);
    const args = e.args.map((a) => this.as(a, t));
    const dbl = e.args.map((a) => this.as(a, 'f64'));
    switch (e.fn) {
      case 'exp':
      case 'log':
      case 'tanh':
        return `${T}(std::${e.fn}(${dbl[0]}))`;
      case 'pow':
        return `${T}(std::pow(${dbl[0]}, ${dbl[1]}))`;
      case 'sigmoid':
        return `${T}(1.0 / (1.0 + std::exp(-(${dbl[0]}))))`;
      case 'sqrt':
        return isFloat(t) ? `std::sqrt(${args[0]})` : `${T}(std::sqrt(${dbl[0]}))`;
      case 'abs':
        return `dype_abs<${T}>(${args[0]})`;
      case 'relu':
        return `dype_relu<${T}>(${args[0]})`;
      case 'min':
      case 'max':
        return `dype_${e.fn}<${T}>(${args[0]}, ${args[1]})`;
    }
  }
}

/** Options for printing statements: pragmas a design adds to loops. */
export interface StmtOptions {
  /** Lines placed first inside a loop's body (pragmas), by loop variable; called for every loop. */
  loopPragmas(loop: Extract<LStmt, { k: 'for' }>, innermost: boolean): string[];
}

export function isInnermost(s: Extract<LStmt, { k: 'for' }>): boolean {
  const has = (ss: readonly LStmt[]): boolean => ss.some((x) => x.k === 'for' || (x.k === 'if' && (has(x.then) || has(x.else ?? []))));
  return !has(s.body);
}

/** Prints statements; `locals` receives the element type of every let so later expressions can be typed. */
export function printStmts(p: CppPrinter, ss: readonly LStmt[], locals: Map<string, LElem>, names: Names, opts: StmtOptions, indent: string): string[] {
  const out: string[] = [];
  for (const s of ss) {
    switch (s.k) {
      case 'for': {
        locals.set(s.var, 'index');
        const v = names.variable(s.var);
        out.push(`${indent}${ident(`L_${s.var}`)}: for (int32_t ${v} = ${p.as(s.lo, 'index')}; ${v} < ${p.as(s.hi, 'index')}; ${v}++) {`);
        for (const l of opts.loopPragmas(s, isInnermost(s))) out.push(`${indent}  ${l}`);
        out.push(...printStmts(p, s.body, locals, names, opts, `${indent}  `));
        out.push(`${indent}}`);
        break;
      }
      case 'let':
        locals.set(s.var, s.type);
        out.push(`${indent}${cppType(s.type)} ${names.variable(s.var)} = ${p.as(s.value, s.type)};`);
        break;
      case 'set':
        out.push(`${indent}${names.variable(s.var)} = ${p.as(s.value, names.varElem(s.var))};`);
        break;
      case 'store':
        out.push(`${indent}${names.load(s.buf, s.index)} = ${p.as(s.value, names.bufElem(s.buf))};`);
        break;
      case 'if':
        out.push(`${indent}if (${p.truthy(s.cond)}) {`);
        out.push(...printStmts(p, s.then, locals, names, opts, `${indent}  `));
        if (s.else) {
          out.push(`${indent}} else {`);
          out.push(...printStmts(p, s.else, locals, names, opts, `${indent}  `));
        }
        out.push(`${indent}}`);
        break;
    }
  }
  return out;
}
