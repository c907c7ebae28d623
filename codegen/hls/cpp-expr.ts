/**
 * Loop-IR expressions and statements printed as C++ for Vitis HLS (and g++
 * in C simulation): the HLS dialect of codegen/c/expr.ts and a statement
 * printer. The arithmetic follows the wasm emitter's rules, so a
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
import { CExprPrinter, INT_BOOL, isFloat, type CDialect, type LLoad } from '../c/expr.js';

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

/** Vitis HLS C++ spellings: bool as 0/1 int32_t, functional casts, math in double (except sqrt of a float), dype_ helpers of dype_ops.h. */
export const HLS_DIALECT: CDialect = {
  constant: cppConst,
  bool: INT_BOOL,
  same: (from, to) => from === to || (to === 'index' && from === 'i32') || (to === 'i32' && from === 'index'),
  convert: (s, t) => `${cppType(t)}(${s})`,
  idiv: (a, b, t) => `dype_idiv<${cppType(t)}>(${a}, ${b})`,
  unsigned: (t) => (t === 'i64' ? 'uint64_t' : 'uint32_t'),
  helper: (fn, t, args) => `dype_${fn}<${cppType(t)}>(${args.join(', ')})`,
  mathIn: (fn, t) => fn === 'sqrt' && isFloat(t),
  math: (fn, _t, args) =>
    fn === 'sigmoid'
      ? `1.0 / (1.0 + std::exp(-(${args[0]})))`
      : fn === 'pow'
        ? `dype_pow(${args.join(', ')})`
        : `std::${fn}(${args.join(', ')})`,
};

export class CppPrinter extends CExprPrinter {
  constructor(private readonly names: Names) {
    super(HLS_DIALECT);
  }

  varElem(name: string): LElem {
    return this.names.varElem(name);
  }

  bufElem(buf: string): LElem {
    return this.names.bufElem(buf);
  }

  var(name: string): string {
    return this.names.variable(name);
  }

  load(e: LLoad): string {
    return this.names.load(e.buf, e.index);
  }
}

/**
 * The labels of a loop nest's loops, given in pre-order: `L_<var>`, and
 * `L_<var>_2`... for a later loop over a variable already labelled (two
 * sibling reductions over j: a C++ label is unique per function).
 */
export function loopLabeler(): (loopVar: string) => string {
  const used = new Set<string>();
  return (v) => {
    let label = `L_${v}`;
    for (let n = 2; used.has(label); n++) label = `L_${v}_${n}`;
    used.add(label);
    return label;
  };
}

/** Options for printing statements: pragmas a design adds to loops. */
export interface StmtOptions {
  /** Lines placed first inside a loop's body (pragmas), by loop and its label; called for every loop. */
  loopPragmas(loop: Extract<LStmt, { k: 'for' }>, innermost: boolean, label: string): string[];
  /** Labels the loops in the order they are printed (pre-order): one loopLabeler per function. */
  label: (loopVar: string) => string;
}

export function isInnermost(s: Extract<LStmt, { k: 'for' }>): boolean {
  const has = (ss: readonly LStmt[]): boolean =>
    ss.some((x) => x.k === 'for' || (x.k === 'if' && (has(x.then) || has(x.else ?? []))));
  return !has(s.body);
}

/** Prints statements; `locals` receives the element type of every let so later expressions can be typed. */
export function printStmts(
  p: CppPrinter,
  ss: readonly LStmt[],
  locals: Map<string, LElem>,
  names: Names,
  opts: StmtOptions,
  indent: string,
): string[] {
  const out: string[] = [];
  for (const s of ss) {
    switch (s.k) {
      case 'for': {
        locals.set(s.var, 'index');
        const v = names.variable(s.var);
        const label = opts.label(s.var);
        out.push(
          `${indent}${ident(label)}: for (int32_t ${v} = ${p.as(s.lo, 'index')}; ${v} < ${p.as(s.hi, 'index')}; ${v}++) {`,
        );
        for (const l of opts.loopPragmas(s, isInnermost(s), label)) out.push(`${indent}  ${l}`);
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
