import { describe, expect, it } from 'vitest';
import { tensorOps } from '../../ir/module.js';
import { printModule } from '../../ir/printer.js';
import { DEFAULT_PIPELINE, getPass, registerPass, registeredPasses, runPipeline } from '../../passes/index.js';
import { lower, optimised } from '../helpers/compile.js';

const ops = (src: string) =>
  tensorOps(optimised(src, ['infer-types', 'classify', 'fuse-elementwise']).kernels[0]!.body);

describe('pass manager', () => {
  it('registers the default pipeline by name', () => {
    expect(registeredPasses().map((p) => p.name)).toEqual(expect.arrayContaining([...DEFAULT_PIPELINE]));
    for (const p of DEFAULT_PIPELINE) expect(getPass(p)?.description.length).toBeGreaterThan(10);
  });
  it('dumps after the passes asked for, in order', () => {
    const seen: string[] = [];
    runPipeline(lower('kernel k(x: dense<f32>[n]) -> (y: dense<f32>[n]) { y[i] = x[i]; }'), {
      passes: DEFAULT_PIPELINE,
      printAfter: new Set(['lower', 'classify']),
      dump: (s) => seen.push(s),
    });
    expect(seen).toEqual(['lower', 'classify']);
  });
  it('rejects unknown passes with DY5003', () => {
    const m = lower('kernel k(x: dense<f32>[n]) -> (y: dense<f32>[n]) { y[i] = x[i]; }');
    expect(() => runPipeline(m, { passes: ['no-such-pass'] })).toThrow(/DY5003/);
    expect(() => runPipeline(m, { passes: DEFAULT_PIPELINE, printAfter: new Set(['nope']) })).toThrow(/DY5003/);
  });
  it('verifies after every pass: a pass that breaks the IR is caught', () => {
    const m = lower('kernel k(x: dense<f32>[n]) -> (y: dense<f32>[n]) { y[i] = x[i]; }');
    const broken = {
      name: 'break-it',
      description: 'renames a load to an undefined value',
      run: (mm: typeof m) => {
        const op = tensorOps(mm.kernels[0]!.body)[0]!;
        if (op.expr.k === 'load') op.expr.tensor = 'ghost';
        return mm;
      },
    };
    registerPass(broken);
    expect(() => runPipeline(m, { passes: ['infer-types', 'break-it'] })).toThrow(/after pass 'break-it'.*'ghost'/s);
  });
});

describe('infer-types', () => {
  it('states the type of every temporary', () => {
    const m = optimised(
      'kernel k(A: csc<f64>[m, n], x: dense<f64>[n]) -> (y: dense<f64>[m]) { t[i, j] = A[i, j] * 2; y[i] = t[i, j] * x[j]; }',
      ['infer-types'],
    );
    const text = printModule(m);
    expect(text).toContain('%t[i, j] = stmt %A[i, j] * 2 : csc<f64>[m, n]');
    expect(text).not.toContain(': ?');
  });
  it('gives literal-only temporaries the default dtype', () => {
    const m = optimised(
      'kernel k(x: dense<i32>[n]) -> (y: dense<i32>[n]) { t[i] = x[i] > 0 ? 1.5 : 2; y[i] = x[i]; }',
      ['infer-types'],
    );
    expect(printModule(m)).toContain(': dense<f64>[n]');
  });
});

describe('classify', () => {
  const label = (
    body: string,
    params = 'A: csr<f32>[n, n], B: dense<f32>[n, n], x: dense<f32>[n]',
    results = 'y: dense<f32>[n]',
  ) => ops(`kernel k(${params}) -> (${results}) { ${body} }`).map((o) => [o.kind, o.attrs]);
  it('spmv with semiring plus-times and min-plus', () => {
    expect(label('y[i] = A[i, j] * x[j];')).toEqual([['spmv', { semiring: 'plus-times', sparse: 'A' }]]);
    expect(label('y[i] = min(j: A[i, j] + x[j]);')).toEqual([['spmv', { semiring: 'min-plus', sparse: 'A' }]]);
  });
  it('spmm, gemm, gemv, reduce, copy, map', () => {
    const r = 'Y: dense<f32>[n, n]';
    expect(label('Y[i, k] = A[i, j] * B[j, k];', undefined, r)[0]![0]).toBe('spmm');
    expect(label('Y[i, k] = B[i, j] * B[j, k];', undefined, r)[0]![0]).toBe('gemm');
    expect(label('y[i] = B[i, j] * x[j];')[0]![0]).toBe('gemv');
    expect(label('y[i] = max(j: A[i, j]);')[0]![0]).toBe('reduce');
    expect(label('y[i] = sum(j: B[i, j]);')[0]![0]).toBe('reduce');
    expect(label('y[i] = x[i];')[0]![0]).toBe('copy');
    expect(label('y[i] = relu(x[i]) + 1;')[0]![0]).toBe('map');
  });
  it('sddmm and sparse map', () => {
    const r = 'S: csr<f32>[n, n]';
    expect(label('S[i, j] = A[i, j] * sum(k: B[i, k] * B[j, k]);', undefined, r)).toEqual([
      ['sddmm', { semiring: 'plus-times', sparse: 'A' }],
    ]);
    expect(label('S[i, j] = exp(A[i, j]);', undefined, r)).toEqual([['map', { sparse: 'A' }]]);
  });
  it('records epilogues innermost first', () => {
    expect(label('y[i] = relu(2 * (A[i, j] * x[j]) + 1);')[0]![1]).toMatchObject({ epilogue: ['mul', 'add', 'relu'] });
  });
  it('contract for anything else', () => {
    expect(label('y[i] = sum(j: B[i, j] * x[j]) + sum(j: A[i, j] * x[j]);')[0]![0]).toBe('contract');
  });
});

