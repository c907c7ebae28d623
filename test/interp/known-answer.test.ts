import { compileSource } from '../../frontend/compile.js';
/**
 * Known-answer tests for the float64 reference interpreter: tiny programs on
 * hand-built tensors, each expected value worked out by hand from the
 * semantics in docs/LANGUAGE.md (implicit sums, structural sparsity,
 * reduction identities, Jacobi steps in repeat loops).
 */
import { describe, expect, it } from 'vitest';
import type { Tensor } from '../../runtime/tensor.js';
import {
  compileModule,
  coo,
  csc,
  csr,
  dense,
  denseData,
  entries,
  pickKernel,
  runDy,
  runKernel,
  vec,
  A3,
  x3,
  type Triple,
} from '../helpers/interp-run.js';

const INF = Number.POSITIVE_INFINITY;

// A 3x3 matrix whose middle row is empty:
//   [ 1 . 2 ]
//   [ . . . ]
//   [ . 3 4 ]

function only(outs: Map<string, Tensor>, name: string): Tensor {
  const t = outs.get(name);
  if (!t) throw new Error(`no output '${name}'; got ${[...outs.keys()].join(', ')}`);
  return t;
}

describe('sparse reductions and their identities', () => {
  it('spmv: y = A x, an empty row sums to 0', () => {
    const src = `kernel spmv(A: csr<f64>[m, n], x: dense<f64>[n]) -> (y: dense<f64>[m]) { y[i] = A[i, j] * x[j]; }`;
    const y = only(runDy(src, { tensors: { A: csr(3, 3, A3), x: x3 } }), 'y');
    expect(y.format).toBe('dense');
    expect((y as { shape: number[] }).shape).toEqual([3]);
    // row 0: 1*1 + 2*3 = 7; row 1: no entries -> 0; row 2: 3*2 + 4*3 = 18
    expect(denseData(y)).toEqual([7, 0, 18]);
  });

  it('min-plus spmv: an empty row gives +inf', () => {
    const src = `kernel mp(A: csr<f64>[m, n], x: dense<f64>[n]) -> (y: dense<f64>[m]) { y[i] = min(j: A[i, j] + x[j]); }`;
    const y = only(runDy(src, { tensors: { A: csr(3, 3, A3), x: x3 } }), 'y');
    // row 0: min(1+1, 2+3) = 2; row 1: +inf; row 2: min(3+2, 4+3) = 5
    expect(denseData(y)).toEqual([2, INF, 5]);
  });

  it('max reduction visits stored entries only (an implicit zero never wins), empty row gives -inf', () => {
    const neg: Triple[] = [
      [0, 0, -1],
      [0, 2, -2],
      [2, 1, 3],
      [2, 2, -4],
    ];
    const src = `kernel mx(A: csr<f64>[m, n], x: dense<f64>[n]) -> (y: dense<f64>[m]) { y[i] = max(j: A[i, j] * x[j]); }`;
    const y = only(runDy(src, { tensors: { A: csr(3, 3, neg), x: x3 } }), 'y');
    // row 0: max(-1*1, -2*3) = -1 (not 0); row 1: -inf; row 2: max(3*2, -4*3) = 6
    expect(denseData(y)).toEqual([-1, -INF, 6]);
  });

  it('dense max and min over an index of a dense operand', () => {
    const src = `kernel mm(X: dense<f64>[m, n]) -> (hi: dense<f64>[m], lo: dense<f64>[n]) {
      hi[i] = max(j: X[i, j]);
      lo[j] = min(i: X[i, j]);
    }`;
    const outs = runDy(src, { tensors: { X: dense([2, 3], [3, -1, 7, 0, 5, -2]) } });
    expect(denseData(outs.get('hi'))).toEqual([7, 5]);
    expect(denseData(outs.get('lo'))).toEqual([0, -1, -2]);
  });

  it('any/all over bool: identities false/true on an empty row', () => {
    const src = `kernel aa(A: csr<f64>[m, n], x: dense<f64>[n], b: dense<bool>[n]) -> (p: dense<bool>[m], q: dense<bool>[m], u: bool, v: bool) {
      p[i] = any(j: A[i, j] * x[j] > 5.0);
      q[i] = all(j: A[i, j] > 1.5);
      u = any(j: b[j]);
      v = all(j: b[j]);
    }`;
    const outs = runDy(src, { tensors: { A: csr(3, 3, A3), x: x3, b: vec([1, 0, 1]) } });
    // products: row 0 {1, 6}, row 2 {6, 12}; values: row 0 {1, 2}, row 2 {3, 4}
    expect(denseData(outs.get('p'))).toEqual([1, 0, 1]);
    expect(denseData(outs.get('q'))).toEqual([0, 1, 1]);
    expect(denseData(outs.get('u'))).toEqual([1]);
    expect(denseData(outs.get('v'))).toEqual([0]);
  });

  it('any/all over a dense bool vector that is all true / all false', () => {
    const src = `kernel aa(b: dense<bool>[n]) -> (u: bool, v: bool) { u = any(j: b[j]); v = all(j: b[j]); }`;
    const t = runDy(src, { tensors: { b: vec([1, 1, 1]) } });
    expect([denseData(t.get('u'))[0], denseData(t.get('v'))[0]]).toEqual([1, 1]);
    const f = runDy(src, { tensors: { b: vec([0, 0]) } });
    expect([denseData(f.get('u'))[0], denseData(f.get('v'))[0]]).toEqual([0, 0]);
  });
});

