import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DiagnosticError } from '../../ir/diagnostics.js';
import { BINARY_FUNCS, UNARY_FUNCS, exprEquals, type BinOp, type Expr } from '../../ir/expr.js';
import { buildRegionGraph } from '../../ir/graph.js';
import { printExpr, printModule } from '../../ir/printer.js';
import { parseExpr, parseModule } from '../../ir/text-parser.js';
import { verifyModule } from '../../ir/verifier.js';
import { optimised } from '../helpers/compile.js';

const BIN: BinOp[] = ['+', '-', '*', '/', '<', '<=', '>', '>=', '==', '!=', '&&', '||'];

const exprArb: fc.Arbitrary<Expr> = fc.letrec<{ e: Expr }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .record({
        k: fc.constant('const' as const),
        value: fc.oneof(fc.integer({ min: -5, max: 1000 }), fc.double({ noNaN: true }), fc.constant(Infinity)),
        int: fc.boolean(),
      })
      .map((c) => ({ ...c, int: c.int && Number.isInteger(c.value) }) as Expr),
    fc.record({ k: fc.constant('dim' as const), name: fc.constantFrom('n', 'm') }).map((c) => c as Expr),
    fc
      .record({
        k: fc.constant('load' as const),
        tensor: fc.constantFrom('A', 'x', 's'),
        idx: fc.constantFrom<string[][]>([], ['i'], ['i', 'j']),
      })
      .map((c) => c as Expr),
    fc.record({ k: fc.constant('neg' as const), arg: tie('e') }).map((c) => c as Expr),
    fc.record({ k: fc.constant('not' as const), arg: tie('e') }).map((c) => c as Expr),
    fc
      .record({ k: fc.constant('bin' as const), op: fc.constantFrom(...BIN), lhs: tie('e'), rhs: tie('e') })
      .map((c) => c as Expr),
    fc
      .record({ k: fc.constant('select' as const), cond: tie('e'), then: tie('e'), else: tie('e') })
      .map((c) => c as Expr),
    fc
      .record({ k: fc.constant('call' as const), fn: fc.constantFrom(...UNARY_FUNCS), args: fc.tuple(tie('e')) })
      .map((c) => c as Expr),
    fc
      .record({
        k: fc.constant('call' as const),
        fn: fc.constantFrom(...BINARY_FUNCS),
        args: fc.tuple(tie('e'), tie('e')),
      })
      .map((c) => c as Expr),
    fc
      .record({
        k: fc.constant('reduce' as const),
        op: fc.constantFrom('sum', 'min', 'max', 'any', 'all'),
        idx: fc.constantFrom<string[][]>(['j'], ['j', 'k']),
        body: tie('e'),
      })
      .map((c) => c as Expr),
  ),
})).e;

/** Literal negation is folded by the parser, so compare after the same folding. */
function fold(e: Expr): Expr {
  return parseExpr(printExpr(e));
}

describe('IR text', () => {
  it('print(parse(print(e))) === print(e) for random expressions', () => {
    fc.assert(
      fc.property(exprArb, (e) => {
        const text = printExpr(e);
        const back = parseExpr(text);
        expect(printExpr(back)).toBe(text);
        expect(exprEquals(fold(back), back)).toBe(true);
      }),
      { numRuns: 2000, seed: 7 },
    );
  });
  it('prints the fewest parentheses the grammar needs', () => {
    for (const s of [
      'a - (b - c)',
      '(a - b) - c',
      'a * (b + c)',
      '-(a + b)',
      '(a < b) == (c < d)',
      'a ? b : c ? d : e',
      '(a ? b : c) ? d : e',
      'a - -1',
      '!(a && b) || c',
    ]) {
      const text = s.replace(/\b([a-e])\b/g, '%$1');
      const printed = printExpr(parseExpr(text));
      expect(printExpr(parseExpr(printed))).toBe(printed);
    }
    expect(printExpr(parseExpr('(%a - %b) - %c'))).toBe('%a - %b - %c');
    expect(printExpr(parseExpr('%a - (%b - %c)'))).toBe('%a - (%b - %c)');
    expect(printExpr(parseExpr('2.0 * inf + 1e-06'))).toBe('2.0 * inf + 0.000001');
  });
  it('reports malformed IR with DY5001 at the offending token', () => {
    const bad = 'kernel @k(%x: dense<f32>[n]) -> (%y: dense<f32>[n]) {\n  op0: %y[i] = copy %x[i] : dense<f33>[n]\n}\n';
    try {
      parseModule(bad, 'bad.ir');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DiagnosticError);
      const d = (e as DiagnosticError).diagnostics[0]!;
      expect(d.code).toBe('DY5001');
      expect([d.span.file, d.span.line, d.span.col]).toEqual(['bad.ir', 2, 35]);
      expect(d.message).toContain("expected a dtype, found 'f33'");
    }
    for (const text of [
      'kernel',
      'kernel @k(',
      'kernel @k() -> () { op0: %y = nope %x : f32 }',
      'kernel @k() -> () { op0: %y = copy chained(%x) : f32 }',
      '%%%',
      'kernel @k() -> () { op0: %y = map %a < %b < %c : bool }',
    ])
      expect(() => parseModule(text)).toThrow(DiagnosticError);
  });

  it('takes inf and nan as a reduction index where ":" follows, and as constants otherwise', () => {
    // `nan` is a name in the language (only `inf` is a literal there).
    const text = printModule(optimised('kernel k(x: dense<f64>[n]) -> (s: f64) { s = sum(nan: x[nan]); }', []));
    expect(text).toContain('sum(nan: %x[nan])');
    expect(printModule(parseModule(text))).toBe(text);
    expect(parseExpr('max(nan, %x[i])')).toMatchObject({ k: 'call', fn: 'max' });
    expect(parseExpr('max(inf, nan)')).toMatchObject({ k: 'call', fn: 'max' });
    expect(parseExpr('max(nan: %x[nan])')).toMatchObject({ k: 'reduce', idx: ['nan'] });
  });
});