describe('fuse-elementwise', () => {
  it('merges a single-use elementwise consumer into its producer', () => {
    const list = ops(
      'kernel k(A: csr<f32>[n, n], B: dense<f32>[n, f]) -> (H: dense<f32>[n, f]) { T[i, k] = A[i, j] * B[j, k]; H[i, k] = relu(T[i, k]) * 2; }',
    );
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      kind: 'spmm',
      id: 'op0',
      result: 'H',
      attrs: { fused: ['T', 'H'], epilogue: ['relu', 'mul'] },
    });
  });
  it("renames the producer's reduction index when it clashes", () => {
    const list = ops(
      'kernel k(A: csr<f32>[n, n], x: dense<f32>[n]) -> (y: dense<f32>[n]) { t[j] = A[j, i] * x[i]; y[i] = t[i] + 1; }',
    );
    expect(list).toHaveLength(1);
    expect(
      printModule(
        optimised(
          'kernel k(A: csr<f32>[n, n], x: dense<f32>[n]) -> (y: dense<f32>[n]) { t[j] = A[j, i] * x[i]; y[i] = t[i] + 1; }',
        ),
      ),
    ).toContain('sum(i1: %A[i, i1] * %x[i1]) + 1');
  });
  it('keeps values read twice, results, broadcasts and values overwritten in between', () => {
    expect(
      ops('kernel k(x: dense<f32>[n]) -> (y: dense<f32>[n]) { t[i] = exp(x[i]); y[i] = t[i] * t[i]; }'),
    ).toHaveLength(2);
    expect(
      ops('kernel k(x: dense<f32>[n]) -> (t: dense<f32>[n], y: dense<f32>[n]) { t[i] = exp(x[i]); y[i] = t[i] + 1; }'),
    ).toHaveLength(2);
    expect(
      ops(
        'kernel k(S: csr<f32>[n, n]) -> (E: csr<f32>[n, n]) { m[i] = max(j: S[i, j]); E[i, j] = exp(S[i, j] - m[i]); }',
      ),
    ).toHaveLength(2);
    expect(
      ops(
        'kernel k(x: dense<f32>[n]) -> (y: dense<f32>[n]) { u[i] = x[i]; t[i] = exp(u[i]); u[i] = 2 * x[i]; y[i] = t[i] + u[i]; }',
      ),
    ).toHaveLength(4);
  });
  it('fuses inside repeat regions', () => {
    const m = optimised(
      'kernel k(A: csr<f32>[n, n], r0: dense<f32>[n]) -> (r: dense<f32>[n]) { r[i] = r0[i]; repeat 3 { t[i] = A[i, j] * r[j]; r[i] = t[i] / 2; } }',
    );
    expect(tensorOps(m.kernels[0]!.body).map((o) => o.kind)).toEqual(['copy', 'spmv']);
  });
});