describe('sparse results keep the pattern', () => {
  // Pattern with an explicit zero at (1, 0):
  //   [ 2 . 1 ]
  //   [ 0 . . ]
  //   [ . 5 . ]
  const P: Triple[] = [
    [0, 0, 2],
    [0, 2, 1],
    [1, 0, 0],
    [2, 1, 5],
  ];

  it('SDDMM: computed only at stored entries; an explicit zero stays an entry', () => {
    const src = `kernel sddmm(A: csr<f64>[n, n], Q: dense<f64>[n, d], K: dense<f64>[n, d]) -> (S: csr<f64>[n, n]) {
      S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]);
    }`;
    const Q = dense([3, 2], [1, 2, 3, 4, 5, 6]);
    const K = dense([3, 2], [1, 0, 0, 1, 1, 1]);
    const S = only(runDy(src, { tensors: { A: csr(3, 3, P), Q, K } }), 'S');
    expect(S.format).toBe('csr');
    // <Q0,K0> = 1, <Q0,K2> = 3, <Q1,K0> = 3, <Q2,K1> = 6
    expect(entries(S)).toEqual([
      [0, 0, 2 * 1],
      [0, 2, 1 * 3],
      [1, 0, 0 * 3],
      [2, 1, 5 * 6],
    ]);
  });

  it('sparse map: exp of the stored entries (exp(0) = 1 at the explicit zero, nothing elsewhere)', () => {
    const src = `kernel em(A: csr<f64>[m, n]) -> (E: csr<f64>[m, n]) { E[i, j] = exp(A[i, j]); }`;
    const E = only(runDy(src, { tensors: { A: csr(3, 3, P) } }), 'E');
    expect(entries(E)).toEqual([
      [0, 0, Math.exp(2)],
      [0, 2, Math.exp(1)],
      [1, 0, 1],
      [2, 1, Math.exp(5)],
    ]);
  });

  it('a sparse temporary feeds a row reduction over its own pattern', () => {
    const src = `kernel rs(A: csr<f64>[m, n]) -> (s: dense<f64>[m]) {
      E[i, j] = A[i, j] * A[i, j] + 1.0;
      s[i] = sum(j: E[i, j]);
    }`;
    const s = only(runDy(src, { tensors: { A: csr(3, 3, P) } }), 's');
    // row 0: (4+1) + (1+1) = 7; row 1: 0+1 = 1 (explicit zero counts); row 2: 26
    expect(denseData(s)).toEqual([7, 1, 26]);
  });

  it('densify: a dense result reading A[i, j] sees 0 where A has no entry', () => {
    const src = `kernel dz(A: csr<f64>[m, n]) -> (D: dense<f64>[m, n]) { D[i, j] = A[i, j] + 1.0; }`;
    const D = only(runDy(src, { tensors: { A: csr(3, 3, P) } }), 'D');
    expect((D as { shape: number[] }).shape).toEqual([3, 3]);
    expect(denseData(D)).toEqual([3, 1, 2, 1, 1, 1, 1, 6, 1]);
  });

  it('densify with the indices permuted: a dense transpose', () => {
    const src = `kernel tr(A: csr<f64>[m, n]) -> (T: dense<f64>[n, m]) { T[j, i] = A[i, j]; }`;
    const T = only(
      runDy(src, {
        tensors: {
          A: csr(2, 3, [
            [0, 1, 7],
            [1, 2, 9],
          ]),
        },
      }),
      'T',
    );
    expect((T as { shape: number[] }).shape).toEqual([3, 2]);
    expect(denseData(T)).toEqual([0, 0, 7, 0, 0, 9]);
  });
});

