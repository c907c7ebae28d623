/**
 * The stage engine on the CPU alone (no native library needed): every
 * example on real matrices, run op by op over the wasm backend's buffers,
 * equals the whole-kernel wasm executor bit for bit; resident parameters are
 * not copied again; the allocator and byte-range bookkeeping it rests on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { KernelEngine, Slot, WasmStageBackend } from '../../runtime/exec/index.js';
import { Heap } from '../../runtime/exec/heap.js';
import { add, missing, within } from '../../runtime/exec/intervals.js';
import { cpuImplOf } from '../../runtime/catalogue/index.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import { createWasmExecutor } from '../../runtime/wasm/executor.js';
import type { Tensor } from '../../runtime/tensor.js';
import { WasmThreadPool } from '../../runtime/wasm/threads.js';
import { exampleInputs } from '../helpers/example-inputs.js';
import { bandedPattern, farPattern } from '../helpers/gather-patterns.js';
import { compileWasm, expectIdentical, loopKernel, toMaps, type Compiled } from '../wasm/compare.js';

const root = join(import.meta.dirname, '..', '..');
const M = join(root, '..', 'shared', 'data', 'matrices');
const sys = loadSystemFile(join(root, 'systems', 'paper-1g1f.json'));

/**
 * Every op of `c` as one CPU stage on a fresh 2-thread wasm backend whose spread threshold is `from`: the
 * outputs, and the functions the thread pool was told to run.
 */
async function stageOnce(
  c: Compiled,
  args: ReturnType<typeof toMaps>,
  from: number,
): Promise<{ got: Map<string, Tensor>; pooled: string[] }> {
  const be = await WasmStageBackend.create(c.binary, c.manifest, { threads: 2, spreadFromBytes: from });
  const engine = new KernelEngine(c.manifest, { cpu: be }, sys);
  const slot = new Slot();
  const run = vi.spyOn(WasmThreadPool.prototype, 'run');
  try {
    engine.begin(slot, engine.prepare(args));
    await engine.runStage(slot, {
      ops: c.manifest.ops.map((o) => o.op),
      kind: 'cpu' as const,
      devices: ['cpu0'],
      impls: Object.fromEntries(c.manifest.ops.map((o) => [o.op, cpuImplOf(o)])),
    });
    const got = await engine.collect(slot);
    engine.end(slot);
    return { got, pooled: run.mock.calls.map((x) => x[0]) };
  } finally {
    run.mockRestore();
    engine.close([slot]);
    be.close();
  }
}

