/**
 * Known-answer programs (as test/loops/known-answer.test.ts) compiled to wasm:
 * outputs equal the reference interpreter's within the stated tolerance
 * (test/wasm/compare.ts), two runs bit-identical, every module valid. Covers
 * empty rows and identities, transposed (CSC-driven) reductions, sparse maps
 * and SDDMM, densify, integer division, any/all, scalars, nested driven
 * reductions, storage formats, repeat loops, f32 and f64, n = 0 and 1 x 1.
 */
import { describe, expect, it } from 'vitest';
import type { Tensor } from '../../runtime/tensor.js';
import { coo, csc, csr, dense, denseData, vec, A3, P, R, x3 } from '../helpers/interp-run.js';
import { compileWasm, expectWasmMatches, loopKernel, type Compiled } from './compare.js';
import { emitWasm } from '../../codegen/wasm/emit.js';

const check = async (
  src: string,
  tensors: Record<string, Tensor>,
  scalars: Record<string, number> = {},
): Promise<Map<string, Tensor>> => {
  const c = await compileWasm(loopKernel(src));
  expect(WebAssembly.validate(c.binary as Uint8Array<ArrayBuffer>)).toBe(true);
  return expectWasmMatches(c, { tensors, scalars });
};

describe('wasm: sparse reductions and identities', () => {
  for (const t of ['f32', 'f64']) {
    it(`spmv with an empty row (${t})`, async () => {
      const y = await check(
        `kernel k(A: csr<${t}>[m, n], x: dense<${t}>[n]) -> (y: dense<${t}>[m]) { y[i] = A[i, j] * x[j]; }`,
        { A: csr(3, 3, A3), x: x3 },
      );
      expect(denseData(y.get('y'))).toEqual([7, 0, 18]);
    });
    it(`min-plus with an empty row gives +inf (${t})`, async () => {
      const y = await check(
        `kernel k(A: csr<${t}>[m, n], x: dense<${t}>[n]) -> (y: dense<${t}>[m]) { y[i] = min(j: A[i, j] + x[j]); }`,
        { A: csr(3, 3, A3), x: x3 },
      );
      expect(denseData(y.get('y'))).toEqual([2, Infinity, 5]);
    });
  }
  it('max over stored entries only (-inf on an empty row)', async () => {
    await check(
      `kernel k(A: csr<f64>[m, n], x: dense<f64>[n]) -> (y: dense<f64>[m]) { y[i] = max(j: A[i, j] * x[j]); }`,
      { A: csr(3, 3, A3), x: x3 },
    );
  });
  it('dense max/min over either index', async () => {
    await check(
      `kernel k(X: dense<f64>[m, n]) -> (hi: dense<f64>[m], lo: dense<f64>[n]) { hi[i] = max(j: X[i, j]); lo[j] = min(i: X[i, j]); }`,
      {
        X: dense([2, 3], [3, -1, 7, 0, 5, -2]),
      },
    );
  });
  it('any/all over sparse and dense bools, scalar results', async () => {
    const src = `kernel k(A: csr<f64>[m, n], x: dense<f64>[n], b: dense<bool>[n]) -> (p: dense<bool>[m], q: dense<bool>[m], u: bool, v: bool) {
      p[i] = any(j: A[i, j] * x[j] > 5.0);
      q[i] = all(j: A[i, j] > 1.5);
      u = any(j: b[j]);
      v = all(j: b[j]);
    }`;
    const o = await check(src, { A: csr(3, 3, A3), x: x3, b: vec([1, 0, 1]) });
    expect(denseData(o.get('q'))).toEqual([0, 1, 1]);
    expect(denseData(o.get('p'))).toEqual([1, 0, 1]);
  });
  it('integer min/max: an empty row holds the type extreme, as in the reference', async () => {
    const o = await check(
      `kernel k(A: csr<i32>[m, n], x: dense<i32>[n]) -> (lo: dense<i32>[m], hi: dense<i32>[m]) { lo[i] = min(j: A[i, j] + x[j]); hi[i] = max(j: A[i, j] + x[j]); }`,
      { A: csr(3, 3, A3), x: x3 },
    );
    expect(denseData(o.get('lo'))).toEqual([2, 2147483647, 5]);
    expect(denseData(o.get('hi'))).toEqual([5, -2147483648, 7]);
  });
});