describe('reductions driven from inside nested expressions', () => {
  const P: Triple[] = [
    [0, 0, 2],
    [0, 2, 1],
    [1, 0, 0],
    [2, 1, 5],
  ];
  const X = dense([3, 2], [1, 2, 3, 4, 5, 6]);

  it('an outer max driven by a sparse load inside an inner dense sum', () => {
    const src = `kernel k(A: csr<f64>[n, n], X: dense<f64>[n, c]) -> (z: dense<f64>[n]) { z[i] = max(j: sum(k: A[i, j] * X[j, k])); }`;
    // row 0: max(2*(1+2), 1*(5+6)) = 11; row 1: 0*(1+2) = 0 (explicit zero); row 2: 5*(3+4) = 35
    expect(denseData(runDy(src, { tensors: { A: csr(3, 3, P), X } }).get('z'))).toEqual([11, 0, 35]);
  });

  it('SDDMM-like scaling by column sums: sum(k: A[k, j]) runs down column j', () => {
    const src = `kernel k(A: csr<f64>[n, n]) -> (S: csr<f64>[n, n]) { S[i, j] = A[i, j] * sum(k: A[k, j]); }`;
    // column sums: [2, 5, 1]
    expect(entries(runDy(src, { tensors: { A: csr(3, 3, P) } }).get('S'))).toEqual([
      [0, 0, 4],
      [0, 2, 1],
      [1, 0, 0],
      [2, 1, 25],
    ]);
  });

  it('implicit two-hop product A (A x) nests the sums when parenthesised so', () => {
    // Written left to right, (A[i,j] * A[j,k]) * x[k] sums j innermost, where two
    // accesses of A would have to be joined: rejected with DY2005 (see below).
    const src = `kernel k(A: csr<f64>[n, n], x: dense<f64>[n]) -> (y: dense<f64>[n]) { y[i] = A[i, j] * (A[j, k] * x[k]); }`;
    // A x = [50, 0, 100]; A (A x) = [2*50 + 1*100, 0*50, 5*0]
    expect(denseData(runDy(src, { tensors: { A: csr(3, 3, P), x: vec([10, 20, 30]) } }).get('y'))).toEqual([200, 0, 0]);
  });

  it('explicit nested min-plus two-hop: min(j: A[i, j] + min(k: A[j, k] + x[k]))', () => {
    const src = `kernel k(A: csr<f64>[n, n], x: dense<f64>[n]) -> (y: dense<f64>[n]) { y[i] = min(j: A[i, j] + min(k: A[j, k] + x[k])); }`;
    // row 0: j=0 -> 2 + min(2+10, 1+30) = 14; j=2 -> 1 + (5+20) = 26 => 14
    // row 1: j=0 -> 0 + 12 = 12; row 2: j=1 -> 5 + (0+10) = 15
    expect(denseData(runDy(src, { tensors: { A: csr(3, 3, P), x: vec([10, 20, 30]) } }).get('y'))).toEqual([
      14, 12, 15,
    ]);
  });

  // BUG (reported): a reduction over two indices, each an index of a load of
  // the same sparse tensor (min(j, k: A[i, j] + A[j, k] + x[k])), is accepted
  // by the checker (and classified as a plain min-plus spmv), but the
  // interpreter only iterates A[i, j]'s entries and runs k over all of 0..n-1,
  // reading A[j, k] as 0 where it has no entry. By docs/LANGUAGE.md (a
  // reduction over an index of a sparse operand visits only its stored
  // entries) the answer must equal the nested form above, [14, 12, 15]; the
  // interpreter gives [11, 12, 15] (row 0: j=2, k=0 uses the missing A[2, 0] as 0).
  // One reduction over two accesses of one pattern with different indices would
  // need a join of two entry lists; the checker rejects it (DY2005) and the
  // nested form above says it directly.
  it('rejects a two-index reduction over two differently indexed accesses of one sparse tensor', () => {
    for (const body of [
      'min(j, k: A[i, j] + A[j, k] + x[k])',
      'sum(j, k: A[i, j] + A[j, k])',
      'A[i, j] * A[j, k] * x[k]',
    ]) {
      const src = `kernel k(A: csr<f64>[n, n], x: dense<f64>[n]) -> (y: dense<f64>[n]) { y[i] = ${body}; }`;
      const r = compileSource(src, 'two-hop.dy');
      expect(r.module).toBeUndefined();
      expect(r.diagnostics.map((d) => d.code)).toEqual(['DY2005']);
      expect(r.diagnostics[0]!.message).toContain('nest the reductions');
    }
  });
});

