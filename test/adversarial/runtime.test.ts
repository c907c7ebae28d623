/**
 * Adversarial inputs through the guarded runtime (issue 14 item 4): a
 * definite decision, explained, with finite features, or one DY error;
 * never an uncaught exception, NaN features, or a partition the guards
 * would not pick on the exact features.
 *   - spmv under hand-written guards over three partitions (CPU, GPU, FPGA;
 *     GPU and FPGA stages run on wasm stand-ins, test/helpers/loopback.ts)
 *     whose tree tests the row statistics a dense row moves: the runtime's
 *     pick from its sampled features is the tree's pick on exact ones;
 *     inputs outside the ranges are re-planned, saying why; outputs are
 *     y = A x with IEEE semantics (NaN and inf carried through).
 *   - gcn under the guards built from real graphs (test/guards/
 *     runtime-fixture.ts): the pick for the CSR input (sampled features)
 *     equals the pick for the same matrix as COO (exact features).
 *   - 2^31 - 1 columns: spmv needs x of that length, which the runtime
 *     refuses (DY3031) before touching it.
 *   - hand-made tensors whose arrays do not agree: DY3051 naming the input.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interpretKernel } from '../../interp/interpret.js';
import type { Kernel } from '../../ir/module.js';
import { createGuardedRuntime, type GuardedRuntime } from '../../runtime/engine/runtime.js';
import type { RuntimeConfig, RuntimeInputs } from '../../runtime/engine/types.js';
import { InputError } from '../../runtime/errors.js';
import { closeBackends, type StageBackends } from '../../runtime/exec/index.js';
import {
  buildGuards,
  featureRecord,
  partitionLabel,
  sampleBindings,
  sparseFeaturesOf,
  walkTree,
  type GuardPlan,
} from '../../runtime/guards/index.js';
import type { StageChoice } from '../../runtime/plan/dp.js';
import { Rng } from '../../runtime/random.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import { graph, root, spmvBinding, system } from '../guards/fixtures.js';
import { gcnFixture, runtimeFor, throughputConfig, type Fixture } from '../guards/runtime-fixture.js';
import { specOf } from '../helpers/compile.js';
import { goal } from '../helpers/goal.js';
import { wasmAndLoopbacks } from '../helpers/loopback.js';
import { compileWasm, loopKernel } from '../wasm/compare.js';
import {
  asCoo,
  csrOf,
  denseRowMatrix,
  emptyMatrix,
  MAX_COLS,
  nonFiniteMatrix,
  spmvReference,
  wideMatrix,
  vec,
} from './inputs.js';

const SYS = system('paper-1g1f');

/** Inputs every runtime here must decide on (square, so gcn takes them too). */
const SQUARE: [string, () => CsrMatrix][] = [
  ['one dense row, every row read', () => csrOf(5, 5, [[], [], [0, 1, 2, 3, 4], [], [4]])],
  ['a 400-entry row among 4000 short rows', () => denseRowMatrix(4000, 400, 1333)],
  ['a full row among 4000 short rows', () => denseRowMatrix(4000, 4000, 3999)],
  ['a full row among 50000 empty rows', () => denseRowMatrix(50_000, 50_000, 31_337, 0)],
  ['every row empty, 5 x 5', () => emptyMatrix(5, 5)],
  ['every row empty, 100000 x 100000', () => emptyMatrix(100_000, 100_000)],
  ['1 x 1', () => csrOf(1, 1, [[0]], [2.5])],
  ['1 x 1 without an entry', () => emptyMatrix(1, 1)],
  ['0 x 0', () => emptyMatrix(0, 0)],
  ['NaN and infinite values', nonFiniteMatrix],
];

const matrices = new Map<string, CsrMatrix>();
const matrix = (name: string): CsrMatrix => {
  let m = matrices.get(name);
  if (!m) matrices.set(name, (m = SQUARE.find(([n]) => n === name)![1]()));
  return m;
};

function allFinite(rec: Record<string, number>): void {
  for (const [k, v] of Object.entries(rec)) expect(Number.isFinite(v), `${k} = ${v}`).toBe(true);
}

/** The DY code of what `f` throws (failing the test on anything but an InputError). */
async function codeOf(f: () => unknown): Promise<string> {
  try {
    await f();
  } catch (e) {
    expect(e, String(e)).toBeInstanceOf(InputError);
    return (e as InputError).code;
  }
  throw new Error('expected an InputError, got none');
}

/** f32 results against a float64 reference: the same non-finite entries, finite ones within 1e-4 relative. */
function expectOutputs(got: Float64Array, want: Float64Array, what: string): void {
  expect(got.length, what).toBe(want.length);
  let big = 0;
  for (const v of want) if (Number.isFinite(v)) big = Math.max(big, Math.abs(v));
  const bad: string[] = [];
  for (let i = 0; i < want.length && bad.length < 5; i++) {
    const [g, w] = [got[i]!, want[i]!];
    const ok = Number.isFinite(w) ? Math.abs(g - w) <= 1e-4 * Math.max(1, Math.abs(w)) + 1e-5 * big : Object.is(g, w);
    if (!ok) bad.push(`${what}[${i}]: ${g}, expected ${w}`);
  }
  expect(bad).toEqual([]);
}