describe('verifier', () => {
  const typed = printModule(
    optimised(
      'kernel k(A: csr<f32>[n, n], x: dense<f32>[n]) -> (y: dense<f32>[n]) { t[i] = A[i, j] * x[j]; y[i] = t[i] + 1; }',
      ['infer-types', 'classify'],
    ),
  );
  const problems = (text: string) => verifyModule(parseModule(text), { requireTypes: true }).map((d) => d.message);
  it('accepts the pipeline output', () => expect(problems(typed)).toEqual([]));
  it('reports a left side of another rank than the result, rather than failing inside inference', () => {
    const scalar = 'kernel @k(%x: dense<f64>[n]) -> (%y: f64) {\n  op0: %y[i] = copy %x[i] : ?\n}\n';
    expect(
      verifyModule(parseModule(scalar))
        .map((d) => d.message)
        .join('\n'),
    ).toMatch(/declared f64 \(rank 0\)/);
    const none = 'kernel @k(%x: dense<f64>[n]) -> (%y: dense<f64>[n]) {\n  op0: %y = copy %x[i] : ?\n}\n';
    expect(
      verifyModule(parseModule(none))
        .map((d) => d.message)
        .join('\n'),
    ).toMatch(/with 0 index\(es\)/);
  });
  it.each([
    [
      'a wrong stated type',
      (t: string) => t.replace(': dense<f32>[n] {semiring', ': dense<f64>[n] {semiring'),
      /stated type dense<f64>\[n\]|the right side is f32 but the target is f64/,
    ],
    [
      'a use before assignment',
      (t: string) => t.replace('%t[i] + 1', '%u[i] + 1'),
      /'u' is used before it is assigned/,
    ],
    ['an unknown attribute', (t: string) => t.replace('semiring =', 'colour ='), /attribute 'colour' is not allowed/],
    [
      'an attribute of the wrong kind',
      (t: string) => t.replace('sparse = "A"', 'sparse = 3'),
      /'sparse' must be string/,
    ],
    ['a duplicate op id', (t: string) => t.replace('op1:', 'op0:'), /op id 'op0' is used twice/],
    ['a kind that does not fit', (t: string) => t.replace('= spmv', '= gemm'), /gemm: a gemm has/],
    [
      'an assignment to a parameter',
      (t: string) => t.replace('%t[i] = spmv', '%x[i] = spmv'),
      /assigns to parameter 'x'/,
    ],
    ['a result never assigned', (t: string) => t.replace('%y[i] = map', '%z[i] = map'), /result 'y' is never assigned/],
    [
      'a shadowed reduction index',
      (t: string) => t.replace('sum(j: %A[i, j] * %x[j])', 'sum(i: %A[i, i] * %x[i])'),
      /already in scope/,
    ],
    ['a missing type', (t: string) => t.replace(': dense<f32>[n] {semiring', ': ? {semiring'), /'t' has no type/],
    [
      'a left side of another rank than the declared result',
      (t: string) => t.replace('%y[i] = map', '%y[i, j] = map'),
      /'y' is declared dense<f32>\[n\] \(rank 1\) but assigned with 2 index\(es\)/,
    ],
  ])('rejects %s', (_name, edit, msg) => {
    const out = problems(edit(typed));
    expect(out.length).toBeGreaterThan(0);
    expect(out.join('\n')).toMatch(msg);
  });
});

describe('op graph', () => {
  it('links each reader to the last writer and records loop-carried reads', () => {
    const m = optimised(
      'kernel k(A: csr<f32>[n, n], r0: dense<f32>[n]) -> (r: dense<f32>[n], s: dense<f32>[n]) { r[i] = r0[i]; repeat 2 { r[i] = A[i, j] * r[j]; } s[i] = r[i] * 2; }',
    );
    const k = m.kernels[0]!;
    const g = buildRegionGraph(k.body);
    expect(g.graph.nodes()).toEqual(['op0', 'op1', 'op3']);
    expect(
      g.graph
        .edges()
        .map((e) => `${e.v}->${e.w}`)
        .sort(),
    ).toEqual(['op0->op1', 'op1->op3']);
    const loop = k.body[1]!;
    if (loop.kind !== 'repeat') throw new Error('expected a repeat');
    expect([...buildRegionGraph(loop.body).liveIn.get('op2')!].sort()).toEqual(['A', 'r']);
  });
});
