import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseProgram } from '../../frontend/parse.js';
import type { AstAssign, AstExpr, AstKernel, AstProgram, AstRepeat, AstStmt } from '../../frontend/ast.js';
import { formatDiagnostic, type Diagnostic, type Span } from '../../ir/diagnostics.js';

// ---- helpers -------------------------------------------------------------------

function parseOk(source: string): AstProgram {
  const { program, diagnostics } = parseProgram(source, 't.dy');
  expect(diagnostics.map((d) => `${d.code} ${d.span.line}:${d.span.col} ${d.message}`)).toEqual([]);
  return program;
}

function only<X>(xs: readonly X[]): X {
  expect(xs).toHaveLength(1);
  return xs[0] as X;
}

function assign(s: AstStmt | undefined): AstAssign {
  expect(s?.kind).toBe('assign');
  return s as AstAssign;
}

function repeat(s: AstStmt | undefined): AstRepeat {
  expect(s?.kind).toBe('repeat');
  return s as AstRepeat;
}

/** The right side of the one statement of a kernel whose body is `x = <expr>;`. */
function exprOf(expr: string): AstExpr {
  const program = parseOk(`kernel k() -> () { x = ${expr}; }`);
  return assign(only(only(program.kernels).body)).expr;
}

/** Fully parenthesised rendering of an expression, to check precedence. */
function show(e: AstExpr): string {
  switch (e.kind) {
    case 'num':
      return e.text;
    case 'ident':
      return e.name;
    case 'access':
      return `${e.name}[${e.indices.map((i) => i.name).join(',')}]`;
    case 'unary':
      return `(${e.op}${show(e.operand)})`;
    case 'binary':
      return `(${show(e.lhs)} ${e.op} ${show(e.rhs)})`;
    case 'ternary':
      return `(${show(e.cond)} ? ${show(e.then)} : ${show(e.else)})`;
    case 'call':
      return `${e.fn}(${e.args.map(show).join(', ')})`;
    case 'reduce':
      return `${e.op}(${e.indices.map((i) => i.name).join(',')}: ${show(e.body)})`;
  }
}

/** The text a span covers. */
function text(source: string, span: Span): string {
  return source.slice(span.offset, span.end);
}

function errors(source: string): Diagnostic[] {
  return parseProgram(source, 'bad.dy').diagnostics;
}

/** Every span in a value is well formed and inside the text; no NaN, no empty names. */
function checkTree(value: unknown, length: number): string[] {
  const bad: string[] = [];
  const walk = (v: unknown, path: string): void => {
    if (typeof v === 'number' && Number.isNaN(v)) bad.push(`${path}: NaN`);
    if (v === undefined) bad.push(`${path}: undefined`);
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, `${path}[${i}]`));
      return;
    }
    const o = v as Record<string, unknown>;
    if ('offset' in o && 'file' in o) {
      const s = o as unknown as Span;
      const ok =
        s.offset >= 0 && s.end >= s.offset && s.end <= length && s.line >= 1 && s.col >= 1 && s.endLine >= s.line;
      if (!ok) bad.push(`${path}: bad span ${JSON.stringify(s)}`);
      return;
    }
    for (const [k, x] of Object.entries(o)) {
      if (['name', 'target', 'fn', 'op', 'format', 'dtype'].includes(k) && x === '') bad.push(`${path}.${k}: empty`);
      walk(x, `${path}.${k}`);
    }
  };
  walk(value, '');
  return bad;
}

// ---- the examples ------------------------------------------------------------------

const SPMV = `# spmv.dy
kernel spmv(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) {
  y[i] = A[i, j] * x[j];
}
`;

const SPMM = `// spmm.dy
kernel spmm(A: csr<f32>[m, k], B: dense<f32>[k, n]) -> (C: dense<f32>[m, n]) {
  C[i, j] = A[i, l] * B[l, j];
}
`;

const GCN = `kernel gcn(A: csr<f32>[n, n], X: dense<f32>[n, f], W1: dense<f32>[f, h], W2: dense<f32>[h, c]) -> (Y: dense<f32>[n, c]) {
  T1[i, k] = X[i, j] * W1[j, k];
  H1[i, k] = relu(A[i, j] * T1[j, k]);
  T2[i, k] = H1[i, j] * W2[j, k];
  Y[i, k]  = A[i, j] * T2[j, k];
}
`;

