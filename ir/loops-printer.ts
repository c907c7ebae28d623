/**
 * Deterministic text form of the loop IR, for goldens and dumps. It is a
 * read-only form (no parser): the loop IR is always re-derived from the
 * graph IR by the lower-kernels pass. Literals print with their element
 * type (`0.0:f32`) since emitters must not guess widths; element types of
 * other nodes follow from their operands and are not printed.
 */
import type { LExpr, LStmt, LoopFunc } from './loops.js';
import type { Module } from './module.js';
import { BIN_PRECEDENCE } from './expr.js';
import { formatNumber } from './printer.js';

const PREC: Readonly<Record<string, number>> = BIN_PRECEDENCE;
const ATOM = 9;

function prec(e: LExpr): number {
  if (e.k === 'bin') return PREC[e.op] ?? ATOM;
  if (e.k === 'select') return 1;
  if (e.k === 'un') return 7;
  return ATOM;
}

function wrap(e: LExpr, min: number): string {
  const s = printLExpr(e);
  return prec(e) < min ? `(${s})` : s;
}

export function printLExpr(e: LExpr): string {
  switch (e.k) {
    case 'const':
      if (e.type === 'index') return String(e.value);
      if (e.type === 'bool') return e.value !== 0 ? 'true' : 'false';
      return `${formatNumber(e.value, e.type === 'i32' || e.type === 'i64')}:${e.type}`;
    case 'var':
      return e.name;
    case 'load':
      return `${e.buf}[${printLExpr(e.index)}]`;
    case 'bin': {
      if (e.op === 'idiv') return `idiv(${printLExpr(e.lhs)}, ${printLExpr(e.rhs)})`;
      const p = PREC[e.op]!;
      // Left-associative; comparisons do not chain.
      return `${wrap(e.lhs, p === 4 ? p + 1 : p)} ${e.op} ${wrap(e.rhs, p + 1)}`;
    }
    case 'un':
      return `${e.op === 'neg' ? '-' : '!'}${wrap(e.arg, 7)}`;
    case 'call':
      return `${e.fn}(${e.args.map(printLExpr).join(', ')})`;
    case 'select':
      return `${wrap(e.cond, 2)} ? ${wrap(e.then, 1)} : ${wrap(e.else, 1)}`;
    case 'cast':
      return `${e.to}(${printLExpr(e.arg)})`;
  }
}

function printStmts(ss: readonly LStmt[], indent: string, out: string[]): void {
  for (const s of ss) {
    switch (s.k) {
      case 'for':
        out.push(
          `${indent}${s.parallel ? 'parallel ' : ''}for ${s.var} in ${printLExpr(s.lo)} .. ${printLExpr(s.hi)} {`,
        );
        printStmts(s.body, indent + '  ', out);
        out.push(`${indent}}`);
        break;
      case 'let':
        out.push(`${indent}let ${s.var}: ${s.type} = ${printLExpr(s.value)}`);
        break;
      case 'set':
        out.push(`${indent}${s.var} = ${printLExpr(s.value)}`);
        break;
      case 'store':
        out.push(`${indent}${s.buf}[${printLExpr(s.index)}] = ${printLExpr(s.value)}`);
        break;
      case 'if':
        out.push(`${indent}if ${printLExpr(s.cond)} {`);
        printStmts(s.then, indent + '  ', out);
        if (s.else) {
          out.push(`${indent}} else {`);
          printStmts(s.else, indent + '  ', out);
        }
        out.push(`${indent}}`);
        break;
    }
  }
}

export function printLoopFunc(f: LoopFunc): string {
  const out: string[] = [];
  out.push(`func @${f.name} (op ${f.op}: %${f.result} -> ${f.out}) schedules [${f.schedules.join(', ')}] {`);
  out.push(`  sizes [${f.sizes.join(', ')}]`);
  for (const b of f.buffers)
    out.push(`  buffer ${b.name}: ${b.elem} ${b.role}${b.layout ? `.${b.layout}` : ''} of %${b.of}`);
  printStmts(f.body, '  ', out);
  out.push('}');
  return out.join('\n');
}

/** Every kernel's loop functions (those lower-kernels attached), in op order. */
export function printLoops(m: Module): string {
  const parts: string[] = [];
  for (const k of m.kernels) {
    const fs = k.loops ?? [];
    parts.push(`loops @${k.name} {\n${fs.map((f) => printLoopFunc(f).replace(/^/gm, '  ')).join('\n\n')}\n}`);
  }
  return parts.join('\n\n') + '\n';
}
