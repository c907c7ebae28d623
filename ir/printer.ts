/**
 * The deterministic text form of the IR. parse(print(m)) reproduces m up to
 * spans, so print(parse(print(m))) === print(m); tests hold every golden to
 * that. Expressions print with the fewest parentheses the grammar needs.
 */
import { BIN_PRECEDENCE, type Expr } from './expr.js';
import type { AttrValue, Attrs, Kernel, Module, Op, Until, ValueDecl } from './module.js';
import { typeToString } from './types.js';

const PREC: Readonly<Record<string, number>> = BIN_PRECEDENCE;
const UNARY = 7;
const ATOM = 8;

export function formatNumber(value: number, int: boolean): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  if (int) return String(value);
  const s = String(value);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

function precOf(e: Expr): number {
  switch (e.k) {
    case 'select':
      return 1;
    case 'bin':
      return PREC[e.op]!;
    case 'neg':
    case 'not':
      return UNARY;
    case 'const':
      return e.value < 0 || Object.is(e.value, -0) ? UNARY : ATOM;
    default:
      return ATOM;
  }
}

function wrap(e: Expr, min: number): string {
  const s = printExpr(e);
  return precOf(e) < min ? `(${s})` : s;
}

export function printExpr(e: Expr): string {
  switch (e.k) {
    case 'const':
      return Object.is(e.value, -0) ? (e.int ? '-0' : '-0.0') : formatNumber(e.value, e.int);
    case 'dim':
      return `$${e.name}`;
    case 'load':
      return e.idx.length === 0 ? `%${e.tensor}` : `%${e.tensor}[${e.idx.join(', ')}]`;
    case 'neg':
      return `-${wrap(e.arg, UNARY)}`;
    case 'not':
      return `!${wrap(e.arg, UNARY)}`;
    case 'bin': {
      const p = PREC[e.op]!;
      // Left-associative except comparisons, which do not chain at all.
      const lmin = p === 4 ? p + 1 : p;
      return `${wrap(e.lhs, lmin)} ${e.op} ${wrap(e.rhs, p + 1)}`;
    }
    case 'select':
      return `${wrap(e.cond, 2)} ? ${wrap(e.then, 1)} : ${wrap(e.else, 1)}`;
    case 'call':
      return `${e.fn}(${e.args.map(printExpr).join(', ')})`;
    case 'reduce':
      return `${e.op}(${e.idx.join(', ')}: ${printExpr(e.body)})`;
  }
}

export function printAttrValue(v: AttrValue): string {
  if (Array.isArray(v)) return `[${v.map(printAttrValue).join(', ')}]`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return formatNumber(v, Number.isInteger(v));
  return String(v);
}

export function printAttrs(a: Attrs): string {
  const keys = Object.keys(a).sort();
  return `{${keys.map((k) => `${k} = ${printAttrValue(a[k]!)}`).join(', ')}}`;
}

function printDecl(d: ValueDecl): string {
  return `%${d.name}: ${typeToString(d.type)}`;
}

/** `stable`, or `within T` with T as JavaScript prints it (it reads back to the same double). */
export function untilTest(u: Until): string {
  return u.within === undefined ? 'stable' : `within ${String(u.within)}`;
}

function printOps(ops: readonly Op[], indent: string, out: string[]): void {
  for (const op of ops) {
    const attrs = Object.keys(op.attrs).length > 0 ? ` ${printAttrs(op.attrs)}` : '';
    if (op.kind === 'repeat') {
      const count = op.count.kind === 'lit' ? String(op.count.value) : `%${op.count.name}`;
      const until = op.until ? ` until %${op.until.value} ${untilTest(op.until)}` : '';
      out.push(`${indent}${op.id}: repeat ${count}${until}${attrs ? ` attrs${attrs}` : ''} {`);
      printOps(op.body, indent + '  ', out);
      out.push(`${indent}}`);
    } else {
      const lhs = op.indices.length === 0 ? `%${op.result}` : `%${op.result}[${op.indices.join(', ')}]`;
      const type = op.type ? typeToString(op.type) : '?';
      out.push(`${indent}${op.id}: ${lhs} = ${op.kind} ${printExpr(op.expr)} : ${type}${attrs}`);
    }
  }
}

export function printKernel(k: Kernel): string {
  const out: string[] = [];
  out.push(`kernel @${k.name}(${k.params.map(printDecl).join(', ')}) -> (${k.results.map(printDecl).join(', ')}) {`);
  printOps(k.body, '  ', out);
  out.push('}');
  return out.join('\n');
}

export function printModule(m: Module): string {
  return m.kernels.map(printKernel).join('\n\n') + '\n';
}