describe('spmv under guards over CPU, GPU and FPGA partitions', () => {
  let kernel: Kernel;
  let config: RuntimeConfig;
  let backends: StageBackends;
  let plan: GuardPlan;
  const runtime = (): GuardedRuntime => createGuardedRuntime(config, { system: SYS, backends });

  beforeAll(async () => {
    const src = readFileSync(join(root, 'examples', 'spmv.dy'), 'utf8');
    const spec = specOf(src, 'spmv.dy');
    kernel = loopKernel(src, 'spmv.dy');
    const profiles = ['karate.mtx', 'cage8.mtx', 'jazz.mtx'].map((f) => spmvBinding(graph(f)));
    // A built plan (its fields as this build records them), its partitions, tree and ranges written out here.
    const built = buildGuards(
      spec,
      SYS,
      sampleBindings(profiles, { perProfile: 4, shapeDims: { A: ['m', 'n'] } }),
      goal('throughput'),
    );
    const on = (device: string): StageChoice[] => [{ start: 0, end: 1, device, count: 1 }];
    const partitions = ['cpu', 'gpu', 'fpga'].map((d, id) => ({
      id,
      choices: on(d),
      label: partitionLabel(spec, on(d)),
      fallbacks: [0, 1, 2].filter((j) => j !== id),
    }));
    // Short rows: CPU when small, GPU otherwise; a long row: GPU when the lengths are even enough, else FPGA.
    const tree: GuardPlan['tree'] = {
      feature: 'A.rowLenMax',
      tier: 1,
      threshold: 64,
      le: { feature: 'A.nnz', tier: 0, threshold: 1000, le: { leaf: 0 }, gt: { leaf: 1 } },
      gt: { feature: 'A.rowLenCv', tier: 1, threshold: 1, le: { leaf: 1 }, gt: { leaf: 2 } },
    };
    const ranges: GuardPlan['ranges'] = {
      'A.rows': [1, 1e6],
      'A.cols': [1, 1e6],
      'A.nnz': [1, 1e7],
      'dim.m': [1, 1e6],
      'dim.n': [1, 1e6],
    };
    plan = { ...built, partitions, tree, ranges };
    const { binary, manifest } = await compileWasm(kernel);
    config = throughputConfig(kernel, spec, manifest, plan);
    backends = await wasmAndLoopbacks(binary, manifest);
  }, 60_000);
  afterAll(() => backends && closeBackends(backends));

  for (const [name] of SQUARE)
    it(`${name}: the guards' pick on exact features, explained; y = A x`, async () => {
      const A = matrix(name);
      const x = vec(A.cols, 1);
      const rt = runtime();
      const e = rt.explain({ A, x });
      allFinite(e.features);
      const exact = featureRecord({
        sparse: new Map([['A', sparseFeaturesOf(A, 2)]]),
        dims: new Map([
          ['m', A.rows],
          ['n', A.cols],
        ]),
        scalars: new Map(),
      });
      allFinite(exact);
      const outside = Object.entries(plan.ranges).filter(([k, [lo, hi]]) => exact[k]! < lo || exact[k]! > hi);
      expect(e.inRange, e.reason).toBe(outside.length === 0);
      if (outside.length === 0) {
        expect(e.path.length).toBeGreaterThan(0);
        expect(e.selected.id, `${e.path.join(' -> ')}; ${e.reason}`).toBe(walkTree(plan.tree, (k) => exact[k]).leaf);
      } else {
        // Outside the ranges the DP plans it afresh, and says which feature is out.
        for (const [k] of outside) expect(e.reason).toContain(k);
        expect(e.reason).toMatch(/outside the guards' ranges/);
      }
      const r = await rt.run({ A, x });
      expect(r.partition.id).toBe(e.selected.id);
      expect(r.log.reason.length).toBeGreaterThan(0);
      expectOutputs((r.outputs.get('y') as DenseTensor).data, spmvReference(A, x.data), `${name}: y`);
      rt.close();
    }, 60_000);

  it('2^31 - 1 columns: x would need 2^31 - 1 elements, refused with DY3031 before anything reads it', async () => {
    const A = wideMatrix();
    // A stand-in of the right length whose storage is never touched (lazily mapped): the check reads its length.
    const x = {
      format: 'dense',
      shape: [MAX_COLS],
      data: new Uint8Array(MAX_COLS) as unknown as Float64Array,
    } as DenseTensor;
    const rt = runtime();
    expect(await codeOf(() => rt.explain({ A, x }))).toBe('DY3031');
    expect(await codeOf(() => rt.run({ A, x }))).toBe('DY3031');
    expect(() => rt.explain({ A, x })).toThrow(
      /input x of kernel spmv: error DY3031: a dense \[2147483647\] tensor of 2147483647 elements; at most 268435456 fit/,
    );
    rt.close();
  });

  it('hand-made tensors whose arrays disagree: DY3051 naming the input, before or while laying it out', async () => {
    const rt = runtime();
    const x3 = vec(3, 2);
    const csr = (
      rows: number,
      cols: number,
      rowPtr: number[],
      colIdx: number[],
      values = colIdx.length,
    ): CsrMatrix => ({
      format: 'csr',
      rows,
      cols,
      rowPtr: new Int32Array(rowPtr),
      colIdx: new Int32Array(colIdx),
      values: new Float64Array(values),
    });
    const decide: [string, RuntimeInputs, RegExp][] = [
      ['row pointers shorter than rows + 1', { A: csr(3, 3, [0, 1], [0]), x: x3 }, /rowPtr has 2 entries/],
      [
        'row pointers past the entries',
        { A: csr(3, 3, [0, 1, 2, 4], [0, 1, 2]), x: x3 },
        /rowPtr must run from 0 to nnz = 3/,
      ],
      [
        'fewer values than column indices',
        { A: csr(3, 3, [0, 1, 2, 3], [0, 1, 2], 1), x: x3 },
        /with 1 values needs 1/,
      ],
      ['negative rows', { A: csr(-1, 3, [0], []), x: x3 }, /rows and cols must be integers/],
      ['fractional columns', { A: csr(2, 2.5, [0, 0, 0], []), x: x3 }, /rows and cols must be integers/],
      ['pointers that decrease', { A: csr(3, 3, [0, 2, 1, 3], [0, 1, 2]), x: x3 }, /not non-decreasing/],
      [
        'a dense shape its data does not fill',
        { A: csrOf(3, 3, [[0], [1], [2]]), x: { format: 'dense', shape: [3, 2], data: new Float64Array(3) } },
        /shape \[3, 2\] holds 6 elements, but data has 3/,
      ],
    ];
    for (const [what, inputs, msg] of decide) {
      expect(await codeOf(() => rt.explain(inputs)), what).toBe('DY3051');
      expect(() => rt.explain(inputs), what).toThrow(msg);
      expect(await codeOf(() => rt.run(inputs)), what).toBe('DY3051');
    }
    // Column indices are read only where the pattern is laid out (the decision stays O(1) in nnz): run says it.
    const badCol = { A: csr(3, 3, [0, 1, 2, 3], [0, 5, 2]), x: x3 };
    expect(rt.explain(badCol).selected).toBeDefined();
    expect(await codeOf(() => rt.run(badCol))).toBe('DY3051');
    await expect(rt.run(badCol)).rejects.toThrow(/input A: error DY3051: colIdx\[1\] is 5, outside the 3 columns/);
    rt.close();
  });
});

describe('gcn under guards built from real graphs', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await gcnFixture();
  }, 120_000);
  afterAll(() => fx && closeBackends(fx.backends));

  const F = 8;
  const inputsOf = (A: Tensor, n: number): Record<string, Tensor> => {
    const rng = new Rng(n + 1);
    const mat = (r: number, c: number): DenseTensor => ({
      format: 'dense',
      shape: [r, c],
      data: Float64Array.from({ length: r * c }, () => rng.uniform(-1, 1)),
    });
    return { A, X: mat(n, F), W1: mat(F, 32), W2: mat(32, 16) };
  };

  for (const [name] of SQUARE)
    it(`${name}: the pick from sampled features is the pick from exact ones; runs`, async () => {
      const A = matrix(name);
      const ins = inputsOf(A, A.rows);
      const rt = runtimeFor(fx);
      const sampled = rt.explain(ins);
      const exact = rt.explain({ ...ins, A: asCoo(A) });
      allFinite(sampled.features);
      allFinite(exact.features);
      expect(sampled.inRange, `${sampled.reason} / ${exact.reason}`).toBe(exact.inRange);
      expect(sampled.selected.id, `sampled: ${sampled.path.join(' -> ')}; exact: ${exact.path.join(' -> ')}`).toBe(
        exact.selected.id,
      );
      if (A.rows <= 4000) {
        const r = await rt.run(ins);
        expect(r.partition.id).toBe(sampled.selected.id);
        if (A.rows <= 5) {
          const ref = interpretKernel(fx.kernel, {
            tensors: new Map(Object.entries(ins)),
            scalars: new Map(),
          }).outputs.get('Y') as DenseTensor;
          expectOutputs((r.outputs.get('Y') as DenseTensor).data, ref.data, `${name}: Y`);
        }
      }
      rt.close();
    }, 120_000);
});