const ATTENTION = `kernel attention(A: csr<f32>[n, n], Q: dense<f32>[n, d], K: dense<f32>[n, d], V: dense<f32>[n, d]) -> (O: dense<f32>[n, d]) {
  S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]);
  m[i]    = max(j: S[i, j]);
  E[i, j] = exp(S[i, j] - m[i]);
  s[i]    = sum(j: E[i, j]);
  O[i, k] = sum(j: E[i, j] * V[j, k]) / s[i];
}
`;

const PAGERANK = `kernel pagerank(A: csr<f32>[n, n], r0: dense<f32>[n], d: f32) -> (r: dense<f32>[n]) {
  r[i] = r0[i];
  repeat 20 { r[i] = (1 - d) / n + d * A[i, j] * r[j]; }
}
`;

const SSSP = `kernel sssp(A: csr<f32>[n, n], d0: dense<f32>[n]) -> (d: dense<f32>[n]) {
  d[i] = d0[i];
  repeat 16 { d[i] = min(d[i], min(j: A[i, j] + d[j])); }
}
`;

describe('parser: examples', () => {
  it('spmv: declarations, access, spans', () => {
    const program = parseOk(SPMV);
    expect(program.file).toBe('t.dy');
    const k = only(program.kernels);
    expect(k.name).toBe('spmv');
    expect(k.nameSpan).toEqual({ file: 't.dy', line: 2, col: 8, endLine: 2, endCol: 12, offset: 17, end: 21 });
    expect(k.span.line).toBe(2);
    expect(k.span.col).toBe(1);
    expect(k.span.endLine).toBe(4);
    expect(k.span.endCol).toBe(2);
    expect(text(SPMV, k.span).startsWith('kernel spmv(')).toBe(true);
    expect(text(SPMV, k.span).endsWith('}')).toBe(true);

    expect(k.params.map((p) => p.name)).toEqual(['A', 'x']);
    const a = k.params[0]!;
    expect(text(SPMV, a.span)).toBe('A: csr<f32>[m, n]');
    expect(a.type).toMatchObject({ kind: 'tensor', format: 'csr', dtype: 'f32' });
    if (a.type.kind !== 'tensor') throw new Error('tensor expected');
    expect(text(SPMV, a.type.span)).toBe('csr<f32>[m, n]');
    expect(text(SPMV, a.type.formatSpan)).toBe('csr');
    expect(text(SPMV, a.type.dtypeSpan)).toBe('f32');
    expect(a.type.dims.map((d) => (d.kind === 'sym' ? d.name : d.value))).toEqual(['m', 'n']);
    expect(only(k.results).name).toBe('y');

    const s = assign(only(k.body));
    expect(s.target).toBe('y');
    expect(s.indices.map((i) => i.name)).toEqual(['i']);
    expect(text(SPMV, s.span)).toBe('y[i] = A[i, j] * x[j];');
    expect(text(SPMV, s.targetSpan)).toBe('y');
    expect(show(s.expr)).toBe('(A[i,j] * x[j])');
    expect(text(SPMV, s.expr.span)).toBe('A[i, j] * x[j]');
    if (s.expr.kind !== 'binary' || s.expr.lhs.kind !== 'access') throw new Error('binary of access expected');
    expect(text(SPMV, s.expr.lhs.span)).toBe('A[i, j]');
    expect(text(SPMV, s.expr.lhs.nameSpan)).toBe('A');
    expect(text(SPMV, s.expr.lhs.indices[1]!.span)).toBe('j');
    expect(s.expr.span).toMatchObject({ line: 3, col: 10, endLine: 3, endCol: 24 });
  });

  it('spmm', () => {
    const k = only(parseOk(SPMM).kernels);
    expect(k.name).toBe('spmm');
    expect(k.params.map((p) => p.name)).toEqual(['A', 'B']);
    const s = assign(only(k.body));
    expect(s.indices.map((i) => i.name)).toEqual(['i', 'j']);
    expect(show(s.expr)).toBe('(A[i,l] * B[l,j])');
  });

  it('gcn: four statements, implicit sum inside a call', () => {
    const k = only(parseOk(GCN).kernels);
    expect(k.params.map((p) => p.name)).toEqual(['A', 'X', 'W1', 'W2']);
    expect(k.body.map((s) => assign(s).target)).toEqual(['T1', 'H1', 'T2', 'Y']);
    const h1 = assign(k.body[1]).expr;
    expect(h1.kind).toBe('call');
    if (h1.kind !== 'call') return;
    expect(h1.fn).toBe('relu');
    expect(text(GCN, h1.fnSpan)).toBe('relu');
    expect(text(GCN, h1.span)).toBe('relu(A[i, j] * T1[j, k])');
    expect(show(h1)).toBe('relu((A[i,j] * T1[j,k]))');
  });

  it('attention: explicit reductions', () => {
    const k = only(parseOk(ATTENTION).kernels);
    const exprs = k.body.map((s) => show(assign(s).expr));
    expect(exprs).toEqual([
      '(A[i,j] * sum(k: (Q[i,k] * K[j,k])))',
      'max(j: S[i,j])',
      'exp((S[i,j] - m[i]))',
      'sum(j: E[i,j])',
      '(sum(j: (E[i,j] * V[j,k])) / s[i])',
    ]);
    const m = assign(k.body[1]).expr;
    if (m.kind !== 'reduce') throw new Error('reduce expected');
    expect(m.op).toBe('max');
    expect(text(ATTENTION, m.opSpan)).toBe('max');
    expect(text(ATTENTION, m.span)).toBe('max(j: S[i, j])');
    expect(text(ATTENTION, m.indices[0]!.span)).toBe('j');
    expect(text(ATTENTION, m.body.span)).toBe('S[i, j]');
  });

  it('pagerank: scalar parameter, repeat, parenthesised span', () => {
    const k = only(parseOk(PAGERANK).kernels);
    expect(k.params[2]).toMatchObject({ name: 'd', type: { kind: 'scalar', dtype: 'f32' } });
    expect(text(PAGERANK, k.params[2]!.type.span)).toBe('f32');
    expect(k.body).toHaveLength(2);
    const r = repeat(k.body[1]);
    expect(r.count).toMatchObject({ kind: 'lit', value: 20 });
    expect(text(PAGERANK, r.count.span)).toBe('20');
    expect(text(PAGERANK, r.span)).toBe('repeat 20 { r[i] = (1 - d) / n + d * A[i, j] * r[j]; }');
    const e = assign(only(r.body)).expr;
    expect(show(e)).toBe('(((1 - d) / n) + ((d * A[i,j]) * r[j]))');
    if (e.kind !== 'binary' || e.lhs.kind !== 'binary') throw new Error('binary expected');
    // A parenthesised operand's span includes its parentheses.
    expect(text(PAGERANK, e.lhs.span)).toBe('(1 - d) / n');
    expect(text(PAGERANK, e.lhs.lhs.span)).toBe('(1 - d)');
    expect(text(PAGERANK, e.span)).toBe('(1 - d) / n + d * A[i, j] * r[j]');
  });

  it('sssp: two-argument min around a min reduction', () => {
    const k = only(parseOk(SSSP).kernels);
    const e = assign(only(repeat(k.body[1]).body)).expr;
    expect(show(e)).toBe('min(d[i], min(j: (A[i,j] + d[j])))');
    if (e.kind !== 'call') throw new Error('call expected');
    expect(e.args).toHaveLength(2);
    expect(e.args[1]!.kind).toBe('reduce');
  });

  it('every examples/*.dy file parses cleanly', () => {
    const dir = fileURLToPath(new URL('../../examples/', import.meta.url));
    const files = readdirSync(dir).filter((f) => f.endsWith('.dy'));
    for (const f of files) {
      const { program, diagnostics } = parseProgram(readFileSync(dir + f, 'utf8'), f);
      expect(diagnostics, f).toEqual([]);
      expect(program.kernels.length, f).toBeGreaterThan(0);
    }
  });

  it('all six examples in one file', () => {
    const program = parseOk([SPMV, SPMM, GCN, ATTENTION, PAGERANK, SSSP].join('\n'));
    expect(program.kernels.map((k) => k.name)).toEqual(['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp']);
  });
});

