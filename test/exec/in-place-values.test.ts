/**
 * A tensor object stands for its values (docs/RUNTIME.md, "Inputs: one tensor object, one set of values"): the
 * guarded runtime keeps a parameter's device copies per tensor object, so values written into the same arrays under
 * the same object are seen once the application says so with `updated(...)`, or passes a new object (which may wrap
 * the same arrays), and not otherwise. Pinned on spmv (the CPU, one GPU and a stage split over two; GPUs are loopback
 * wasm memories, test/helpers/loopback.ts, so values really live in another memory) against a float64 SpMV, and on gcn
 * over wasm + cuda-emu against the reference interpreter (needs g++, skipped without).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitRuntimeTs } from '../../codegen/runtime/emit-ts.js';
import { interpretKernel } from '../../interp/interpret.js';
import type { Kernel } from '../../ir/module.js';
import { createGuardedRuntime, type GuardedRuntime } from '../../runtime/engine/runtime.js';
import type { RunResult, RuntimeConfig } from '../../runtime/engine/types.js';
import { closeBackends, WasmStageBackend, type StageBackends } from '../../runtime/exec/index.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { openProject, readProject } from '../../runtime/native/project.js';
import type { StageChoice } from '../../runtime/plan/dp.js';
import type { PlanSpec } from '../../runtime/plan/types.js';
import { Rng } from '../../runtime/random.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import type { WasmManifest } from '../../runtime/wasm/manifest.js';
import { cleanup, example, freshDir, runCliAsync } from '../helpers/cli.js';
import { specOf } from '../helpers/compile.js';
import { loopback } from '../helpers/loopback.js';
import { fixedPlan, throughputConfig } from '../guards/runtime-fixture.js';
import { compileWasm, expectClose, expectIdentical, loopKernel, TOL_F32 } from '../wasm/compare.js';

const root = join(import.meta.dirname, '..', '..');
const M = join(root, '..', 'shared', 'data', 'matrices');
const HAVE_DATA = existsSync(M);
const HAVE_GXX = HAVE_DATA && spawnSync('g++', ['--version']).status === 0;
const system = (name: string): SystemSpec => loadSystemFile(join(root, 'systems', `${name}.json`));

function fixed(kernel: Kernel, spec: PlanSpec, manifest: WasmManifest, choices: StageChoice[]): RuntimeConfig {
  return throughputConfig(kernel, spec, manifest, fixedPlan(choices));
}

/** Writes new values into `a`, in place (the array the runtime was given stays the same object). */
function refill(a: Float64Array, seed: number): void {
  const rng = new Rng(seed);
  for (let k = 0; k < a.length; k++) a[k] = rng.uniform(-1, 1);
}

function dense(shape: number[], seed: number): DenseTensor {
  const data = new Float64Array(shape.reduce((a, b) => a * b, 1));
  refill(data, seed);
  return { format: 'dense', shape, data };
}

/** A real graph with values of its own (tests rewrite them in place). */
function graph(file: string, seed: number): CsrMatrix {
  const g = toCsr(loadMatrix(join(M, file)));
  const values = new Float64Array(g.values.length);
  refill(values, seed);
  return { ...g, values };
}

/** y = A x in float64: the f32 kernel agrees to f32 rounding (TOL_F32). */
function spmvRef(A: CsrMatrix, x: ArrayLike<number>): DenseTensor {
  const y = new Float64Array(A.rows);
  for (let i = 0; i < A.rows; i++) {
    let s = 0;
    for (let k = A.rowPtr[i]!; k < A.rowPtr[i + 1]!; k++) s += A.values[k]! * x[A.colIdx[k]!]!;
    y[i] = s;
  }
  return { format: 'dense', shape: [A.rows], data: y };
}

const out = (r: RunResult, name: string): Tensor => r.outputs.get(name)!;
const bytesIn = (r: RunResult): number => r.stages.reduce((a, s) => a + s.bytesIn, 0);

