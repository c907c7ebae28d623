/**
 * The interpreter's known-answer programs (test/interp/known-answer.test.ts),
 * run through the loop IR: every output must equal the interpreter's bit for
 * bit. Covers empty rows and identities, transposed (CSC-driven) reductions,
 * sparse maps and SDDMM, densify, integer division, any/all, scalars, nested
 * driven reductions, storage formats and repeat loops.
 */
import { describe, expect, it } from 'vitest';
import { compileSource } from '../../frontend/compile.js';
import { kernelFacts } from '../../ir/facts.js';
import { LowerError, lowerOpLoops } from '../../ir/loops-lower.js';
import type { Kernel } from '../../ir/module.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';
import type { Tensor } from '../../runtime/tensor.js';
import { coo, csc, csr, dense, denseData, vec, A3, P, R, x3 } from '../helpers/interp-run.js';
import { expectLoopsMatchInterpreter } from './compare.js';

/** Compiles through the default pipeline plus lower-kernels, so the kernel carries its loops. */
function kernelOf(src: string): Kernel {
  const r = compileSource(src, 'loops.dy');
  if (!r.module) throw new Error(r.diagnostics.map((d) => `${d.code}: ${d.message}`).join('\n'));
  const m = runPipeline(r.module, { passes: [...DEFAULT_PIPELINE, 'lower-kernels'] });
  const k = m.kernels[0]!;
  expect(k.loops?.length).toBeGreaterThan(0);
  return k;
}

const check = (
  src: string,
  tensors: Record<string, Tensor>,
  scalars: Record<string, number> = {},
): Map<string, Tensor> => expectLoopsMatchInterpreter(kernelOf(src), { tensors, scalars });

describe('loops equal the interpreter: sparse reductions and identities', () => {
  it('spmv with an empty row', () => {
    const y = check(`kernel k(A: csr<f64>[m, n], x: dense<f64>[n]) -> (y: dense<f64>[m]) { y[i] = A[i, j] * x[j]; }`, {
      A: csr(3, 3, A3),
      x: x3,
    });
    expect(denseData(y.get('y'))).toEqual([7, 0, 18]);
  });
  it('min-plus with an empty row (+inf)', () => {
    check(`kernel k(A: csr<f64>[m, n], x: dense<f64>[n]) -> (y: dense<f64>[m]) { y[i] = min(j: A[i, j] + x[j]); }`, {
      A: csr(3, 3, A3),
      x: x3,
    });
  });
  it('max over stored entries only (-inf on an empty row)', () => {
    check(`kernel k(A: csr<f64>[m, n], x: dense<f64>[n]) -> (y: dense<f64>[m]) { y[i] = max(j: A[i, j] * x[j]); }`, {
      A: csr(3, 3, A3),
      x: x3,
    });
  });
  it('dense max/min over either index', () => {
    check(
      `kernel k(X: dense<f64>[m, n]) -> (hi: dense<f64>[m], lo: dense<f64>[n]) { hi[i] = max(j: X[i, j]); lo[j] = min(i: X[i, j]); }`,
      {
        X: dense([2, 3], [3, -1, 7, 0, 5, -2]),
      },
    );
  });
  it('any/all over sparse and dense bools, scalar results', () => {
    const src = `kernel k(A: csr<f64>[m, n], x: dense<f64>[n], b: dense<bool>[n]) -> (p: dense<bool>[m], q: dense<bool>[m], u: bool, v: bool) {
      p[i] = any(j: A[i, j] * x[j] > 5.0);
      q[i] = all(j: A[i, j] > 1.5);
      u = any(j: b[j]);
      v = all(j: b[j]);
    }`;
    const o = check(src, { A: csr(3, 3, A3), x: x3, b: vec([1, 0, 1]) });
    expect(denseData(o.get('q'))).toEqual([0, 1, 1]);
  });
});

