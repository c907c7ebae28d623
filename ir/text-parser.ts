/**
 * Parser for the IR text printed by ir/printer.ts. Hand-written so that `ir`
 * depends on nothing; errors are DY5001 diagnostics at the offending token.
 */
import { DiagnosticError, makeDiagnostic, type Span } from './diagnostics.js';
import { BIN_PRECEDENCE, funcArity, isReduceOp, type BinOp, type Expr, type FuncName } from './expr.js';
import {
  TENSOR_OP_KINDS,
  type AttrValue,
  type Attrs,
  type Kernel,
  type Module,
  type Op,
  type TensorOpKind,
  type Until,
  type ValueDecl,
} from './module.js';
import { isDtype, isFormat, type Dim, type TensorType } from './types.js';

type TokKind = 'ident' | 'num' | 'pct' | 'dollar' | 'at' | 'str' | 'punct' | 'eof';
interface Tok {
  kind: TokKind;
  text: string;
  offset: number;
  line: number;
  col: number;
}

const PUNCT = [
  '->',
  '<=',
  '>=',
  '==',
  '!=',
  '&&',
  '||',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  ':',
  '=',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '!',
  '?',
];

function lex(src: string, file: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const err = (msg: string): never => {
    const col = i - lineStart + 1;
    throw new DiagnosticError(
      [makeDiagnostic('DY5001', msg, { file, line, col, endLine: line, endCol: col + 1, offset: i, end: i + 1 })],
      src,
    );
  };
  const push = (kind: TokKind, text: string, start: number): void => {
    toks.push({ kind, text, offset: start, line, col: start - lineStart + 1 });
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\n') {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    const start = i;
    if (/[A-Za-z_]/.test(c)) {
      while (i < src.length && /[A-Za-z0-9_]/.test(src[i]!)) i++;
      push('ident', src.slice(start, i), start);
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/.exec(src.slice(i, i + 64))!;
      i += m[0].length;
      push('num', m[0], start);
      continue;
    }
    if (c === '%' || c === '$' || c === '@') {
      i++;
      while (i < src.length && /[A-Za-z0-9_]/.test(src[i]!)) i++;
      if (i === start + 1) err(`expected a name after '${c}'`);
      push(c === '%' ? 'pct' : c === '$' ? 'dollar' : 'at', src.slice(start + 1, i), start);
      continue;
    }
    if (c === '"') {
      i++;
      while (i < src.length && src[i] !== '"') {
        if (src[i] === '\\') i++;
        if (src[i] === '\n') err('unterminated string');
        i++;
      }
      if (i >= src.length) err('unterminated string');
      i++;
      push('str', src.slice(start, i), start);
      continue;
    }
    const p = PUNCT.find((q) => src.startsWith(q, i));
    if (!p) err(`unexpected character '${c}'`);
    i += p!.length;
    push('punct', p!, start);
  }
  toks.push({ kind: 'eof', text: '<end of input>', offset: src.length, line, col: src.length - lineStart + 1 });
  return toks;
}

const BIN_PREC: Partial<Record<string, number>> = BIN_PRECEDENCE;

class IrParser {
  private pos = 0;
  private readonly toks: Tok[];
  constructor(
    private readonly src: string,
    private readonly file: string,
  ) {
    this.toks = lex(src, file);
  }

  /**
   * Whether a reduction's index list follows: names separated by commas, then ':'. A name may be `inf` or `nan`
   * (a program's index), so only the ':' tells `max(nan: %x[nan])` from the function call `max(nan, %x[i])`.
   */
  private indicesAhead(): boolean {
    for (let k = 0; ; k += 2) {
      if (this.peek(k).kind !== 'ident') return false;
      const sep = this.peek(k + 1).text;
      if (sep === ':') return true;
      if (sep !== ',') return false;
    }
  }

  private peek(o = 0): Tok {
    return this.toks[Math.min(this.pos + o, this.toks.length - 1)]!;
  }
  private next(): Tok {
    return this.toks[this.pos++]!;
  }
  private span(t: Tok): Span {
    return {
      file: this.file,
      line: t.line,
      col: t.col,
      endLine: t.line,
      endCol: t.col + Math.max(1, t.text.length),
      offset: t.offset,
      end: t.offset + t.text.length,
    };
  }
  private fail(msg: string, t: Tok = this.peek()): never {
    throw new DiagnosticError([makeDiagnostic('DY5001', `${msg}, found '${t.text}'`, this.span(t))], this.src);
  }
  private is(text: string): boolean {
    const t = this.peek();
    return (t.kind === 'punct' || t.kind === 'ident') && t.text === text;
  }
  private eat(text: string): boolean {
    if (this.is(text)) {
      this.pos++;
      return true;
    }
    return false;
  }
  private expect(text: string): Tok {
    if (!this.is(text)) this.fail(`expected '${text}'`);
    return this.next();
  }
  private expectKind(kind: TokKind, what: string): Tok {
    if (this.peek().kind !== kind) this.fail(`expected ${what}`);
    return this.next();
  }

