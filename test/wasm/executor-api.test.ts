/**
 * The wasm executor's reuse API: inputs updated in place (`updateInput`,
 * dense, sparse values, scalars) and rerun with `execute()` give bit for bit
 * what a fresh executor computes from the new inputs, at 1 and 2 threads;
 * `resultView` is a view of wasm memory (no copy) holding what `results()`
 * copies out; a rerun with the same tensor objects in new maps reuses the
 * copies in memory (inputs are treated as immutable); misuse is refused.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { emitWasm } from '../../codegen/wasm/emit.js';
import { Rng } from '../../runtime/random.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import { createWasmExecutor } from '../../runtime/wasm/executor.js';
import { expectIdentical, loopKernel } from './compare.js';

const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));
const example = (name: string) => loopKernel(readFileSync(`${EXAMPLES_DIR}${name}.dy`, 'utf8'), `${name}.dy`);

function rand(n: number, seed: number): Float64Array {
  const rng = new Rng(seed);
  return Float64Array.from({ length: n }, () => rng.uniform(-1, 1));
}

/** A banded n x n CSR matrix, ~4 entries per row, values from seed. */
function band(n: number, seed: number): CsrMatrix {
  const rowPtr = new Int32Array(n + 1);
  const colIdx: number[] = [];
  for (let r = 0; r < n; r++) {
    for (const c of [r - 3, r, r + 1, r + 5]) if (c >= 0 && c < n) colIdx.push(c);
    rowPtr[r + 1] = colIdx.length;
  }
  return {
    format: 'csr',
    rows: n,
    cols: n,
    rowPtr,
    colIdx: Int32Array.from(colIdx),
    values: rand(colIdx.length, seed),
  };
}

const dense = (shape: number[], data: Float64Array): DenseTensor => ({ format: 'dense', shape, data });

async function compiled(name: string) {
  return emitWasm(example(name));
}

async function fresh(
  name: string,
  tensors: Record<string, Tensor>,
  scalars: Record<string, number> = {},
): Promise<Map<string, Tensor>> {
  const { binary, manifest } = await compiled(name);
  const ex = await createWasmExecutor(binary, manifest);
  return ex.run({ tensors: new Map(Object.entries(tensors)), scalars: new Map(Object.entries(scalars)) }).outputs;
}

describe('wasm executor: inputs updated in place', () => {
  for (const threads of [1, 2]) {
    it(`spmm: dense and sparse-value updates, then execute() (${threads} thread(s))`, async () => {
      const n = 700;
      const A = band(n, 1);
      const B = dense([n, 6], rand(n * 6, 2));
      const { binary, manifest } = await compiled('spmm');
      const ex = await createWasmExecutor(binary, manifest, { threads });
      try {
        ex.execute({
          tensors: new Map<string, Tensor>([
            ['A', A],
            ['B', B],
          ]),
          scalars: new Map(),
        });
        const B2 = rand(n * 6, 3);
        ex.updateInput('B', B2);
        ex.execute();
        expectIdentical(
          ex.results().outputs.get('Y')!,
          (await fresh('spmm', { A, B: dense([n, 6], B2) })).get('Y')!,
          'after B update',
        );
        const v2 = rand(A.values.length, 4);
        ex.updateInput('A', v2);
        ex.execute();
        expectIdentical(
          ex.results().outputs.get('Y')!,
          (await fresh('spmm', { A: { ...A, values: v2 }, B: dense([n, 6], B2) })).get('Y')!,
          'after A update',
        );
      } finally {
        ex.close();
      }
    });
  }
  it('pagerank: a scalar update (d) and the repeat rerun', async () => {
    const n = 300;
    const A = band(n, 5);
    const r0 = dense([n], new Float64Array(n).fill(1 / n));
    const { binary, manifest } = await compiled('pagerank');
    const ex = await createWasmExecutor(binary, manifest);
    ex.execute({
      tensors: new Map<string, Tensor>([
        ['A', A],
        ['r0', r0],
      ]),
      scalars: new Map([['d', 0.85]]),
    });
    ex.updateInput('d', 0.5);
    ex.execute();
    expectIdentical(
      ex.results().outputs.get('r')!,
      (await fresh('pagerank', { A, r0 }, { d: 0.5 })).get('r')!,
      'd = 0.5',
    );
    // Twice in a row: the same bits (the repeat starts again from r0).
    ex.execute();
    expectIdentical(
      ex.results().outputs.get('r')!,
      (await fresh('pagerank', { A, r0 }, { d: 0.5 })).get('r')!,
      'd = 0.5, again',
    );
  });
  it('refuses updates before execute, of unknown names, of wrong lengths or kinds', async () => {
    const { binary, manifest } = await compiled('spmm');
    const ex = await createWasmExecutor(binary, manifest);
    expect(() => ex.updateInput('B', [1])).toThrow(/before any execute/);
    expect(() => ex.execute()).toThrow(/before any execute/);
    const A = band(10, 1);
    ex.execute({
      tensors: new Map<string, Tensor>([
        ['A', A],
        ['B', dense([10, 2], rand(20, 1))],
      ]),
      scalars: new Map(),
    });
    expect(() => ex.updateInput('Z', [1])).toThrow(/no parameter 'Z'/);
    expect(() => ex.updateInput('B', [1, 2, 3])).toThrow(/holds 20 values, got 3/);
    expect(() => ex.updateInput('A', [1])).toThrow(/stored entries/);
    expect(() => ex.updateInput('B', 3)).toThrow(/expects its values/);
  });
});