describe('transposed products and storage formats', () => {
  // 3x4 rectangular, column 3 empty, row 1 empty:
  //   [ 1 . 2 . ]
  //   [ . . . . ]
  //   [ 4 3 . . ]
  const R: Triple[] = [
    [0, 0, 1],
    [0, 2, 2],
    [2, 0, 4],
    [2, 1, 3],
  ];

  it('transposed spmv y[j] = A[i, j] * x[i]: the reduction runs down each column', () => {
    const src = `kernel tmv(A: csr<f64>[m, n], x: dense<f64>[m]) -> (y: dense<f64>[n]) { y[j] = A[i, j] * x[i]; }`;
    const y = only(runDy(src, { tensors: { A: csr(3, 4, R), x: vec([1, 10, 100]) } }), 'y');
    // col 0: 1*1 + 4*100 = 401; col 1: 300; col 2: 2; col 3: empty -> 0
    expect(denseData(y)).toEqual([401, 300, 2, 0]);
  });

  it('transposed min-plus: an empty column gives +inf', () => {
    const src = `kernel tmp(A: csr<f64>[m, n], x: dense<f64>[m]) -> (y: dense<f64>[n]) { y[j] = min(i: A[i, j] + x[i]); }`;
    const y = only(runDy(src, { tensors: { A: csr(3, 4, R), x: vec([1, 10, 100]) } }), 'y');
    expect(denseData(y)).toEqual([2, 103, 3, INF]);
  });

  const fmtSource = (
    f: string,
  ): string => `kernel k(A: ${f}<f64>[m, n], x: dense<f64>[n], z: dense<f64>[m], B: dense<f64>[n, c]) -> (y: dense<f64>[m], t: dense<f64>[n], mp: dense<f64>[m], Y: dense<f64>[m, c], E: ${f}<f64>[m, n], s: f64) {
    y[i] = A[i, j] * x[j];
    t[j] = A[i, j] * z[i];
    mp[i] = min(j: A[i, j] + x[j]);
    Y[i, q] = A[i, j] * B[j, q];
    E[i, j] = A[i, j] * x[j] - z[i];
    s = sum(i, j: A[i, j]);
  }`;
  const inputs = {
    x: vec([1, 2, 3, 4]),
    z: vec([1, 10, 100]),
    B: dense([4, 2], [1, -1, 2, -2, 3, -3, 4, -4]),
  };
  const expected = {
    y: [7, 0, 10],
    t: [401, 300, 2, 0],
    mp: [2, INF, 5],
    Y: [7, -7, 0, 0, 10, -10],
    E: [
      [0, 0, 1 * 1 - 1],
      [0, 2, 2 * 3 - 1],
      [2, 0, 4 * 1 - 100],
      [2, 1, 3 * 2 - 100],
    ] as Triple[],
    s: [10],
  };

  for (const [f, make] of [
    ['csr', csr],
    ['csc', csc],
    ['coo', coo],
  ] as const) {
    it(`${f} input gives the CSR answers (spmv, transposed spmv, min-plus, spmm, sparse map, full sum)`, () => {
      const outs = runDy(fmtSource(f), { tensors: { A: make(3, 4, R), ...inputs } });
      expect(denseData(outs.get('y'))).toEqual(expected.y);
      expect(denseData(outs.get('t'))).toEqual(expected.t);
      expect(denseData(outs.get('mp'))).toEqual(expected.mp);
      expect(denseData(outs.get('Y'))).toEqual(expected.Y);
      expect(outs.get('E')!.format).toBe(f);
      expect(entries(outs.get('E'))).toEqual(expected.E);
      expect(denseData(outs.get('s'))).toEqual(expected.s);
    });
  }
});