// ---- expressions ---------------------------------------------------------------

describe('parser: expressions', () => {
  it.each([
    ['a + b * c', '(a + (b * c))'],
    ['a * b + c', '((a * b) + c)'],
    ['a - b - c', '((a - b) - c)'],
    ['a / b / c', '((a / b) / c)'],
    ['a / b * c', '((a / b) * c)'],
    ['(a + b) * c', '((a + b) * c)'],
    ['-a * b', '((-a) * b)'],
    ['- - a', '(-(-a))'],
    ['-a - -b', '((-a) - (-b))'],
    ['!a && b', '((!a) && b)'],
    ['a || b && c', '(a || (b && c))'],
    ['a && b || c', '((a && b) || c)'],
    ['a < b + 1 && c >= d', '((a < (b + 1)) && (c >= d))'],
    ['a == b || c != d', '((a == b) || (c != d))'],
    ['a <= b', '(a <= b)'],
    ['a > -b', '(a > (-b))'],
    ['c ? a : b', '(c ? a : b)'],
    ['a || b ? c : d', '((a || b) ? c : d)'],
    ['a ? b : c ? d : e', '(a ? b : (c ? d : e))'],
    ['a ? b ? c : d : e', '(a ? (b ? c : d) : e)'],
    ['a ? b + 1 : c * 2', '(a ? (b + 1) : (c * 2))'],
    ['(a ? b : c) + 1', '((a ? b : c) + 1)'],
    ['-1', '(-1)'],
    ['-inf', '(-inf)'],
    ['relu(a) * 2', '(relu(a) * 2)'],
  ])('%s', (src, expected) => {
    expect(show(exprOf(src))).toBe(expected);
  });

  it('binary and ternary spans cover both operands', () => {
    const src = 'kernel k() -> () { x = a ? b + c : -d; }';
    const e = assign(only(only(parseOk(src).kernels).body)).expr;
    expect(text(src, e.span)).toBe('a ? b + c : -d');
    if (e.kind !== 'ternary') throw new Error('ternary expected');
    expect(text(src, e.then.span)).toBe('b + c');
    expect(text(src, e.else.span)).toBe('-d');
  });

  it('number literals', () => {
    expect(exprOf('42')).toMatchObject({ kind: 'num', value: 42, text: '42', isInt: true });
    expect(exprOf('007')).toMatchObject({ kind: 'num', value: 7, text: '007', isInt: true });
    expect(exprOf('0.5')).toMatchObject({ kind: 'num', value: 0.5, text: '0.5', isInt: false });
    expect(exprOf('.5')).toMatchObject({ kind: 'num', value: 0.5, text: '.5', isInt: false });
    expect(exprOf('1e-6')).toMatchObject({ kind: 'num', value: 1e-6, text: '1e-6', isInt: false });
    expect(exprOf('2.5E3')).toMatchObject({ kind: 'num', value: 2500, text: '2.5E3', isInt: false });
    expect(exprOf('3e+2')).toMatchObject({ kind: 'num', value: 300, isInt: false });
    expect(exprOf('inf')).toMatchObject({ kind: 'num', value: Infinity, text: 'inf', isInt: false });
    expect(exprOf('9007199254740991')).toMatchObject({ kind: 'num', value: Number.MAX_SAFE_INTEGER, isInt: true });
  });

  it('keywords are whole words only', () => {
    const src =
      'kernel kernels(repeated: info, inferred: f32) -> (kernel_out: f32) { kernel_out = repeated + info * inferred; }';
    const k = only(parseOk(src).kernels);
    expect(k.name).toBe('kernels');
    expect(k.params.map((p) => [p.name, p.type.dtype])).toEqual([
      ['repeated', 'info'],
      ['inferred', 'f32'],
    ]);
    expect(show(assign(only(k.body)).expr)).toBe('(repeated + (info * inferred))');
  });

  it('implicit-sum syntax is plain arithmetic in the AST', () => {
    expect(show(exprOf('(1 - d) / n + d * A[i, j] * r[j]'))).toBe('(((1 - d) / n) + ((d * A[i,j]) * r[j]))');
    expect(show(exprOf('X[i, j] * W[j, k]'))).toBe('(X[i,j] * W[j,k])');
  });

  it('reductions over several indices, calls, bare identifiers', () => {
    const src = 'kernel k() -> () { x = sum(j, k: A[i, j] * B[j, k]); }';
    const e = assign(only(only(parseOk(src).kernels).body)).expr;
    expect(e).toMatchObject({ kind: 'reduce', op: 'sum' });
    if (e.kind !== 'reduce') return;
    expect(e.indices.map((i) => i.name)).toEqual(['j', 'k']);
    expect(text(src, e.span)).toBe('sum(j, k: A[i, j] * B[j, k])');
    expect(show(exprOf('min(a, b)'))).toBe('min(a, b)');
    expect(exprOf('min(a, b)')).toMatchObject({ kind: 'call', fn: 'min' });
    expect(exprOf('max(j: a)')).toMatchObject({ kind: 'reduce', op: 'max' });
    // Any identifier is accepted as a reduction; the checker validates it (DY2027).
    expect(exprOf('relu(j: a)')).toMatchObject({ kind: 'reduce', op: 'relu' });
    expect(show(exprOf('pow(a, 2)'))).toBe('pow(a, 2)');
    expect(exprOf('f()')).toMatchObject({ kind: 'call', fn: 'f', args: [] });
    expect(exprOf('n')).toMatchObject({ kind: 'ident', name: 'n' });
    // A call whose argument merely starts with an identifier.
    expect(show(exprOf('sum(j + 1)'))).toBe('sum((j + 1))');
    expect(show(exprOf('any(i, j: A[i, j] > 0) || all(k: B[k] == 1)'))).toBe(
      '(any(i,j: (A[i,j] > 0)) || all(k: (B[k] == 1)))',
    );
  });
});