  module(): Module {
    const kernels: Kernel[] = [];
    while (this.peek().kind !== 'eof') kernels.push(this.kernel());
    return { kernels };
  }

  private kernel(): Kernel {
    this.expect('kernel');
    const name = this.expectKind('at', "a kernel name '@name'").text;
    this.expect('(');
    const params = this.declList(')');
    this.expect('->');
    this.expect('(');
    const results = this.declList(')');
    this.expect('{');
    const body = this.ops();
    this.expect('}');
    return { name, params, results, body };
  }

  private declList(close: string): ValueDecl[] {
    const out: ValueDecl[] = [];
    if (this.eat(close)) return out;
    do {
      const name = this.expectKind('pct', "a value '%name'").text;
      this.expect(':');
      out.push({ name, type: this.type() });
    } while (this.eat(','));
    this.expect(close);
    return out;
  }

  private type(): TensorType {
    const t = this.expectKind('ident', 'a type');
    if (isDtype(t.text)) return { format: 'dense', dtype: t.text, shape: [] };
    if (!isFormat(t.text)) this.fail('expected a format or dtype', t);
    this.expect('<');
    const d = this.expectKind('ident', 'a dtype');
    if (!isDtype(d.text)) this.fail('expected a dtype', d);
    this.expect('>');
    this.expect('[');
    const shape: Dim[] = [];
    if (!this.is(']')) {
      do {
        const x = this.next();
        if (x.kind === 'ident') shape.push({ kind: 'sym', name: x.text });
        else if (x.kind === 'num' && /^[0-9]+$/.test(x.text)) shape.push({ kind: 'lit', value: Number(x.text) });
        else this.fail('expected a dim', x);
      } while (this.eat(','));
    }
    this.expect(']');
    return { format: t.text, dtype: d.text as TensorType['dtype'], shape };
  }

  private ops(): Op[] {
    const out: Op[] = [];
    while (this.peek().kind === 'ident' && this.peek(1).text === ':') out.push(this.op());
    return out;
  }

  private op(): Op {
    const id = this.next().text;
    this.expect(':');
    if (this.eat('repeat')) {
      const c = this.next();
      let count: { kind: 'lit'; value: number } | { kind: 'param'; name: string };
      if (c.kind === 'num' && /^[0-9]+$/.test(c.text)) count = { kind: 'lit', value: Number(c.text) };
      else if (c.kind === 'pct') count = { kind: 'param', name: c.text };
      else this.fail('expected a repeat count', c);
      let until: Until | undefined;
      if (this.eat('until')) {
        const value = this.expectKind('pct', "the watched value '%name'").text;
        if (this.eat('stable')) until = { value };
        else if (this.eat('within')) {
          const t = this.expectKind('num', 'a tolerance');
          until = { value, within: Number(t.text) };
        } else this.fail("expected 'stable' or 'within'", this.peek());
      }
      let attrs: Attrs = {};
      if (this.eat('attrs')) attrs = this.attrs();
      this.expect('{');
      const body = this.ops();
      this.expect('}');
      return { kind: 'repeat', id, count: count!, ...(until ? { until } : {}), body, attrs };
    }
    const result = this.expectKind('pct', "a result '%name'").text;
    const indices = this.is('[') ? this.indexList() : [];
    this.expect('=');
    const k = this.expectKind('ident', 'an op kind');
    if (!(TENSOR_OP_KINDS as readonly string[]).includes(k.text)) this.fail('expected an op kind', k);
    const expr = this.expr();
    this.expect(':');
    const type = this.eat('?') ? undefined : this.type();
    const attrs = this.is('{') ? this.attrs() : {};
    return { kind: k.text as TensorOpKind, id, result, indices, expr, type, attrs };
  }

  private indexList(): string[] {
    this.expect('[');
    const out: string[] = [];
    if (!this.is(']')) {
      do out.push(this.expectKind('ident', 'an index').text);
      while (this.eat(','));
    }
    this.expect(']');
    return out;
  }