describe('wasm executor: results left in memory', () => {
  it('resultView is a view of wasm memory holding what results() copies', async () => {
    const n = 50;
    const A = band(n, 2);
    const x = dense([n], rand(n, 7));
    const { binary, manifest } = await compiled('spmv');
    const ex = await createWasmExecutor(binary, manifest);
    ex.execute({
      tensors: new Map<string, Tensor>([
        ['A', A],
        ['x', x],
      ]),
      scalars: new Map(),
    });
    const v = ex.resultView('y');
    expect(v).toBeInstanceOf(Float32Array);
    expect(v.buffer).toBe(ex.memory.buffer);
    expect(Array.from(v as Float32Array)).toEqual(Array.from((ex.results().outputs.get('y') as DenseTensor).data));
    expect(() => ex.resultView('nope')).toThrow(/no result 'nope'/);
  });
  it('a rerun with the same tensor objects in new maps reuses the copies in memory; a new object is copied', async () => {
    const n = 40;
    const A = band(n, 3);
    const data = rand(n, 8);
    const x = dense([n], data);
    const { binary, manifest } = await compiled('spmv');
    const ex = await createWasmExecutor(binary, manifest);
    ex.execute({
      tensors: new Map<string, Tensor>([
        ['A', A],
        ['x', x],
      ]),
      scalars: new Map(),
    });
    const first = Float32Array.from(ex.resultView('y') as Float32Array);
    data.fill(0); // inputs are treated as immutable: memory keeps the copy made above
    ex.execute({
      tensors: new Map<string, Tensor>([
        ['A', A],
        ['x', x],
      ]),
      scalars: new Map(),
    });
    expect(Array.from(ex.resultView('y') as Float32Array)).toEqual(Array.from(first));
    ex.execute({
      tensors: new Map<string, Tensor>([
        ['A', A],
        ['x', dense([n], data)],
      ]),
      scalars: new Map(),
    });
    expect(Array.from(ex.resultView('y') as Float32Array).every((y) => y === 0)).toBe(true);
  });
});