describe('scalar expressions', () => {
  it('ternary, comparisons and logic', () => {
    const src = `kernel t(x: dense<f64>[n]) -> (y: dense<f64>[n], c: dense<bool>[n]) {
      y[i] = (x[i] > 0.0 && x[i] < 10.0) || x[i] == -1.0 ? x[i] * 2.0 : -x[i];
      c[i] = !(x[i] <= 0.0) && (x[i] != 5.0 || x[i] >= 100.0);
    }`;
    const outs = runDy(src, { tensors: { x: vec([-1, 0, 3, 5, 10, 200, -7]) } });
    // -1: == -1 -> -2; 0: not in (0,10) -> -0; 3 -> 6; 5 -> 10; 10 -> -10; 200 -> -200; -7 -> 7
    expect(denseData(outs.get('y'))).toEqual([-2, -0, 6, 10, -10, -200, 7]);
    // c: x > 0 and (x != 5 or x >= 100)
    expect(denseData(outs.get('c'))).toEqual([0, 0, 1, 0, 1, 1, 0]);
  });

  it('elementwise functions', () => {
    const src = `kernel f(x: dense<f64>[n]) -> (r: dense<f64>[n], a: dense<f64>[n], mn: dense<f64>[n], mx: dense<f64>[n], p: dense<f64>[n]) {
      r[i] = relu(x[i]);
      a[i] = abs(x[i]);
      mn[i] = min(x[i], 1.0);
      mx[i] = max(x[i], 1.0);
      p[i] = pow(abs(x[i]), 2.0);
    }`;
    const outs = runDy(src, { tensors: { x: vec([-3, 0.5, 4]) } });
    expect(denseData(outs.get('r'))).toEqual([0, 0.5, 4]);
    expect(denseData(outs.get('a'))).toEqual([3, 0.5, 4]);
    expect(denseData(outs.get('mn'))).toEqual([-3, 0.5, 1]);
    expect(denseData(outs.get('mx'))).toEqual([1, 1, 4]);
    expect(denseData(outs.get('p'))).toEqual([9, 0.25, 16]);
  });

  it('i32 division truncates toward zero', () => {
    const src = `kernel d(a: dense<i32>[n], b: dense<i32>[n]) -> (q: dense<i32>[n], h: dense<i32>[n]) {
      q[i] = a[i] / b[i];
      h[i] = a[i] / 2 + n / 2;
    }`;
    const outs = runDy(src, { tensors: { a: vec([7, -7, 7, -7, 1]), b: vec([2, 2, -2, -2, 3]) } });
    expect(denseData(outs.get('q'))).toEqual([3, -3, -3, 3, 0]);
    // a/2 = [3, -3, 3, -3, 0]; n = 5 so n/2 = 2 (integer, as the literal meets i32)
    expect(denseData(outs.get('h'))).toEqual([5, -1, 5, -1, 2]);
  });

  it('f64 division does not truncate', () => {
    const src = `kernel d(a: dense<f64>[n], b: dense<f64>[n]) -> (q: dense<f64>[n]) { q[i] = a[i] / b[i]; }`;
    const q = runDy(src, { tensors: { a: vec([7, -7]), b: vec([2, 2]) } }).get('q');
    expect(denseData(q)).toEqual([3.5, -3.5]);
  });

  it('a dim divided by an integer literal in a float statement is float division', () => {
    const src = `kernel k(x: dense<f64>[n]) -> (y: dense<f64>[n]) { y[i] = x[i] + n / 2; }`;
    expect(denseData(runDy(src, { tensors: { x: vec([0, 1, 0, 0, 0]) } }).get('y'))).toEqual([2.5, 3.5, 2.5, 2.5, 2.5]);
  });

  it('dims used as values: (1 - d) / n in a float statement', () => {
    const src = `kernel dv(x: dense<f64>[n], d: f64) -> (y: dense<f64>[n]) { y[i] = (1 - d) / n + x[i]; }`;
    const y = runDy(src, { tensors: { x: vec([0, 1, 2, 3]) }, scalars: { d: 0.5 } }).get('y');
    // (1 - 0.5) / 4 = 0.125
    expect(denseData(y)).toEqual([0.125, 1.125, 2.125, 3.125]);
  });

  it('dims of a matrix as values', () => {
    const src = `kernel dv(X: dense<f64>[m, n]) -> (y: dense<f64>[m]) { y[i] = m * 10 + n + sum(j: X[i, j]) / n; }`;
    const y = runDy(src, { tensors: { X: dense([2, 3], [1, 2, 3, 4, 5, 6]) } }).get('y');
    expect(denseData(y)).toEqual([20 + 3 + 2, 20 + 3 + 5]);
  });

  it('scalar results: s = sum(i: x[i]) and a scalar computed from scalars', () => {
    const src = `kernel s(x: dense<f64>[n], w: f64) -> (s: f64, t: f64) {
      s = sum(i: x[i]);
      t = s * w + n;
    }`;
    const outs = runDy(src, { tensors: { x: vec([1, 2, 3.5]) }, scalars: { w: 2 } });
    const s = outs.get('s')!;
    expect(s.format).toBe('dense');
    expect((s as { shape: number[] }).shape).toEqual([]);
    expect(denseData(s)).toEqual([6.5]);
    expect(denseData(outs.get('t'))).toEqual([16]);
  });

  it('implicit sum over the smallest subexpression: relu applies after the sum', () => {
    const src = `kernel r(A: csr<f64>[m, n], x: dense<f64>[n]) -> (y: dense<f64>[m]) { y[i] = relu(A[i, j] * x[j]); }`;
    // row 0: 1*1 + (-2)*1 = -1 -> relu 0 (relu per term would give 1)
    const y = runDy(src, {
      tensors: {
        A: csr(2, 2, [
          [0, 0, 1],
          [0, 1, -2],
          [1, 1, 3],
        ]),
        x: vec([1, 1]),
      },
    }).get('y');
    expect(denseData(y)).toEqual([0, 3]);
  });
});

