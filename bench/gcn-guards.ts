/**
 * The gcn guards the decision benches time (bench/decision-repeat.ts,
 * bench/features-after-kernel.ts, bench/guards.ts): examples/gcn.dy lowered, its planned
 * spec, and guards built for a system from real graphs' exact features
 * (24 sampled bindings each, dims n from the graph, f = h = 64, c = 16),
 * the throughput objective; and the compiled guard step as the runtime's
 * chooser takes it for a new pattern (runtime/engine/choose.ts); and the
 * inputs of the SpMV they time the step against.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { plannedSpec } from '../codegen/implementations.js';
import { compileSource } from '../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { buildGuards, sampleBindings, sparseFeaturesOf } from '../runtime/guards/index.js';
import { guardStep, leavesOf } from '../runtime/guards/step.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import type { Binding } from '../runtime/plan/bind.js';
import { DEFAULT_ENERGY_SCOPE, DEFAULT_STREAM_LENGTH } from '../runtime/plan/figures.js';
import type { SparseFeatures } from '../runtime/plan/types.js';
import { loadSystemFile } from '../runtime/system/load.js';
import type { CsrMatrix, Tensor } from '../runtime/tensor.js';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const matricesDir = join(root, '..', 'shared', 'data', 'matrices');
export const matrix = (f: string): CsrMatrix => toCsr(loadMatrix(join(matricesDir, f)));
/** An example lowered as the runtime target compiles it. */
export const lowered = (file: string) =>
  runPipeline(compileSource(readFileSync(join(root, 'examples', file), 'utf8'), file).module!, {
    passes: [...DEFAULT_PIPELINE, 'lower-kernels'],
  });
/** The inputs of examples/spmv.dy's executor for matrix m (x all ones), as the decision benches time its SpMV. */
export const spmvInputs = (m: CsrMatrix): { tensors: Map<string, Tensor>; scalars: Map<string, number> } => ({
  tensors: new Map<string, Tensor>([
    ['A', m],
    ['x', { format: 'dense', shape: [m.cols], data: new Float64Array(m.cols).fill(1) }],
  ]),
  scalars: new Map(),
});
/** gcn's dims for an n x n graph. */
export const gcnDims = (n: number): Map<string, number> =>
  new Map([
    ['n', n],
    ['f', 64],
    ['h', 64],
    ['c', 16],
  ]);
export const DEFAULT_PROFILES = ['cora.cites', 'ca-GrQc.mtx', 'facebook_combined.txt', 'jazz.mtx'];

/** gcn's guards for systems/<system>.json from the graphs `profiles` (files in the shared matrices, read by `load`). */
export function gcnGuards(system = 'paper-1g1f', profiles = DEFAULT_PROFILES, load = matrix) {
  const module = lowered('gcn.dy');
  const kernel = module.kernels[0]!;
  const spec = plannedSpec(module, 'gcn.dy', kernel.name);
  const sys = loadSystemFile(join(root, 'systems', `${system}.json`));
  const bindings = profiles.map((f) => {
    const m = load(f);
    return { sparse: new Map([['A', sparseFeaturesOf(m, 2)]]), dims: gcnDims(m.rows), scalars: new Map() };
  });
  const plan = buildGuards(spec, sys, sampleBindings(bindings, { perProfile: 24, shapeDims: { A: ['n', 'n'] } }), {
    objective: 'throughput',
    energyScope: DEFAULT_ENERGY_SCOPE,
    streamLength: DEFAULT_STREAM_LENGTH,
  });
  return { module, kernel, spec, system: sys, plan };
}

/**
 * A new pattern's guard step on gcn's plan as the chooser takes it: the compiled step (the tree and the reached
 * leaf's range checks, reading the features the path needs) over the call's binding, which holds the pattern's
 * features `f`; at a leaf that leaves several partitions open the cost model reads every row statistic, so the
 * step reads rowLenCv and top1PctNnzShare there. The binding's maps are kept per graph and the features set in
 * them each call, as the runtime's binder fills a binding by set (building the binding, which every call does
 * whatever the pattern, is left out).
 */
export function newPatternStep(
  plan: ReturnType<typeof gcnGuards>['plan'],
): (f: SparseFeatures, m: CsrMatrix) => number {
  const step = guardStep(plan);
  const leaves = leavesOf(plan.tree);
  const kept = new Map<CsrMatrix, { b: Binding; sparse: Map<string, SparseFeatures> }>();
  return (f, m) => {
    let bound = kept.get(m);
    if (!bound) {
      const sparse = new Map<string, SparseFeatures>();
      kept.set(m, (bound = { b: { sparse, dims: gcnDims(m.rows), scalars: new Map() }, sparse }));
    }
    bound.sparse.set('A', f);
    const r = step(bound.b);
    const leaf = leaves[r < 0 ? -1 - r : r]!;
    return r + (leaf.also ? f.rowLenCv + f.top1PctNnzShare : 0);
  };
}