describe.skipIf(!HAVE_DATA)('values rewritten in place: spmv on the CPU and on (loopback) GPUs', () => {
  const sys = system('paper-2g2f');
  let rtFor: (choices: StageChoice[]) => GuardedRuntime;
  let backends: StageBackends;
  let kernel: Kernel;
  let spec: PlanSpec;
  let manifest: WasmManifest;
  beforeAll(async () => {
    const src = readFileSync(example('spmv.dy'), 'utf8');
    kernel = loopKernel(src, 'spmv.dy');
    spec = specOf(src, 'spmv.dy');
    const c = await compileWasm(kernel);
    c.exec.close();
    const { binary } = c;
    manifest = c.manifest;
    backends = {
      cpu: await WasmStageBackend.create(binary, manifest),
      gpu: await loopback('gpu', binary, manifest, 2),
    };
    rtFor = (choices) => createGuardedRuntime(fixed(kernel, spec, manifest, choices), { system: sys, backends });
  });
  afterAll(() => closeBackends(backends));

  const PLACES: { label: string; choices: StageChoice[]; instances: number }[] = [
    { label: 'cpu x1', choices: [{ start: 0, end: 1, device: 'cpu', count: 1 }], instances: 1 },
    { label: 'gpu x1', choices: [{ start: 0, end: 1, device: 'gpu', count: 1 }], instances: 1 },
    { label: 'gpu x2 (split)', choices: [{ start: 0, end: 1, device: 'gpu', count: 2 }], instances: 2 },
  ];

  for (const { label, choices, instances } of PLACES) {
    it(`${label}: x.data rewritten in place is seen after updated(x), and only x is copied again`, async () => {
      const rt = rtFor(choices);
      const A = graph('cora.cites', 1);
      const x = dense([A.cols], 2);
      expectClose(out(await rt.run({ A, x }), 'y'), spmvRef(A, x.data), TOL_F32, 'first run');
      const data = x.data;
      refill(x.data, 3);
      rt.updated(x);
      const r = await rt.run({ A, x });
      expect(x.data).toBe(data);
      expectClose(out(r, 'y'), spmvRef(A, x.data), TOL_F32, 'after updated(x)');
      // Nothing else is redone: the pattern and A's values stay resident, the binding and the choice are kept.
      expect(bytesIn(r)).toBe(instances * A.cols * 4);
      expect(r.log.decisionReused).toBe(true);
      // Announced once: the run after it finds x resident again.
      expect(bytesIn(await rt.run({ A, x }))).toBe(0);
      rt.close();
    });

    it(`${label}: A.values rewritten in place is seen after updated(A), its pattern not copied again`, async () => {
      const rt = rtFor(choices);
      const A = graph('cora.cites', 4);
      const x = dense([A.cols], 5);
      expectClose(out(await rt.run({ A, x }), 'y'), spmvRef(A, x.data), TOL_F32, 'first run');
      refill(A.values, 6);
      rt.updated(A);
      const r = await rt.run({ A, x });
      expectClose(out(r, 'y'), spmvRef(A, x.data), TOL_F32, 'after updated(A)');
      // A split instance takes only its rows' values: nnz float32 in all, no pointer or index.
      expect(bytesIn(r)).toBe(A.values.length * 4);
      rt.close();
    });

    it(`${label}: without updated, values rewritten under the same objects are not seen; a new object is`, async () => {
      const rt = rtFor(choices);
      const A = graph('cora.cites', 7);
      const x = dense([A.cols], 8);
      const first = await rt.run({ A, x });
      refill(x.data, 9);
      refill(A.values, 10);
      // The documented contract: the same objects stand for the values the runtime copied before.
      const stale = await rt.run({ A, x });
      expectIdentical(out(stale, 'y'), out(first, 'y'), 'the same objects, values rewritten, not announced');
      expect(bytesIn(stale)).toBe(0);
      // New wrapper objects around the very same arrays are new values.
      const wrapped = await rt.run({ A: { ...A }, x: { ...x } });
      expectClose(out(wrapped, 'y'), spmvRef(A, x.data), TOL_F32, 'new wrappers around the same arrays');
      rt.close();
    });

    // Regression: the same object given other arrays ran the old pattern with the new sizes (wrong results, an
    // out-of-bounds fault, a crash in a native library), and x.data replaced by an array of the same length kept
    // the old copy.
    it(`${label}: the same objects holding other arrays are another input, whatever the sizes`, async () => {
      const rt = rtFor(choices);
      const A: CsrMatrix = { ...graph('cora.cites', 13) };
      const x = dense([A.cols], 14);
      expectClose(out(await rt.run({ A, x }), 'y'), spmvRef(A, x.data), TOL_F32, 'first run');
      x.data = new Float64Array(x.data.length);
      refill(x.data, 15);
      expectClose(out(await rt.run({ A, x }), 'y'), spmvRef(A, x.data), TOL_F32, 'x.data replaced, same length');
      for (const [file, seed] of [
        ['Erdos971.mtx', 16],
        ['ca-GrQc.mtx', 17],
        ['karate.mtx', 18],
      ] as const) {
        Object.assign(A, graph(file, seed));
        x.shape = [A.cols];
        x.data = new Float64Array(A.cols);
        refill(x.data, seed + 100);
        expectClose(out(await rt.run({ A, x }), 'y'), spmvRef(A, x.data), TOL_F32, `the same A object, now ${file}`);
      }
      rt.close();
    });
  }

  it('an input already running keeps the values it was admitted with; updated rejects what is not a tensor', async () => {
    const rt = rtFor(PLACES[1]!.choices);
    const A = graph('Erdos971.mtx', 11);
    const x = dense([A.cols], 12);
    await rt.run({ A, x });
    const before = spmvRef(A, x.data);
    const running = rt.run({ A, x });
    refill(x.data, 13);
    rt.updated(x);
    const next = rt.run({ A, x });
    const [r1, r2] = await Promise.all([running, next]);
    expectClose(out(r1, 'y'), before, TOL_F32, 'admitted before updated');
    expectClose(out(r2, 'y'), spmvRef(A, x.data), TOL_F32, 'admitted after updated');
    // A tensor the runtime holds no copy of: nothing to do.
    rt.updated(dense([3], 14));
    expect(() => rt.updated(undefined as unknown as Tensor)).toThrow(TypeError);
    expect(() => rt.updated(3 as unknown as Tensor)).toThrow(/tensor objects whose values were rewritten/);
    rt.close();
  });

  it('the generated typed runtime (codegen/runtime) has updated, and it reaches the engine', async () => {
    const dir = freshDir('dype-in-place-ts-');
    try {
      const plans = { throughput: fixedPlan(PLACES[1]!.choices) };
      const ts = emitRuntimeTs(
        'spmv',
        'examples/spmv.dy',
        'test',
        [{ kernel, spec, objective: 'throughput', plans, manifest }],
        join(root, 'runtime', 'engine', 'index.ts'),
      );
      expect(ts).toMatch(/updated\(\.\.\.tensors: \(SparseMatrix \| DenseTensor\)\[\]\): void;/);
      writeFileSync(join(dir, 'spmv.runtime.ts'), ts);
      const mod = (await import(join(dir, 'spmv.runtime.ts'))) as {
        createRuntime(o: { system: SystemSpec; backends: StageBackends }): GuardedRuntime;
      };
      const rt = mod.createRuntime({ system: sys, backends });
      const A = graph('Erdos971.mtx', 15);
      const x = dense([A.cols], 16);
      await rt.run({ A, x });
      refill(x.data, 17);
      rt.updated(x);
      const r = await rt.run({ A, x });
      expectClose((r.outputs as unknown as Record<string, Tensor>).y!, spmvRef(A, x.data), TOL_F32, 'typed runtime');
      rt.close();
    } finally {
      cleanup(dir);
    }
  });
});