describe('repeat loops', () => {
  // Shift matrix S[i, i-1] = 1: (S x)[i] = x[i-1], and 0 for i = 0 (empty row).
  const shift = (n: number): Tensor =>
    csr(
      n,
      n,
      Array.from({ length: n - 1 }, (_, k): Triple => [k + 1, k, 1]),
    );
  const pascal = `kernel p(S: csr<f64>[n, n], x0: dense<f64>[n], t: i32) -> (x: dense<f64>[n]) {
    x[i] = x0[i];
    repeat t { x[i] = x[i] + S[i, j] * x[j]; }
  }`;

  it('Jacobi semantics: each step reads the previous iterate (binomial coefficients, not a prefix sum)', () => {
    // x_{t+1}[i] = x_t[i] + x_t[i-1] from e_0 gives C(t, i).
    // A Gauss-Seidel (in-place) sweep would give all ones after one step.
    const x = (t: number): number[] =>
      denseData(runDy(pascal, { tensors: { S: shift(5), x0: vec([1, 0, 0, 0, 0]) }, scalars: { t } }).get('x'));
    expect(x(1)).toEqual([1, 1, 0, 0, 0]);
    expect(x(3)).toEqual([1, 3, 3, 1, 0]);
    expect(x(4)).toEqual([1, 4, 6, 4, 1]);
  });

  it('repeat count 0 (parameter) leaves the pre-loop value', () => {
    const x = runDy(pascal, { tensors: { S: shift(3), x0: vec([1, 2, 3]) }, scalars: { t: 0 } }).get('x');
    expect(denseData(x)).toEqual([1, 2, 3]);
  });

  it('repeat 0 (literal) leaves the pre-loop value', () => {
    const src = `kernel z(x0: dense<f64>[n]) -> (x: dense<f64>[n]) { x[i] = x0[i]; repeat 0 { x[i] = 2.0 * x[i]; } }`;
    expect(denseData(runDy(src, { tensors: { x0: vec([1, -2]) } }).get('x'))).toEqual([1, -2]);
  });

  it('statements of one trip run in order: each reads the values as they stand before it', () => {
    // Two statements in one trip: b reads the a of this trip, a reads the b of the last trip.
    const src = `kernel two(x0: dense<f64>[n], t: i32) -> (a: dense<f64>[n], b: dense<f64>[n]) {
      a[i] = x0[i];
      b[i] = 0.0 * x0[i];
      repeat t {
        a[i] = a[i] + b[i] + 1.0;
        b[i] = 2.0 * a[i];
      }
    }`;
    // trip 1: a = x0 + 0 + 1, b = 2a; trip 2: a = a + b + 1 = 3a + 1, b = 2a
    const outs = runDy(src, { tensors: { x0: vec([0, 1]) }, scalars: { t: 2 } });
    expect(denseData(outs.get('a'))).toEqual([4, 7]);
    expect(denseData(outs.get('b'))).toEqual([8, 14]);
  });

  it('a result assigned only inside a loop that runs 0 times is an error, not garbage', () => {
    const src = `kernel k(x0: dense<f64>[n], t: i32) -> (y: dense<f64>[n]) { repeat t { y[i] = x0[i]; } }`;
    expect(() => runDy(src, { tensors: { x0: vec([1, 2]) }, scalars: { t: 0 } })).toThrow(/never computed/);
    expect(denseData(runDy(src, { tensors: { x0: vec([1, 2]) }, scalars: { t: 1 } }).get('y'))).toEqual([1, 2]);
  });

  it('a sparse value carried through a loop keeps its pattern', () => {
    const src = `kernel k(A: csr<f64>[m, n], c: i32) -> (E: csr<f64>[m, n]) { E[i, j] = A[i, j]; repeat c { E[i, j] = E[i, j] * 2.0 + A[i, j]; } }`;
    // E_0 = A, E_1 = 3A, E_2 = 7A
    const E = runDy(src, {
      tensors: {
        A: csr(2, 3, [
          [0, 1, 1],
          [1, 0, 0],
          [1, 2, -2],
        ]),
      },
      scalars: { c: 2 },
    }).get('E');
    expect(entries(E)).toEqual([
      [0, 1, 7],
      [1, 0, 0],
      [1, 2, -14],
    ]);
  });

  it('bellman-ford on a 4-node path with an unreachable node', () => {
    // Edge u -> v with weight w stored as A[v, u] = w (d[v] = min over in-edges).
    const src = `kernel sssp(A: csr<f64>[n, n], d0: dense<f64>[n]) -> (d: dense<f64>[n]) {
      d[i] = d0[i];
      repeat 3 { d[i] = min(d[i], min(j: A[i, j] + d[j])); }
    }`;
    const A = csr(4, 4, [
      [1, 0, 5],
      [2, 1, 1],
      [2, 0, 10],
    ]);
    const d = runDy(src, { tensors: { A, d0: vec([0, INF, INF, INF]) } }).get('d');
    expect(denseData(d)).toEqual([0, 5, 6, INF]);
  });
});