// ---- statements and layout ---------------------------------------------------------------

describe('parser: statements and layout', () => {
  it('comments of both styles, anywhere', () => {
    const src = [
      '# leading comment',
      '// another one',
      'kernel k(a: f32) -> (b: f32) { # after the brace',
      '  b = a // trailing',
      '    + 1; # done',
      '}',
      '// no newline at the end',
    ].join('\n');
    const k = only(parseOk(src).kernels);
    expect(show(assign(only(k.body)).expr)).toBe('(a + 1)');
    expect(k.span.line).toBe(3);
  });

  it('scalar assignment, repeat with a name, nested repeat', () => {
    const src = `kernel k(n: i32, iters: i32) -> (s: f32) {
  s = 0;
  repeat iters {
    s = s + 1;
    repeat 2 { s = s * 2; }
  }
}`;
    const k = only(parseOk(src).kernels);
    const s0 = assign(k.body[0]);
    expect(s0.indices).toEqual([]);
    expect(s0.expr).toMatchObject({ kind: 'num', value: 0, isInt: true });
    const r = repeat(k.body[1]);
    expect(r.count).toMatchObject({ kind: 'name', name: 'iters' });
    expect(r.span).toMatchObject({ line: 3, col: 3, endLine: 6, endCol: 4 });
    expect(r.body).toHaveLength(2);
    expect(repeat(r.body[1]).count).toMatchObject({ kind: 'lit', value: 2 });
  });

  it('several kernels per file; empty parameter and result lists; literal dims', () => {
    const src = 'kernel a() -> () { }\nkernel b(x: dense<f64>[4, n]) -> (y: dense<i64>[4]) { y[i] = x[i, j]; }\n';
    const program = parseOk(src);
    expect(program.kernels.map((k: AstKernel) => k.name)).toEqual(['a', 'b']);
    expect(program.kernels[0]!.params).toEqual([]);
    expect(program.kernels[0]!.body).toEqual([]);
    const x = program.kernels[1]!.params[0]!;
    if (x.type.kind !== 'tensor') throw new Error('tensor expected');
    expect(x.type.dims[0]).toMatchObject({ kind: 'lit', value: 4 });
    expect(x.type.dims[1]).toMatchObject({ kind: 'sym', name: 'n' });
    expect(program.kernels[1]!.span.line).toBe(2);
  });

  it('empty and comment-only files have no kernels and no syntax errors', () => {
    expect(parseOk('').kernels).toEqual([]);
    expect(parseOk('# nothing here\n\n').kernels).toEqual([]);
  });

  it('CRLF line endings and tabs', () => {
    const src = 'kernel k(a: f32) -> (b: f32) {\r\n\tb = a;\r\n}\r\n';
    const s = assign(only(only(parseOk(src).kernels).body));
    expect(s.span).toMatchObject({ line: 2, col: 2, endLine: 2, endCol: 8 });
    expect(text(src, s.span)).toBe('b = a;');
  });

  it('the parser instance is reused without leaking state between calls', () => {
    expect(errors('kernel k() -> () { x = ; }')).toHaveLength(1);
    expect(parseOk(SPMV).kernels).toHaveLength(1);
    expect(errors('kernel k() -> () { x = ; }')).toHaveLength(1);
  });
});