  private attrs(): Attrs {
    this.expect('{');
    const out: Attrs = {};
    if (!this.is('}')) {
      do {
        const key = this.expectKind('ident', 'an attribute name');
        if (key.text in out) this.fail('duplicate attribute', key);
        this.expect('=');
        out[key.text] = this.attrValue();
      } while (this.eat(','));
    }
    this.expect('}');
    return out;
  }

  private attrValue(): AttrValue {
    const t = this.peek();
    if (t.kind === 'str') {
      this.pos++;
      return JSON.parse(t.text) as string;
    }
    if (this.eat('[')) {
      const out: AttrValue[] = [];
      if (!this.is(']')) {
        do out.push(this.attrValue());
        while (this.eat(','));
      }
      this.expect(']');
      return out;
    }
    if (this.eat('true')) return true;
    if (this.eat('false')) return false;
    const neg = this.eat('-');
    const n = this.peek();
    if (n.kind === 'num') {
      this.pos++;
      return neg ? -Number(n.text) : Number(n.text);
    }
    if (n.kind === 'ident' && n.text === 'inf') {
      this.pos++;
      return neg ? -Infinity : Infinity;
    }
    return this.fail('expected an attribute value', n);
  }

  expr(): Expr {
    const cond = this.binary(2);
    if (!this.eat('?')) return cond;
    const then = this.expr();
    this.expect(':');
    return { k: 'select', cond, then, else: this.expr() };
  }

  private binary(min: number): Expr {
    let lhs = this.unary();
    for (;;) {
      const t = this.peek();
      const p = t.kind === 'punct' ? BIN_PREC[t.text] : undefined;
      if (p === undefined || p < min) return lhs;
      this.pos++;
      const rhs = this.binary(p + 1);
      lhs = { k: 'bin', op: t.text as BinOp, lhs, rhs };
      if (p === 4 && BIN_PREC[this.peek().text] === 4) this.fail('comparisons do not chain');
    }
  }

  private unary(): Expr {
    if (this.eat('-')) {
      const t = this.peek();
      if (t.kind === 'num' || (t.kind === 'ident' && (t.text === 'inf' || t.text === 'nan'))) {
        const c = this.number();
        return { k: 'const', value: -c.value, int: c.int };
      }
      return { k: 'neg', arg: this.unary() };
    }
    if (this.eat('!')) return { k: 'not', arg: this.unary() };
    return this.atom();
  }

  private number(): { value: number; int: boolean } {
    const t = this.next();
    if (t.kind === 'ident' && t.text === 'inf') return { value: Infinity, int: false };
    if (t.kind === 'ident' && t.text === 'nan') return { value: NaN, int: false };
    return { value: Number(t.text), int: /^[0-9]+$/.test(t.text) };
  }

  private atom(): Expr {
    const t = this.peek();
    if (t.kind === 'num' || (t.kind === 'ident' && (t.text === 'inf' || t.text === 'nan'))) {
      const c = this.number();
      return { k: 'const', value: c.value, int: c.int };
    }
    if (t.kind === 'dollar') {
      this.pos++;
      return { k: 'dim', name: t.text };
    }
    if (t.kind === 'pct') {
      this.pos++;
      return { k: 'load', tensor: t.text, idx: this.is('[') ? this.indexList() : [] };
    }
    if (this.eat('(')) {
      const e = this.expr();
      this.expect(')');
      return e;
    }
    if (t.kind === 'ident') {
      this.pos++;
      this.expect('(');
      if (isReduceOp(t.text) && this.indicesAhead()) {
        const idx: string[] = [];
        do idx.push(this.expectKind('ident', 'an index').text);
        while (this.eat(','));
        this.expect(':');
        const body = this.expr();
        this.expect(')');
        return { k: 'reduce', op: t.text, idx, body };
      }
      const arity = funcArity(t.text);
      if (arity === undefined) this.fail('expected a function or reduction', t);
      const args: Expr[] = [];
      do args.push(this.expr());
      while (this.eat(','));
      this.expect(')');
      if (args.length !== arity) this.fail(`${t.text}() takes ${arity} argument(s)`, t);
      return { k: 'call', fn: t.text as FuncName, args };
    }
    return this.fail('expected an expression', t);
  }
}

/** Parses IR text; throws DiagnosticError (DY5001) on malformed text. */
export function parseModule(text: string, file = '<ir>'): Module {
  return new IrParser(text, file).module();
}

export function parseExpr(text: string, file = '<ir>'): Expr {
  const p = new IrParser(text, file);
  return p.expr();
}