describe('wasm executor: dims bound anew on every run', () => {
  const dense = (shape: number[], data: number[]): DenseTensor => ({
    format: 'dense',
    shape,
    data: Float64Array.from(data),
  });
  const run = (exec: Awaited<ReturnType<typeof createWasmExecutor>>, tensors: Record<string, Tensor>) =>
    exec.run({ tensors: new Map(Object.entries(tensors)), scalars: new Map() }).outputs;

  it('a dim used only as a value follows its input from run to run (it kept the first run\u2019s)', async () => {
    const k = loopKernel('kernel k(x: dense<f64>[n], y: dense<f64>[p]) -> (z: dense<f64>[p]) { z[i] = y[i] + n; }');
    const { binary, manifest } = await emitWasm(k);
    const exec = await createWasmExecutor(binary, manifest);
    for (const n of [5, 4, 7]) {
      const z = run(exec, { x: dense([n], new Array<number>(n).fill(0)), y: dense([2], [0, 1]) }).get('z')!;
      expect(Array.from((z as DenseTensor).data), `n = ${n}`).toEqual([n, n + 1]);
    }
    exec.close();
  });

  it('a matrix reshaped with the same number of elements is read with its new strides', async () => {
    const k = loopKernel('kernel k(X: dense<f64>[m, n]) -> (Y: dense<f64>[n, m]) { Y[i, k] = X[k, i]; }');
    const { binary, manifest } = await emitWasm(k);
    const exec = await createWasmExecutor(binary, manifest);
    const values = Array.from({ length: 15 }, (_, i) => i);
    for (const [m, n] of [
      [3, 5],
      [5, 3],
    ] as const) {
      const Y = run(exec, { X: dense([m, n], values) }).get('Y') as DenseTensor;
      const want = Array.from({ length: 15 }, (_, q) => values[(q % m) * n + Math.floor(q / m)]!);
      expect(Y.shape, `${m} x ${n}`).toEqual([n, m]);
      expect(Array.from(Y.data), `${m} x ${n}`).toEqual(want);
    }
    exec.close();
  });
});

describe('wasm executor: values an integer or bool store would truncate or wrap', () => {
  it('are refused (DY3042 naming the input, the element and why), as the reference and the command line refuse them', async () => {
    const k = loopKernel(
      `kernel idt(A: csr<i32>[n, n], m: dense<i32>[n], b: dense<bool>[n], w: dense<i64>[n]) -> (y: dense<i32>[n], z: dense<i64>[n]) {
  y[i] = A[i, j] * m[j];
  z[i] = b[i] ? w[i] : w[i] + 1;
}
`,
      'idt.dy',
    );
    const { binary, manifest } = await emitWasm(k);
    const A: CsrMatrix = {
      format: 'csr',
      rows: 2,
      cols: 2,
      rowPtr: Int32Array.from([0, 1, 2]),
      colIdx: Int32Array.from([0, 1]),
      values: Float64Array.from([1, 2]),
    };
    const run = async (over: Record<string, Tensor>): Promise<string> => {
      const ex = await createWasmExecutor(binary, manifest);
      const tensors = new Map<string, Tensor>(
        Object.entries({
          A,
          m: dense([2], Float64Array.from([3, 4])),
          b: dense([2], Float64Array.from([0, 1])),
          w: dense([2], Float64Array.from([5, 6])),
          ...over,
        }),
      );
      try {
        const out = ex.run({ tensors, scalars: new Map() }).outputs;
        return `ok ${Array.from((out.get('y') as DenseTensor).data).join(',')}`;
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(await run({})).toBe('ok 3,8');
    expect(await run({ m: dense([2], Float64Array.from([3, 1.5])) })).toMatch(
      /input m: error DY3042: 'm' is i32, but its element 1 is 1.5: not a whole number/,
    );
    expect(await run({ m: dense([2], Float64Array.from([3e9, 1])) })).toMatch(
      /element 0 is 3000000000: outside i32's range/,
    );
    expect(await run({ m: dense([2], Float64Array.from([NaN, 1])) })).toMatch(/element 0 is NaN: not a whole number/);
    expect(await run({ A: { ...A, values: Float64Array.from([1, 2.5]) } })).toMatch(
      /'A' is i32, but its element 1 is 2.5/,
    );
    expect(await run({ b: dense([2], Float64Array.from([0, 2])) })).toMatch(
      /'b' is bool, but its element 1 is 2: not 0 or 1/,
    );
    // i64 past what a float64 holds exactly (it was truncated; NaN threw a RangeError from BigInt).
    expect(await run({ w: dense([2], Float64Array.from([2 ** 60, 1])) })).toMatch(/'w' is i64, but its element 0 is/);
    expect(await run({ w: dense([2], Float64Array.from([NaN, 1])) })).toMatch(/'w' is i64, but its element 0 is NaN/);
  });
});
