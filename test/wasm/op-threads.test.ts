/**
 * Per-op thread counts (`setOpThreads`, what `dype run` sets from the CPU
 * model's pick, runtime/catalogue/cpu.ts cpuThreadsFor): the wasm pool runs
 * each op on its own count with the results of one thread, bit for bit; a
 * library that splits ops itself (the native CPU library's worker threads) is
 * told each op's count before the op (its setter skips a repeat: the count
 * is the library's, shared by executors over the same file, which
 * test/native/cpu.test.ts checks); misuse is refused.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { emitWasm, wasmManifest } from '../../codegen/wasm/emit.js';
import { Rng } from '../../runtime/random.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import { createWasmExecutor, executorOver } from '../../runtime/wasm/executor.js';
import { expectIdentical, loopKernel } from './compare.js';

const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));
const gcn = loopKernel(readFileSync(`${EXAMPLES_DIR}gcn.dy`, 'utf8'), 'gcn.dy');

function rand(n: number, seed: number): Float64Array {
  const rng = new Rng(seed);
  return Float64Array.from({ length: n }, () => rng.uniform(-1, 1));
}

/** A banded n x n CSR matrix, enough rows (>= 256) for the pool to split. */
function band(n: number): CsrMatrix {
  const rowPtr = new Int32Array(n + 1);
  const colIdx: number[] = [];
  for (let r = 0; r < n; r++) {
    for (const c of [r - 3, r, r + 1, r + 5]) if (c >= 0 && c < n) colIdx.push(c);
    rowPtr[r + 1] = colIdx.length;
  }
  return { format: 'csr', rows: n, cols: n, rowPtr, colIdx: Int32Array.from(colIdx), values: rand(colIdx.length, 3) };
}

const dense = (shape: number[], seed: number): DenseTensor => ({
  format: 'dense',
  shape,
  data: rand(shape[0]! * shape[1]!, seed),
});

function inputs(n: number): { tensors: Map<string, Tensor>; scalars: Map<string, number> } {
  return {
    tensors: new Map<string, Tensor>([
      ['A', band(n)],
      ['X', dense([n, 8], 5)],
      ['W1', dense([8, 8], 6)],
      ['W2', dense([8, 4], 7)],
    ]),
    scalars: new Map(),
  };
}

describe('per-op thread counts', () => {
  it('the wasm pool runs each op on its count, with the one-thread results bit for bit', async () => {
    const { binary, manifest } = await emitWasm(gcn);
    const one = await createWasmExecutor(binary, manifest, { threads: 1 });
    const two = await createWasmExecutor(binary, manifest, { threads: 2 });
    try {
      const want = one.run(inputs(1000)).outputs;
      for (const counts of [
        [['op1', 1]],
        [
          ['op0', 1],
          ['op1', 2],
          ['op2', 1],
          ['op3', 2],
        ],
        [['op3', 9]],
      ] as [string, number][][]) {
        two.setOpThreads(new Map(counts));
        const got = two.run(inputs(1000)).outputs;
        for (const [name, t] of want) expectIdentical(got.get(name)!, t, `Y with ${JSON.stringify(counts)}`);
      }
      // A count above the executor's threads is capped at them.
      expect(two.threads).toBe(2);
    } finally {
      one.close();
      two.close();
    }
  });

  it('the wasm pool counts the ops it splits, their chunks and those its workers ran; it knows no core', async () => {
    const { binary, manifest } = await emitWasm(gcn);
    const one = await createWasmExecutor(binary, manifest, { threads: 1 });
    const two = await createWasmExecutor(binary, manifest, { threads: 2 });
    try {
      expect(one.placement()).toBeUndefined();
      two.run(inputs(1000));
      const a = two.placement()!;
      expect(a.joinsOnCaller).toBeNull();
      expect(a.splitOps).toBeGreaterThan(0);
      expect(a.chunks).toBeGreaterThanOrEqual(2 * a.splitOps);
      expect(a.workerChunks).toBeGreaterThanOrEqual(0);
      expect(a.workerChunks).toBeLessThanOrEqual(a.chunks);
      expect(a.joins).toBeLessThanOrEqual(a.splitOps);
      // Ops on one thread are not split, and count nothing.
      two.setOpThreads(new Map(manifest.ops.map((o) => [o.op, 1])));
      two.run(inputs(1000));
      expect(two.placement()).toEqual(a);
      two.setOpThreads(new Map(manifest.ops.map((o) => [o.op, 2])));
      two.run(inputs(1000));
      expect(two.placement()!.splitOps).toBe(2 * a.splitOps);
    } finally {
      one.close();
      two.close();
    }
  });

  it('a library that splits ops itself is set to each op count before the op', () => {
    const manifest = wasmManifest(gcn, [], true);
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536 });
    let inForce = 4;
    const calls: string[] = [];
    const sets: number[] = [];
    const fns = Object.fromEntries(
      manifest.ops.map((o) => [o.export, () => void calls.push(`${o.op}@${inForce}`)] as const),
    );
    const exec = executorOver(
      manifest,
      {
        fns,
        threads: 4,
        setThreads: (n) => {
          sets.push(n);
          inForce = n;
        },
      },
      { buffer: memory.buffer, grow: (p) => memory.grow(p) },
    );
    exec.execute(inputs(300));
    expect(calls).toEqual(['op0@4', 'op1@4', 'op2@4', 'op3@4']);
    expect(sets).toEqual([4, 4, 4, 4]);
    exec.setOpThreads(
      new Map([
        ['op0', 1],
        ['op1', 1],
        ['op3', 2],
      ]),
    );
    calls.length = 0;
    sets.length = 0;
    exec.execute();
    expect(calls).toEqual(['op0@1', 'op1@1', 'op2@4', 'op3@2']);
    expect(sets).toEqual([1, 1, 4, 2]);
  });

  it('refuses an op the kernel has not and a count below one', async () => {
    const { binary, manifest } = await emitWasm(gcn);
    const exec = await createWasmExecutor(binary, manifest, { threads: 1 });
    try {
      expect(() => exec.setOpThreads(new Map([['op9', 1]]))).toThrow(/names op 'op9', which the kernel has not/);
      expect(() => exec.setOpThreads(new Map([['op0', 0]]))).toThrow(/gives op op0 0 threads/);
      expect(() => exec.setOpThreads(new Map([['op0', 1.5]]))).toThrow(/gives op op0 1.5 threads/);
    } finally {
      exec.close();
    }
  });
});