describe.skipIf(!HAVE_GXX)('values rewritten in place: gcn over wasm + cuda-emu', () => {
  const sys = system('paper-1g1f');
  const dir = freshDir('dype-in-place-');
  let backends: StageBackends | undefined;
  let kernel: Kernel;
  let config: RuntimeConfig;
  beforeAll(async () => {
    const c = await runCliAsync(['compile', example('gcn.dy'), '--targets', 'wasm,cuda', '-o', dir], {
      timeoutMs: 120_000,
    });
    if (c.status !== 0) throw new Error(`compile gcn: ${c.stderr}`);
    const b = await runCliAsync(['build', dir, '--emulate'], { timeoutMs: 300_000 });
    if (b.status !== 0) throw new Error(`build gcn: ${b.stderr}`);
    const src = readFileSync(example('gcn.dy'), 'utf8');
    kernel = loopKernel(src, 'gcn.dy');
    const spec = specOf(src, 'gcn.dy');
    const manifest = JSON.parse(readFileSync(join(dir, 'wasm', 'gcn.manifest.json'), 'utf8')) as WasmManifest;
    const n = spec.ops.length;
    const cut = Math.ceil(n / 2);
    config = {
      ...fixed(kernel, spec, manifest, [
        { start: 0, end: cut, device: 'cpu', count: 1 },
        { start: cut, end: n, device: 'gpu', count: 1 },
      ]),
      // The project's backends carry its program's hash, which the runtime checks against its own (DY3044).
      programHash: readProject(dir).programHash,
    };
    backends = await openProject(dir, sys, { emulate: true, kernel: 'gcn', kinds: ['cpu', 'gpu'] });
  }, 430_000);
  afterAll(() => {
    if (backends) closeBackends(backends);
    cleanup(dir);
  });

  it('X, W2 and A.values rewritten in place: seen after updated(...), not without; new wrappers are', async () => {
    const rt = createGuardedRuntime(config, { system: sys, backends: backends! });
    const A = graph('Erdos971.mtx', 21);
    const inputs = { A, X: dense([A.rows, 8], 22), W1: dense([8, 8], 23), W2: dense([8, 4], 24) };
    const reference = (x: Record<string, Tensor>): Tensor =>
      interpretKernel(kernel, { tensors: new Map(Object.entries(x)), scalars: new Map() }).outputs.get('Y')!;
    const first = await rt.run(inputs);
    expect(first.stages.map((s) => s.backend)).toEqual(['wasm', 'cuda-emu']);
    expectClose(out(first, 'Y'), reference(inputs), TOL_F32, 'first run');

    refill(inputs.X.data, 25);
    refill(inputs.W2.data, 26);
    refill(A.values, 27);
    rt.updated(inputs.X, inputs.W2, A);
    const announced = await rt.run(inputs);
    expectClose(out(announced, 'Y'), reference(inputs), TOL_F32, 'after updated(X, W2, A)');

    refill(inputs.X.data, 28);
    refill(inputs.W2.data, 29);
    refill(A.values, 30);
    const stale = await rt.run(inputs);
    expectIdentical(out(stale, 'Y'), out(announced, 'Y'), 'rewritten, not announced');

    const wrapped = { A: { ...A }, X: { ...inputs.X }, W1: inputs.W1, W2: { ...inputs.W2 } };
    expectClose(out(await rt.run(wrapped), 'Y'), reference(inputs), TOL_F32, 'new wrappers around the same arrays');
    rt.close();
  });
});