describe('loops equal the interpreter: sparse results and densify', () => {
  it('SDDMM keeps the pattern, explicit zero included', () => {
    check(
      `kernel k(A: csr<f64>[n, n], Q: dense<f64>[n, d], K: dense<f64>[n, d]) -> (S: csr<f64>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }`,
      {
        A: csr(3, 3, P),
        Q: dense([3, 2], [1, 2, 3, 4, 5, 6]),
        K: dense([3, 2], [1, 0, 0, 1, 1, 1]),
      },
    );
  });
  it('sparse map', () => {
    check(`kernel k(A: csr<f64>[m, n]) -> (E: csr<f64>[m, n]) { E[i, j] = exp(A[i, j]); }`, { A: csr(3, 3, P) });
  });
  it('a sparse temporary feeds a row reduction (aligned reads)', () => {
    check(
      `kernel k(A: csr<f64>[m, n]) -> (s: dense<f64>[m]) { E[i, j] = A[i, j] * A[i, j] + 1.0; s[i] = sum(j: E[i, j]); }`,
      { A: csr(3, 3, P) },
    );
  });
  it('densify, and densify transposed', () => {
    check(`kernel k(A: csr<f64>[m, n]) -> (D: dense<f64>[m, n]) { D[i, j] = A[i, j] + 1.0; }`, { A: csr(3, 3, P) });
    check(`kernel k(A: csr<f64>[m, n]) -> (T: dense<f64>[n, m]) { T[j, i] = A[i, j]; }`, {
      A: csr(2, 3, [
        [0, 1, 7],
        [1, 2, 9],
      ]),
    });
  });
  it('column sums inside a sparse result: CSR iteration plus a CSC-driven reduction', () => {
    check(`kernel k(A: csr<f64>[n, n]) -> (S: csr<f64>[n, n]) { S[i, j] = A[i, j] * sum(k: A[k, j]); }`, {
      A: csr(3, 3, P),
    });
  });
  it('nested driven reductions', () => {
    const X = dense([3, 2], [1, 2, 3, 4, 5, 6]);
    check(
      `kernel k(A: csr<f64>[n, n], X: dense<f64>[n, c]) -> (z: dense<f64>[n]) { z[i] = max(j: sum(k: A[i, j] * X[j, k])); }`,
      { A: csr(3, 3, P), X },
    );
    check(
      `kernel k(A: csr<f64>[n, n], x: dense<f64>[n]) -> (y: dense<f64>[n]) { y[i] = A[i, j] * (A[j, k] * x[k]); }`,
      { A: csr(3, 3, P), x: vec([10, 20, 30]) },
    );
    check(
      `kernel k(A: csr<f64>[n, n], x: dense<f64>[n]) -> (y: dense<f64>[n]) { y[i] = min(j: A[i, j] + min(k: A[j, k] + x[k])); }`,
      { A: csr(3, 3, P), x: vec([10, 20, 30]) },
    );
  });
});

describe('loops equal the interpreter: transposes and storage formats', () => {
  it('transposed spmv and min-plus run down columns (CSC buffers)', () => {
    check(`kernel k(A: csr<f64>[m, n], x: dense<f64>[m]) -> (y: dense<f64>[n]) { y[j] = A[i, j] * x[i]; }`, {
      A: csr(3, 4, R),
      x: vec([1, 10, 100]),
    });
    check(`kernel k(A: csr<f64>[m, n], x: dense<f64>[m]) -> (y: dense<f64>[n]) { y[j] = min(i: A[i, j] + x[i]); }`, {
      A: csr(3, 4, R),
      x: vec([1, 10, 100]),
    });
  });
  const fmt = (
    f: string,
  ): string => `kernel k(A: ${f}<f64>[m, n], x: dense<f64>[n], z: dense<f64>[m], B: dense<f64>[n, c]) -> (y: dense<f64>[m], t: dense<f64>[n], mp: dense<f64>[m], Y: dense<f64>[m, c], E: ${f}<f64>[m, n], s: f64, D: dense<f64>[m, n]) {
    y[i] = A[i, j] * x[j];
    t[j] = A[i, j] * z[i];
    mp[i] = min(j: A[i, j] + x[j]);
    Y[i, q] = A[i, j] * B[j, q];
    E[i, j] = A[i, j] * x[j] - z[i];
    s = sum(i, j: A[i, j]);
    D[i, j] = A[i, j] * 2.0;
  }`;
  for (const [f, make] of [
    ['csr', csr],
    ['csc', csc],
    ['coo', coo],
  ] as const) {
    it(`${f} inputs`, () => {
      check(fmt(f), {
        A: make(3, 4, R),
        x: vec([1, 2, 3, 4]),
        z: vec([1, 10, 100]),
        B: dense([4, 2], [1, -1, 2, -2, 3, -3, 4, -4]),
      });
    });
  }
});