describe('annotate-cost', () => {
  const cost = (src: string) =>
    tensorOps(optimised(src).kernels[0]!.body).map((o) => ({
      items: o.attrs['items'],
      flops: o.attrs['flops'],
      gathers: o.attrs['gathers'],
      reads: o.attrs['reads'],
      writes: o.attrs['writes'],
    }));
  it('counts SpMV work in nnz and rows', () => {
    expect(
      cost('kernel k(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }'),
    ).toEqual([{ items: 'm', flops: '2*nnz(A)', gathers: 'nnz(A)', reads: '4 + 4*m + 4*n + 8*nnz(A)', writes: '4*m' }]);
  });
  it('spreads a reduction driven by the column index over the columns', () => {
    expect(
      cost('kernel k(A: csr<f64>[m, n], x: dense<f64>[m]) -> (y: dense<f64>[n]) { y[j] = A[i, j] * x[i]; }')[0],
    ).toMatchObject({ items: 'n', flops: '2*nnz(A)', gathers: 'nnz(A)' });
  });
  it('counts dense products, SpMM, SDDMM and sparse maps', () => {
    expect(
      cost(
        'kernel k(X: dense<f32>[n, f], W: dense<f32>[f, h]) -> (Y: dense<f32>[n, h]) { Y[i, k] = X[i, j] * W[j, k]; }',
      )[0],
    ).toMatchObject({ flops: '2*f*h*n', gathers: '0' });
    expect(
      cost(
        'kernel k(A: csr<f32>[n, n], B: dense<f32>[n, h]) -> (Y: dense<f32>[n, h]) { Y[i, k] = relu(A[i, j] * B[j, k]); }',
      )[0],
    ).toMatchObject({ flops: 'h*n + 2*h*nnz(A)', gathers: 'h*nnz(A)' });
    expect(
      cost(
        'kernel k(A: csr<f32>[n, n], Q: dense<f32>[n, d]) -> (S: csr<f32>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * Q[j, k]); }',
      )[0],
    ).toMatchObject({ items: 'nnz(A)', flops: '2*d*nnz(A) + nnz(A)', gathers: 'd*nnz(A)' });
    expect(cost('kernel k(A: coo<f32>[n, n]) -> (E: coo<f32>[n, n]) { E[i, j] = exp(A[i, j]); }')[0]).toMatchObject({
      items: 'nnz(A)',
      flops: 'nnz(A)',
    });
  });
  it("counts the innermost loop's trips with the column loop whole, and the column loop's range", () => {
    const loops = (src: string) =>
      tensorOps(optimised(src).kernels[0]!.body).map((o) => [o.kind, o.attrs['loops'], o.attrs['columns']]);
    // GEMM: a trip per row and k, the output columns whole (its time follows their blocks, not k).
    expect(
      loops(
        'kernel k(X: dense<f32>[n, f], W: dense<f32>[f, h]) -> (Y: dense<f32>[n, h]) { Y[i, k] = X[i, j] * W[j, k]; }',
      ),
    ).toEqual([['gemm', 'f*n', 'h']]);
    // An elementwise map over rows of h: a broadcast keeps the rows; reading only its own elements, the matrix is
    // one column loop (codegen/cpu/flat.ts), as a vector is (its row loop is its column loop).
    expect(
      loops(
        'kernel k(X: dense<f32>[n, h], c: dense<f32>[h]) -> (Y: dense<f32>[n, h]) { Y[i, k] = relu(X[i, k] + c[k]); }',
      ),
    ).toEqual([['map', 'n', 'h']]);
    expect(loops('kernel k(X: dense<f32>[n, h]) -> (Y: dense<f32>[n, h]) { Y[i, k] = relu(X[i, k]); }')).toEqual([
      ['map', '1', 'h*n'],
    ]);
    expect(loops('kernel k(x: dense<f64>[n]) -> (y: dense<f64>[n]) { y[i] = x[i] * 2; }')).toEqual([['map', '1', 'n']]);
    // SpMM: a trip per stored entry; SpMV and GEMV: each row's sum is one accumulator's, no column loop.
    expect(
      loops(
        'kernel k(A: csr<f32>[n, n], B: dense<f32>[n, h]) -> (Y: dense<f32>[n, h]) { Y[i, k] = A[i, j] * B[j, k]; }',
      ),
    ).toEqual([['spmm', 'nnz(A)', 'h']]);
    expect(
      loops('kernel k(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }'),
    ).toEqual([['spmv', 'nnz(A)', '1']]);
    expect(
      loops('kernel k(M: dense<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = M[i, j] * x[j]; }'),
    ).toEqual([['gemv', 'm*n', '1']]);
    // SDDMM: a sparse result has no column loop; its dot's trips per entry.
    expect(
      loops(
        'kernel k(A: csr<f32>[n, n], Q: dense<f32>[n, d]) -> (S: csr<f32>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * Q[j, k]); }',
      ),
    ).toEqual([['sddmm', 'd*nnz(A)', '1']]);
  });
  it('charges sparse temporaries to the root of their pattern', () => {
    const c = cost(
      'kernel k(A: csr<f32>[n, n], x: dense<f32>[n]) -> (y: dense<f32>[n]) { E[i, j] = exp(A[i, j]); y[i] = E[i, j] * x[j]; }',
    );
    expect(c[1]).toMatchObject({ flops: '2*nnz(A)' });
  });
});