describe('attention on a tiny graph', () => {
  it('softmax over stored entries; a row without entries gives 0/0 = NaN', () => {
    const src = `kernel attention(A: csr<f64>[n, n], Q: dense<f64>[n, d], K: dense<f64>[n, d], V: dense<f64>[n, d]) -> (O: dense<f64>[n, d]) {
      S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]);
      m[i]    = max(j: S[i, j]);
      E[i, j] = exp(S[i, j] - m[i]);
      s[i]    = sum(j: E[i, j]);
      O[i, k] = sum(j: E[i, j] * V[j, k]) / s[i];
    }`;
    const A = csr(3, 3, [
      [0, 0, 1],
      [0, 1, 1],
      [2, 2, 1],
    ]);
    const O = denseData(
      runDy(src, {
        tensors: { A, Q: dense([3, 1], [1, 2, 3]), K: dense([3, 1], [0, 1, 2]), V: dense([3, 1], [5, 7, 9]) },
      }).get('O'),
    );
    // row 0: scores {0, 1}, weights {e^-1, 1} / (1 + e^-1); row 1: no entries; row 2: only itself
    const w = Math.exp(-1);
    expect(O[0]).toBeCloseTo((5 * w + 7) / (1 + w), 14);
    expect(O[1]).toBeNaN();
    expect(O[2]).toBe(9);
  });
});

describe('several kernels in one file', () => {
  const src = `
    # two kernels with the same parameter names, different bodies
    kernel double(x: dense<f64>[n]) -> (y: dense<f64>[n]) { y[i] = 2.0 * x[i]; }
    kernel square(x: dense<f64>[n]) -> (y: dense<f64>[n]) { y[i] = x[i] * x[i]; }
    kernel total(x: dense<f64>[n]) -> (s: f64) { s = sum(i: x[i]); }
  `;
  it('selects each kernel by name', () => {
    const m = compileModule(src);
    expect(m.kernels.map((k) => k.name)).toEqual(['double', 'square', 'total']);
    const x = vec([1, 2, 3]);
    expect(denseData(runKernel(pickKernel(m, 'double'), { tensors: { x } }).get('y'))).toEqual([2, 4, 6]);
    expect(denseData(runKernel(pickKernel(m, 'square'), { tensors: { x } }).get('y'))).toEqual([1, 4, 9]);
    expect(denseData(runKernel(pickKernel(m, 'total'), { tensors: { x } }).get('s'))).toEqual([6]);
  });
});