describe('wasm: sparse results and densify', () => {
  it('SDDMM keeps the pattern, explicit zero included (f64, f32)', async () => {
    for (const t of ['f64', 'f32'])
      await check(
        `kernel k(A: csr<${t}>[n, n], Q: dense<${t}>[n, d], K: dense<${t}>[n, d]) -> (S: csr<${t}>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }`,
        {
          A: csr(3, 3, P),
          Q: dense([3, 2], [1, 2, 3, 4, 5, 6]),
          K: dense([3, 2], [1, 0, 0, 1, 1, 1]),
        },
      );
  });
  it('sparse map', async () => {
    await check(`kernel k(A: csr<f64>[m, n]) -> (E: csr<f64>[m, n]) { E[i, j] = exp(A[i, j]); }`, { A: csr(3, 3, P) });
    await check(
      `kernel k(A: csc<f32>[m, n]) -> (E: csc<f32>[m, n], F: coo<f32>[m, n]) { E[i, j] = sigmoid(A[i, j]); F[i, j] = tanh(A[i, j]) * 2.0; }`,
      { A: csc(3, 3, P) },
    );
  });
  it('a sparse temporary feeds a row reduction (aligned reads)', async () => {
    await check(
      `kernel k(A: csr<f64>[m, n]) -> (s: dense<f64>[m]) { E[i, j] = A[i, j] * A[i, j] + 1.0; s[i] = sum(j: E[i, j]); }`,
      { A: csr(3, 3, P) },
    );
  });
  it('densify, and densify transposed', async () => {
    await check(`kernel k(A: csr<f64>[m, n]) -> (D: dense<f64>[m, n]) { D[i, j] = A[i, j] + 1.0; }`, {
      A: csr(3, 3, P),
    });
    await check(`kernel k(A: csr<f64>[m, n]) -> (T: dense<f64>[n, m]) { T[j, i] = A[i, j]; }`, {
      A: csr(2, 3, [
        [0, 1, 7],
        [1, 2, 9],
      ]),
    });
  });
  it('column sums inside a sparse result: CSR iteration plus a CSC-driven reduction', async () => {
    await check(`kernel k(A: csr<f64>[n, n]) -> (S: csr<f64>[n, n]) { S[i, j] = A[i, j] * sum(k: A[k, j]); }`, {
      A: csr(3, 3, P),
    });
  });
  it('a sparse result computed in CSR, then read down columns (values permuted)', async () => {
    await check(
      `kernel k(A: csr<f64>[m, n], z: dense<f64>[m]) -> (t: dense<f64>[n], E: csc<f64>[m, n]) { E[i, j] = A[i, j] * 3.0; t[j] = E[i, j] * z[i]; }`,
      {
        A: csr(3, 4, R),
        z: vec([1, 10, 100]),
      },
    );
  });
  it('nested driven reductions', async () => {
    const X = dense([3, 2], [1, 2, 3, 4, 5, 6]);
    await check(
      `kernel k(A: csr<f64>[n, n], X: dense<f64>[n, c]) -> (z: dense<f64>[n]) { z[i] = max(j: sum(k: A[i, j] * X[j, k])); }`,
      { A: csr(3, 3, P), X },
    );
    await check(
      `kernel k(A: csr<f64>[n, n], x: dense<f64>[n]) -> (y: dense<f64>[n]) { y[i] = A[i, j] * (A[j, k] * x[k]); }`,
      { A: csr(3, 3, P), x: vec([10, 20, 30]) },
    );
    await check(
      `kernel k(A: csr<f64>[n, n], x: dense<f64>[n]) -> (y: dense<f64>[n]) { y[i] = min(j: A[i, j] + min(k: A[j, k] + x[k])); }`,
      { A: csr(3, 3, P), x: vec([10, 20, 30]) },
    );
  });
});