describe('loops equal the interpreter: scalar expressions and repeat', () => {
  it('ternary, comparisons, logic, functions', () => {
    check(
      `kernel k(x: dense<f64>[n]) -> (y: dense<f64>[n], c: dense<bool>[n], r: dense<f64>[n], p: dense<f64>[n], g: dense<f64>[n]) {
        y[i] = (x[i] > 0.0 && x[i] < 10.0) || x[i] == -1.0 ? x[i] * 2.0 : -x[i];
        c[i] = !(x[i] <= 0.0) && (x[i] != 5.0 || x[i] >= 100.0);
        r[i] = relu(x[i]) + abs(x[i]) + min(x[i], 1.0) + max(x[i], 1.0);
        p[i] = pow(abs(x[i]), 2.0) + sqrt(abs(x[i])) + log(abs(x[i]) + 1.0);
        g[i] = sigmoid(x[i]) + tanh(x[i]) + exp(x[i]);
      }`,
      { x: vec([-1, 0, 3, 5, 10, 200, -7, 0.5]) },
    );
  });
  it('integer division truncates, dims as values', () => {
    const o = check(
      `kernel k(a: dense<i32>[n], b: dense<i32>[n]) -> (q: dense<i32>[n], h: dense<i32>[n]) { q[i] = a[i] / b[i]; h[i] = a[i] / 2 + n / 2; }`,
      {
        a: vec([7, -7, 7, -7, 1, 3]),
        b: vec([2, 2, -2, -2, 3, 0]),
      },
    );
    expect(denseData(o.get('q'))).toEqual([3, -3, -3, 3, 0, 0]);
    check(
      `kernel k(x: dense<f64>[n], d: f64) -> (y: dense<f64>[n]) { y[i] = (1 - d) / n + x[i] + n / 2; }`,
      { x: vec([0, 1, 2, 3]) },
      { d: 0.5 },
    );
  });
  it('integers wrap in their width: products, sums, negation, abs, MIN / -1, empty min/max', () => {
    const MIN = -(2 ** 31);
    const o = check(
      `kernel k(A: csr<i32>[m, n], a: dense<i32>[n], b: dense<i32>[n]) -> (p: dense<i32>[n], q: dense<i32>[n], r: dense<i32>[m], lo: dense<i32>[m], hi: dense<i32>[m]) {
        p[i] = a[i] * b[i] + 2147483647;
        q[i] = -a[i] / -1 + abs(a[i]);
        r[i] = A[i, j] * a[j];
        lo[i] = min(j: A[i, j]) + 1;
        hi[i] = max(j: A[i, j]) - 1;
      }`,
      { A: csr(3, 3, A3), a: vec([MIN, 65536, -3]), b: vec([-1, 65536, 7]) },
    );
    // MIN * -1 is MIN, plus MAX is -1; 65536^2 wraps to 0.
    expect(denseData(o.get('p'))).toEqual([-1, 2147483647, 2147483647 - 21]);
    expect(denseData(o.get('q'))).toEqual([0, 131072, 0]);
    expect(denseData(o.get('lo'))[1]).toBe(MIN);
    expect(denseData(o.get('hi'))[1]).toBe(2147483647);
    const o64 = check(
      `kernel k(a: dense<i64>[n], b: dense<i64>[n]) -> (p: dense<i64>[n], q: dense<i64>[n]) { p[i] = a[i] * b[i]; q[i] = a[i] * b[i] / 3 - a[i]; }`,
      { a: vec([2 ** 53 - 1, 2 ** 32, -(2 ** 40)]), b: vec([2 ** 53 - 1, 2 ** 32, 2 ** 23]) },
    );
    // (2^53 - 1)^2 mod 2^64 = 1 - 2^54; 2^64 wraps to 0; -2^63 is the most negative i64.
    expect(denseData(o64.get('p'))).toEqual([1 - 2 ** 54, 0, -(2 ** 63)]);
  });
  it('scalar results from a reduction and from scalars', () => {
    check(
      `kernel k(x: dense<f64>[n], w: f64) -> (s: f64, t: f64) { s = sum(i: x[i]); t = s * w + n; }`,
      { x: vec([1, 2, 3.5]) },
      { w: 2 },
    );
  });
  it('repeat with a parameter count: Jacobi steps read the previous iterate', () => {
    const S = csr(5, 5, [
      [1, 0, 1],
      [2, 1, 1],
      [3, 2, 1],
      [4, 3, 1],
    ]);
    const src = `kernel k(S: csr<f64>[n, n], x0: dense<f64>[n], t: i32) -> (x: dense<f64>[n]) { x[i] = x0[i]; repeat t { x[i] = x[i] + S[i, j] * x[j]; } }`;
    for (const t of [0, 1, 4]) check(src, { S, x0: vec([1, 0, 0, 0, 0]) }, { t });
  });
  it('a sparse value reassigned in a repeat keeps its pattern', () => {
    const src = `kernel k(A: csr<f64>[n, n]) -> (E: csr<f64>[n, n]) { E[i, j] = A[i, j]; repeat 3 { E[i, j] = E[i, j] * 0.5 + A[i, j]; } }`;
    check(src, { A: csr(3, 3, P) });
  });
});

describe('lowering errors', () => {
  it('an op the lowering cannot express throws a LowerError naming kernel and op', () => {
    // No checked program reaches these paths (analyzeSparsity rejects them first); facts are forged here.
    const k = kernelOf(`kernel k(A: csr<f64>[m, n]) -> (E: csr<f64>[m, n]) { E[i, j] = A[i, j] * 2.0; }`);
    const info = kernelFacts(k).ops.get('op0')!;
    const forged = { ...info, sparsity: { ...info.sparsity, patternSource: undefined } };
    expect(() => lowerOpLoops(k.name, forged)).toThrow(LowerError);
    expect(() => lowerOpLoops(k.name, forged)).toThrow(
      /kernel k, op op0 \(%E\): a sparse result without a pattern source/,
    );
  });
});