describe.skipIf(!existsSync(M))('the stage engine on the wasm backend', () => {
  for (const ex of ['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp'])
    it(`${ex}: op by op equals the whole-kernel executor bit for bit, at 1 and 3 threads (ops on 2 and 1 of them); parameters stay resident`, async () => {
      const c = await compileWasm(loopKernel(readFileSync(join(root, 'examples', `${ex}.dy`), 'utf8'), `${ex}.dy`));
      for (const file of ['Erdos971.mtx', 'cora.cites']) {
        const args = toMaps(exampleInputs(ex, toCsr(loadMatrix(join(M, file)))));
        const want = c.exec.run(args).outputs;
        for (const threads of [1, 3]) {
          const be = await WasmStageBackend.create(c.binary, c.manifest, { threads });
          const engine = new KernelEngine(c.manifest, { cpu: be }, sys);
          const slot = new Slot();
          // At 3 threads the ops alternate between 2 and 1 (per-op counts, as stagePlans gives a CPU stage).
          const perOp = Object.fromEntries(c.manifest.ops.map((o, i) => [o.op, i % 2 ? 1 : 2]));
          const stage = {
            ops: c.manifest.ops.map((o) => o.op),
            kind: 'cpu' as const,
            devices: ['cpu0'],
            impls: Object.fromEntries(c.manifest.ops.map((o) => [o.op, cpuImplOf(o)])),
            ...(threads === 3 ? { threads: perOp } : {}),
          };
          for (let run = 0; run < 2; run++) {
            engine.begin(slot, engine.prepare(args));
            const r = await engine.runStage(slot, stage);
            const got = await engine.collect(slot);
            engine.end(slot);
            expect(r.backend).toBe('wasm');
            expect(r.threads).toEqual(threads === 3 ? perOp : Object.fromEntries(stage.ops.map((op) => [op, 1])));
            if (run === 1) expect(r.bytesIn, 'the second run finds every parameter resident').toBe(0);
            for (const [n, t] of want)
              expectIdentical(got.get(n)!, t, `${ex} on ${file}, ${threads} thread(s), run ${run}: ${n}`);
          }
          engine.close([slot]);
          be.close();
        }
      }
      c.exec.close();
    });

  it('ops with a spread form run it where the gathered bytes reach the threshold (the pool told its name), with the same bits', async () => {
    const c = await compileWasm(loopKernel(readFileSync(join(root, 'examples', 'gcn.dy'), 'utf8'), 'gcn.dy'));
    const args = toMaps(exampleInputs('gcn', toCsr(loadMatrix(join(M, 'Erdos971.mtx')))));
    const want = c.exec.run(args).outputs;
    const spreadOps = c.manifest.ops.filter((o) => o.spread).map((o) => o.op);
    expect(spreadOps).toEqual(['op1', 'op3']);
    for (const from of [0, Infinity]) {
      const { got, pooled: names } = await stageOnce(c, args, from);
      for (const o of c.manifest.ops)
        if (o.splittable) expect(names).toContain(from === 0 && o.spread ? o.spread.export : o.export);
      expect(names.some((n) => n.endsWith('_spread'))).toBe(from === 0);
      for (const [n, t] of want) expectIdentical(got.get(n)!, t, `gcn spread from ${from}: ${n}`);
    }
    c.exec.close();
  });

  it('a spread form stays off over a banded pattern and runs over a far one, as the whole-kernel executor decides (csr and csc)', async () => {
    const n = 1200;
    const h = 64;
    const from = n * h * 4;
    const kernels = {
      csr: 'kernel k(A: csr<f32>[m, n], B: dense<f32>[n, h]) -> (Y: dense<f32>[m, h]) { Y[i, c] = A[i, j] * B[j, c]; }',
      csc: 'kernel k(A: csc<f32>[m, n], B: dense<f32>[m, h]) -> (Y: dense<f32>[n, h]) { Y[j, c] = A[i, j] * B[i, c]; }',
    };
    for (const [layout, src] of Object.entries(kernels)) {
      const c = await compileWasm(loopKernel(src));
      for (const [A, spreads] of [
        [bandedPattern(n, n, 6, 40, 6), false],
        [farPattern(n, n, 6, 7), true],
      ] as const) {
        const a =
          layout === 'csr'
            ? A
            : { format: 'csc' as const, rows: n, cols: n, colPtr: A.rowPtr, rowIdx: A.colIdx, values: A.values };
        const B = {
          format: 'dense' as const,
          shape: [n, h],
          data: Float64Array.from({ length: n * h }, (_, q) => (q % 7) - 3),
        };
        const args = {
          tensors: new Map<string, Tensor>([
            ['A', a],
            ['B', B],
          ]),
          scalars: new Map<string, number>(),
        };
        const whole = await createWasmExecutor(c.binary, c.manifest, { threads: 2, spreadFromBytes: from });
        const want = whole.run(args).outputs;
        expect(whole.spreadsOp('op0'), `${layout}: the executor`).toBe(spreads);
        whole.close();
        const { got, pooled } = await stageOnce(c, args, from);
        expect(pooled, `${layout}: the stage engine`).toEqual([spreads ? 'k_op0_spread' : 'k_op0']);
        for (const [name, t] of want) expectIdentical(got.get(name)!, t, `${layout} spread ${spreads}: ${name}`);
      }
      c.exec.close();
    }
  });

  it('a new tensor object for a parameter is copied in afresh; the old copy is freed once no input uses it', async () => {
    const c = await compileWasm(loopKernel(readFileSync(join(root, 'examples', 'spmv.dy'), 'utf8'), 'spmv.dy'));
    const be = await WasmStageBackend.create(c.binary, c.manifest);
    const engine = new KernelEngine(c.manifest, { cpu: be }, sys);
    const slot = new Slot();
    const A = toCsr(loadMatrix(join(M, 'Erdos971.mtx')));
    const stage = { ops: ['op0'], kind: 'cpu' as const, devices: ['cpu0'], impls: { op0: 'nnz-split' } };
    const one = toMaps(exampleInputs('spmv', A));
    engine.begin(slot, engine.prepare(one));
    const first = await engine.runStage(slot, stage);
    engine.end(slot);
    const x2 = { format: 'dense' as const, shape: [A.cols], data: new Float64Array(A.cols).fill(2) };
    const two = { tensors: new Map([...one.tensors, ['x', x2]]), scalars: one.scalars };
    engine.begin(slot, engine.prepare(two));
    const second = await engine.runStage(slot, stage);
    const y = (await engine.collect(slot)).get('y')!;
    engine.end(slot);
    expect(second.bytesIn).toBe(A.cols * 4);
    expect(first.bytesIn).toBeGreaterThan(second.bytesIn);
    const exec = await createWasmExecutor(c.binary, c.manifest);
    expectIdentical(y, exec.run(two).outputs.get('y')!, 'spmv with the new x');
    exec.close();
    be.close();
    c.exec.close();
  });
});

describe('engine bookkeeping', () => {
  it('byte ranges: add merges overlapping and adjacent ranges; missing and within are complements', () => {
    let xs = add([], 10, 20);
    xs = add(xs, 30, 40);
    xs = add(xs, 20, 25);
    expect(xs).toEqual([
      [10, 25],
      [30, 40],
    ]);
    expect(missing(xs, 0, 50)).toEqual([
      [0, 10],
      [25, 30],
      [40, 50],
    ]);
    expect(within(xs, 15, 35)).toEqual([
      [15, 25],
      [30, 35],
    ]);
    expect(missing(add(xs, 0, 100), 0, 50)).toEqual([]);
  });

  it('the heap reuses freed blocks, merges neighbours and shrinks its top', () => {
    const h = new Heap();
    const a = h.alloc(100);
    const b = h.alloc(50);
    const c = h.alloc(10);
    expect(new Set([a % 16, b % 16, c % 16])).toEqual(new Set([0]));
    expect(a).toBeGreaterThan(0);
    h.free(b);
    expect(h.alloc(40)).toBe(b);
    h.free(a);
    h.free(b);
    // a and b merged: a block of both sizes fits where a was.
    expect(h.alloc(160)).toBe(a);
    const end = h.end;
    h.free(c);
    expect(h.end).toBeLessThan(end);
    expect(() => h.free(12345)).toThrow(/not allocated/);
  });
});