describe('wasm: transposes and storage formats', () => {
  it('transposed spmv and min-plus run down columns (CSC buffers)', async () => {
    await check(`kernel k(A: csr<f64>[m, n], x: dense<f64>[m]) -> (y: dense<f64>[n]) { y[j] = A[i, j] * x[i]; }`, {
      A: csr(3, 4, R),
      x: vec([1, 10, 100]),
    });
    await check(
      `kernel k(A: csr<f32>[m, n], x: dense<f32>[m]) -> (y: dense<f32>[n]) { y[j] = min(i: A[i, j] + x[i]); }`,
      { A: csr(3, 4, R), x: vec([1, 10, 100]) },
    );
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
    it(`${f} inputs`, async () => {
      await check(fmt(f), {
        A: make(3, 4, R),
        x: vec([1, 2, 3, 4]),
        z: vec([1, 10, 100]),
        B: dense([4, 2], [1, -1, 2, -2, 3, -3, 4, -4]),
      });
    });
  }
});

describe('wasm: scalar expressions and repeat', () => {
  it('ternary, comparisons, logic, functions (f64 and f32)', async () => {
    for (const t of ['f64', 'f32'])
      await check(
        `kernel k(x: dense<${t}>[n]) -> (y: dense<${t}>[n], c: dense<bool>[n], r: dense<${t}>[n], p: dense<${t}>[n], g: dense<${t}>[n]) {
          y[i] = (x[i] > 0.0 && x[i] < 10.0) || x[i] == -1.0 ? x[i] * 2.0 : -x[i];
          c[i] = !(x[i] <= 0.0) && (x[i] != 5.0 || x[i] >= 100.0);
          r[i] = relu(x[i]) + abs(x[i]) + min(x[i], 1.0) + max(x[i], 1.0);
          p[i] = pow(abs(x[i]), 2.0) + sqrt(abs(x[i])) + log(abs(x[i]) + 1.0);
          g[i] = sigmoid(x[i]) + tanh(x[i]) + exp(x[i]);
        }`,
        // exp(200) overflows f32 (the f64 reference does not): f32 gets inputs within its range.
        { x: vec([-1, 0, 3, 5, 10, t === 'f64' ? 200 : 60, -7, 0.5, NaN, -Infinity]) },
      );
  });
  it('integer division truncates, zero divisor gives 0, dims as values', async () => {
    const o = await check(
      `kernel k(a: dense<i32>[n], b: dense<i32>[n]) -> (q: dense<i32>[n], h: dense<i32>[n]) { q[i] = a[i] / b[i]; h[i] = a[i] / 2 + n / 2; }`,
      {
        a: vec([7, -7, 7, -7, 1, 3]),
        b: vec([2, 2, -2, -2, 3, 0]),
      },
    );
    expect(denseData(o.get('q'))).toEqual([3, -3, -3, 3, 0, 0]);
    const o64 = await check(
      `kernel k(a: dense<i64>[n], b: dense<i64>[n]) -> (q: dense<i64>[n], r: dense<i64>[n]) { q[i] = a[i] / b[i]; r[i] = abs(a[i]) + relu(a[i]) + max(a[i], b[i]); }`,
      {
        a: vec([7, -7, 7, -7, 1, 3]),
        b: vec([2, 2, -2, -2, 3, 0]),
      },
    );
    expect(denseData(o64.get('q'))).toEqual([3, -3, -3, 3, 0, 0]);
    await check(
      `kernel k(x: dense<f64>[n], d: f64) -> (y: dense<f64>[n]) { y[i] = (1 - d) / n + x[i] + n / 2; }`,
      { x: vec([0, 1, 2, 3]) },
      { d: 0.5 },
    );
  });
  it('scalar results from a reduction and from scalars', async () => {
    await check(
      `kernel k(x: dense<f64>[n], w: f64) -> (s: f64, t: f64) { s = sum(i: x[i]); t = s * w + n; }`,
      { x: vec([1, 2, 3.5]) },
      { w: 2 },
    );
  });
  it('repeat with a parameter count: Jacobi steps read the previous iterate; count 0 leaves the first value', async () => {
    const S = csr(5, 5, [
      [1, 0, 1],
      [2, 1, 1],
      [3, 2, 1],
      [4, 3, 1],
    ]);
    const c = await compileWasm(
      loopKernel(
        `kernel k(S: csr<f64>[n, n], x0: dense<f64>[n], t: i32) -> (x: dense<f64>[n]) { x[i] = x0[i]; repeat t { x[i] = x[i] + S[i, j] * x[j]; } }`,
      ),
    );
    for (const t of [0, 1, 4, 3])
      expectWasmMatches(c, { tensors: { S, x0: vec([1, 0, 0, 0, 0]) }, scalars: { t } }, `t=${t}`);
  });
  it('a value assigned only inside a zero-trip repeat is an error, as in the interpreter', async () => {
    const c = await compileWasm(
      loopKernel(`kernel k(x0: dense<f64>[n], t: i32) -> (x: dense<f64>[n]) { repeat t { x[i] = x0[i] * 2.0; } }`),
    );
    expect(() => c.exec.run({ tensors: new Map([['x0', vec([1, 2])]]), scalars: new Map([['t', 0]]) })).toThrow(
      /never computed/,
    );
    expect(
      denseData(c.exec.run({ tensors: new Map([['x0', vec([1, 2])]]), scalars: new Map([['t', 2]]) }).outputs.get('x')),
    ).toEqual([2, 4]);
  });
  it('a sparse value reassigned in a repeat keeps its pattern', async () => {
    await check(
      `kernel k(A: csr<f64>[n, n]) -> (E: csr<f64>[n, n]) { E[i, j] = A[i, j]; repeat 3 { E[i, j] = E[i, j] * 0.5 + A[i, j]; } }`,
      { A: csr(3, 3, P) },
    );
  });
});

describe('wasm: edge cases', () => {
  const spmv = `kernel k(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m], E: csr<f32>[m, n], s: f32) { y[i] = A[i, j] * x[j]; E[i, j] = A[i, j] * 2.0; s = sum(i, j: A[i, j]); }`;
  let c: Compiled;
  it('n = 0, 1 x 1, empty matrix, then larger: buffers re-laid out and reused', async () => {
    c = await compileWasm(loopKernel(spmv));
    expectWasmMatches(c, { tensors: { A: csr(0, 0, []), x: vec([]) } }, '0x0');
    expectWasmMatches(c, { tensors: { A: csr(1, 1, [[0, 0, 3]]), x: vec([2]) } }, '1x1');
    expectWasmMatches(c, { tensors: { A: csr(4, 3, []), x: vec([1, 2, 3]) } }, 'no entries');
    expectWasmMatches(c, { tensors: { A: csr(3, 4, R), x: vec([1, 2, 3, 4]) } }, '3x4');
    expectWasmMatches(c, { tensors: { A: csr(1, 1, [[0, 0, 3]]), x: vec([2]) } }, '1x1 again');
  });
  it('the same input objects twice: inputs are not re-copied, results identical', async () => {
    const tensors = new Map<string, Tensor>([
      ['A', csr(3, 4, R)],
      ['x', vec([1, 2, 3, 4])],
    ]);
    const scalars = new Map<string, number>();
    const a = c.exec.run({ tensors, scalars }).outputs;
    const b = c.exec.run({ tensors, scalars }).outputs;
    expect(denseData(b.get('y'))).toEqual(denseData(a.get('y')));
    expect(denseData(a.get('y'))).toEqual([7, 0, 10]);
  });
  it('manifest: JSON round trip, ops and program order with repeat regions', async () => {
    const k = loopKernel(
      `kernel k(S: csr<f64>[n, n], x0: dense<f64>[n], t: i32) -> (x: dense<f64>[n]) { x[i] = x0[i]; repeat t { x[i] = x[i] + S[i, j] * x[j]; } }`,
    );
    const { manifest } = await emitWasm(k);
    expect(JSON.parse(JSON.stringify(manifest))).toEqual(manifest);
    expect(manifest.program).toEqual([
      { kind: 'op', op: 'op0' },
      { kind: 'repeat', id: 'op1', count: { param: 't' }, body: [{ kind: 'op', op: 'op2' }] },
    ]);
    expect(manifest.ops.map((o) => [o.export, o.out, o.splittable])).toEqual([
      ['k_op0', 'x', true],
      ['k_op2', 'x.next', true],
    ]);
  });
});