// ---- errors ------------------------------------------------------------------------

describe('parser: errors', () => {
  it.each<[string, string, string, number, RegExp]>([
    [
      'missing semicolon (points after the statement)',
      'kernel k() -> () {\n  y = 1\n  z = 2;\n}',
      'DY1002',
      2,
      /^expected ';' after statement, found 'z'$/,
    ],
    ['missing expression', 'kernel k() -> () {\n  y = ;\n}', 'DY1002', 2, /^expected an expression, found ';'$/],
    ['bad character', 'kernel k() -> () {\n  y = 1 $ 2;\n}', 'DY1001', 2, /^unexpected character '\$'$/],
    [
      'missing kernel name',
      'kernel (a: f32) -> () { }',
      'DY1002',
      1,
      /^expected a kernel name after 'kernel', found '\('$/,
    ],
    [
      'missing colon in a declaration',
      'kernel k(a f32) -> () { }',
      'DY1002',
      1,
      /^expected ':' and a type after the name, found 'f32'$/,
    ],
    [
      'missing arrow',
      'kernel k()\n  (y: f32) { }',
      'DY1002',
      1,
      /^expected '->' after the parameter list, found '\('$/,
    ],
    [
      'missing dims',
      'kernel k(A: csr<f32>) -> () { }',
      'DY1002',
      1,
      /^expected '\[' and the dimensions after the tensor type, found '\)'$/,
    ],
    [
      'fractional dimension',
      'kernel k(A: dense<f32>[2.5]) -> () { }',
      'DY1002',
      1,
      /^expected a dimension \(a name or an integer\), found '2.5'$/,
    ],
    [
      'missing equals',
      'kernel k() -> () {\n\n  y[i] + 1;\n}',
      'DY1002',
      3,
      /^expected '=' after the assignment target, found '\+'$/,
    ],
    [
      'chained comparison',
      'kernel k() -> () {\n  y = a < b < c;\n}',
      'DY1002',
      2,
      /^comparisons cannot be chained, found '<' after '<'; combine them with '&&'$/,
    ],
    [
      'unclosed parenthesis',
      'kernel k() -> () { y = (a + b; }',
      'DY1002',
      1,
      /^expected '\)' to close the parenthesis, found ';'$/,
    ],
    [
      'unclosed kernel body',
      'kernel k() -> () {\n  y = 1;\n',
      'DY1002',
      2,
      /^expected '\}' to close the block, found end of file$/,
    ],
    ['text outside a kernel', 'x = 1;\nkernel k() -> () { }', 'DY1002', 1, /^expected 'kernel', found 'x'$/],
    ['stray closing brace', 'kernel k() -> () { }\n}', 'DY1002', 2, /^expected 'kernel', found '\}'$/],
    [
      'missing repeat count',
      'kernel k() -> () {\n  repeat { y = 1; }\n}',
      'DY1002',
      2,
      /^expected a repeat count \(an integer or a name\), found '\{'$/,
    ],
    [
      'fractional repeat count',
      'kernel k() -> () { repeat 2.5 { y = 1; } }',
      'DY1002',
      1,
      /^expected a repeat count .*found '2.5'$/,
    ],
    // Regressions (each was this error and two follow-on ones): the parser takes the sign and inf, cst-to-ast says.
    [
      'negative repeat count',
      'kernel k() -> () {\n  repeat -1 { y = 1; }\n}',
      'DY1002',
      2,
      /^expected a repeat count \(an integer or a name\), found '-1'$/,
    ],
    [
      'infinite repeat count',
      'kernel k() -> () {\n  repeat inf { y = 1; }\n}',
      'DY1002',
      2,
      /^expected a repeat count \(an integer or a name\), found 'inf'$/,
    ],
    // Regression (was this error and a second at the ';'): one syntax error a statement.
    [
      'comparison for an assignment',
      'kernel k() -> () {\n  y == 1;\n}',
      'DY1002',
      2,
      /^expected '=' after the assignment target, found '=='$/,
    ],
    [
      'missing colon in a ternary',
      'kernel k() -> () { y = a ? b; }',
      'DY1002',
      1,
      /^expected ':' in the conditional expression, found ';'$/,
    ],
    [
      'bad argument list',
      'kernel k() -> () { y = f(a b); }',
      'DY1002',
      1,
      /^expected ',' or '\)' in the argument list, found 'b'$/,
    ],
    [
      'integer literal too large',
      'kernel k() -> () {\n  y = 9007199254740993;\n}',
      'DY1003',
      2,
      /^integer literal '9007199254740993' is too large/,
    ],
    [
      'decimal literal out of range',
      'kernel k() -> () { y = 1e999; }',
      'DY1003',
      1,
      /^number literal '1e999' is out of range$/,
    ],
    ['trailing dot', 'kernel k() -> () { y = 1.; }', 'DY1001', 1, /^unexpected character '\.'$/],
  ])('%s', (_name, src, code, line, message) => {
    const ds = errors(src);
    const d = ds[0];
    expect(ds.map((x) => x.message)).toHaveLength(1);
    expect(d?.code).toBe(code);
    expect(d?.span.line).toBe(line);
    expect(d?.message).toMatch(message);
    expect(d?.span.file).toBe('bad.dy');
    expect(d?.severity).toBe('error');
  });

  it('a run of bad characters is one diagnostic covering the run', () => {
    const src = 'kernel k() -> () { y = 1 @@@ + 2; }';
    const d = only(errors(src));
    expect(d.code).toBe('DY1001');
    expect(d.message).toBe("unexpected characters '@@@'");
    expect(text(src, d.span)).toBe('@@@');
  });

  it('non-ASCII characters are reported escaped', () => {
    const d = only(errors('kernel k() -> () { y = \u00e9; }'));
    expect(d.code).toBe('DY1001');
    expect(d.message).toBe("unexpected character '\\u00e9'");
    // A character outside the BMP is one character, not its two UTF-16 halves.
    const e = only(errors('kernel k() -> () { y = \u{1f600}; }'));
    expect(e.message).toBe("unexpected character '\\u{1f600}'");
  });

  it('formats as file:line:col with a caret line', () => {
    const src = 'kernel k() -> () {\n  y[i] = A[i, j]\n  z[i] = 1;\n}';
    const d = only(errors(src));
    expect(formatDiagnostic(d, src)).toBe(
      "bad.dy:2:17: error DY1002: expected ';' after statement, found 'z'\n    y[i] = A[i, j]\n                  ^",
    );
  });

  it('reports an error in each of two kernels and keeps the good statements', () => {
    const src = `kernel a(x: dense<f32>[n]) -> (y: dense<f32>[n]) {
  y[i] = x[i] * ;
  t[i] = x[i];
}

kernel b(x: dense<f32>[n]) -> (y: dense<f32>[n]) {
  y[i] = x[i] +
  w = 1;
}
`;
    const { program, diagnostics } = parseProgram(src, 'two.dy');
    expect(diagnostics.map((d) => [d.code, d.span.line])).toEqual([
      ['DY1002', 2],
      ['DY1002', 8],
    ]);
    expect(program.kernels.map((k) => k.name)).toEqual(['a', 'b']);
    // The broken statements are left out; the rest is there.
    expect(program.kernels[0]!.body.map((s) => assign(s).target)).toEqual(['t']);
  });

  it('reports several errors in one kernel', () => {
    const src = 'kernel k() -> () {\n  a = 1 +;\n  b = (2;\n  c = 3 3;\n  d = 4;\n}';
    const ds = errors(src);
    expect(ds.map((d) => d.span.line)).toEqual([2, 3, 4]);
    expect(ds.every((d) => d.code === 'DY1002')).toBe(true);
  });

  it('caps a flood of errors with one summary diagnostic', () => {
    const src = `kernel k() -> () {\n${'  x = ;\n'.repeat(150)}}`;
    const ds = errors(src);
    expect(ds).toHaveLength(101);
    expect(ds[99]!.span.line).toBe(101);
    expect(ds[100]!.message).toBe('too many syntax errors; 50 more not shown');
  });

  it('a missing closing brace does not swallow the next kernel', () => {
    const src = 'kernel a() -> () {\n  x = 1;\n\nkernel b() -> () { y = 2; }\n';
    const { program, diagnostics } = parseProgram(src, 'f.dy');
    expect(diagnostics.map((d) => [d.span.line, d.message])).toEqual([
      [2, "expected '}' to close the block, found 'kernel'"],
    ]);
    expect(program.kernels.map((k) => k.name)).toEqual(['a', 'b']);
  });

  it('rejects absurd nesting with a diagnostic instead of overflowing the stack', () => {
    const deep = `kernel k() -> () { x = ${'('.repeat(5000)}1${')'.repeat(5000)}; }`;
    const d = only(errors(deep));
    expect(d.code).toBe('DY1002');
    expect(d.message).toMatch(/nested/);
    const ternaries = `kernel k() -> () { x = ${'a ? '.repeat(3000)}1${' : 2'.repeat(3000)}; }`;
    expect(only(errors(ternaries)).message).toMatch(/nested/);
    // Loops, not recursion: long chains and prefixes parse (up to the AST depth limit).
    expect(errors(`kernel k() -> () { x = 1${' + 1'.repeat(500)}; }`)).toEqual([]);
    expect(only(errors(`kernel k() -> () { x = 1${' + 1'.repeat(5000)}; }`)).message).toMatch(
      /nested too deeply \(more than 1000 levels; a chain of operators such as a \+ b \+ c counts a level per operator/,
    );
    expect(only(errors(`kernel k() -> () { x = ${'-'.repeat(5000)}1; }`)).message).toMatch(/nested too deeply/);
    // Reasonable nesting is fine.
    expect(errors(`kernel k() -> () { x = ${'('.repeat(50)}1${')'.repeat(50)}; }`)).toEqual([]);
  });
});

// ---- robustness -------------------------------------------------------------------------

/** A small deterministic PRNG (LCG), so failures reproduce. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 0x100000000;
  };
}

describe('parser: never throws', () => {
  const base = [SPMV, ATTENTION, PAGERANK, SSSP].join('\n');

  function expectSane(src: string): void {
    let result: ReturnType<typeof parseProgram> | undefined;
    expect(() => {
      result = parseProgram(src, 'fuzz.dy');
    }, JSON.stringify(src)).not.toThrow();
    if (result === undefined) return;
    const problems = [...checkTree(result.program, src.length), ...checkTree(result.diagnostics, src.length)];
    for (const d of result.diagnostics) {
      if (/internal error/.test(d.message)) problems.push(d.message);
    }
    expect(problems, JSON.stringify(src)).toEqual([]);
  }

  it('random mutations of the examples', () => {
    const rand = rng(12345);
    const pick = (n: number): number => Math.floor(rand() * n);
    const inserts = [
      '(',
      ')',
      '{',
      '}',
      '[',
      ']',
      ';',
      ':',
      ',',
      '?',
      '<',
      '=',
      '!',
      '-',
      '.',
      '#',
      '\n',
      'kernel',
      'repeat',
      'inf',
      '1e',
      '@',
    ];
    for (let iter = 0; iter < 400; iter++) {
      let src = base;
      const edits = 1 + pick(6);
      for (let e = 0; e < edits; e++) {
        const p = pick(src.length);
        switch (pick(5)) {
          case 0: // delete a few characters
            src = src.slice(0, p) + src.slice(p + 1 + pick(8));
            break;
          case 1: // duplicate a stretch
            src = src.slice(0, p) + src.slice(p, p + 1 + pick(16)) + src.slice(p);
            break;
          case 2: {
            // swap two characters
            const q = pick(src.length);
            const chars = src.split('');
            [chars[p], chars[q]] = [chars[q] ?? '', chars[p] ?? ''];
            src = chars.join('');
            break;
          }
          case 3: // insert a token-ish piece
            src = src.slice(0, p) + inserts[pick(inserts.length)] + src.slice(p);
            break;
          default: // truncate
            src = src.slice(0, p);
        }
      }
      expectSane(src);
    }
  });

  it('random token soup', () => {
    const rand = rng(777);
    const pieces = [
      'kernel',
      'repeat',
      'inf',
      '(',
      ')',
      '{',
      '}',
      '[',
      ']',
      ';',
      ':',
      ',',
      '?',
      '<',
      '>',
      '=',
      '==',
      '->',
      '-',
      '!',
      '&&',
      '||',
      'x',
      'sum',
      '1',
      '2.5',
      '.5',
      '#c\n',
      '\n',
      ' ',
      '\u00e9',
      '\ud83d\ude00',
      '\u0000',
      '\r',
      '@',
    ];
    for (let iter = 0; iter < 300; iter++) {
      let src = '';
      const n = Math.floor(rand() * 120);
      for (let j = 0; j < n; j++) src += pieces[Math.floor(rand() * pieces.length)] + (rand() < 0.5 ? ' ' : '');
      expectSane(src);
    }
  });

  it('truncations of an example at every position', () => {
    for (let p = 0; p <= PAGERANK.length; p++) expectSane(PAGERANK.slice(0, p));
  });
});
