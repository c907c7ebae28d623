/** A guarded gcn runtime over real and generated graphs, with the reference interpreter's outputs to check it against. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { interpretKernel } from '../../interp/interpret.js';
import type { Kernel } from '../../ir/module.js';
import { specOf } from '../helpers/compile.js';
import { WasmStageBackend, type StageBackends } from '../../runtime/exec/index.js';
import { createGuardedRuntime, type GuardedRuntime } from '../../runtime/engine/runtime.js';
import { wasmAndLoopbacks } from '../helpers/loopback.js';
import type { RuntimeConfig, RuntimeOptions } from '../../runtime/engine/types.js';
import { generatedMatrix } from '../../runtime/generate.js';
import { buildGuards, sampleBindings, walkTree } from '../../runtime/guards/index.js';
import type { GuardPlan } from '../../runtime/guards/types.js';
import type { Binding } from '../../runtime/plan/bind.js';
import { Rng, seedFor } from '../../runtime/random.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import { compileWasm, loopKernel } from '../wasm/compare.js';
import { gcnBinding, graph, root, system } from './fixtures.js';
import { goal, STEADY } from '../helpers/goal.js';
import type { StageChoice } from '../../runtime/plan/dp.js';

export const F = 32;
export const H = 32;
export const C = 16;

/** Small and medium real graphs (square: gcn multiplies by A twice) and generated ones. */
export const REAL = [
  'karate.mtx',
  'bcsstk01.mtx',
  'jazz.mtx',
  'Erdos971.mtx',
  'west0479.mtx',
  'olm1000.mtx',
  '1138_bus.mtx',
  'cora.cites',
  'ca-GrQc.mtx',
  'facebook_combined.txt',
];
export const GENERATED: Record<string, () => CsrMatrix> = {
  'gen-uniform-3000x4': () => generatedMatrix(3000, 4),
  'gen-uniform-2000x40': () => generatedMatrix(2000, 40),
  'gen-banded-4000x8': () => generatedMatrix(4000, 8, true),
};

export function random(shape: number[], name: string): DenseTensor {
  const rng = new Rng(seedFor(11, name));
  const data = new Float64Array(shape.reduce((a, b) => a * b, 1));
  for (let k = 0; k < data.length; k++) data[k] = rng.uniform(-1, 1);
  return { format: 'dense', shape, data };
}

export interface Fixture {
  kernel: Kernel;
  /** A config with the throughput guards only. */
  config: RuntimeConfig;
  plan: GuardPlan;
  /** The samples the guards were built from (other objectives' guards: the same ones). */
  samples: Binding[];
  wasm: WasmStageBackend;
  backends: StageBackends;
  graphs: Map<string, CsrMatrix>;
  inputs(name: string, f?: number): Record<string, Tensor>;
  reference(name: string, f?: number): DenseTensor;
}

/** Guards that always pick one hand-made partition (in range: no re-plan). */
export function fixedPlan(choices: StageChoice[]): GuardPlan {
  return {
    objective: 'throughput',
    ...STEADY,
    partitions: [{ id: 0, choices, label: 'fixed', fallbacks: [] }],
    tree: { leaf: 0 },
    ranges: {},
    trainingAccuracy: 1,
    meanLossPct: 0,
    samples: 0,
    lossTolerance: 0.05,
    coverage: 1,
    infeasibleSamples: 0,
    trainingWithinTolerance: 1,
    model: { partitions: 1, depth: 0, folds: 0, grid: [] },
  };
}

/** A runtime configuration with throughput guards only, its guard function the tree walked (as the generated code computes it). */
export function throughputConfig(
  kernel: Kernel,
  spec: RuntimeConfig['spec'],
  manifest: RuntimeConfig['manifest'],
  plan: GuardPlan,
): RuntimeConfig {
  return {
    program: kernel.name,
    programHash: 'test',
    kernel: kernel.name,
    manifest,
    spec,
    objective: 'throughput',
    guards: { throughput: plan },
    params: kernel.params.map((p) => ({
      name: p.name,
      kind: p.type.format !== 'dense' ? 'sparse' : 'dense',
      shape: p.type.shape.map((d) => (d.kind === 'sym' ? d.name : d.value)),
    })),
    guard: { throughput: (f) => walkTree(plan.tree, (k) => f[k]).leaf },
  };
}

export async function gcnFixture(): Promise<Fixture> {
  const kernel = loopKernel(readFileSync(join(root, 'examples', 'gcn.dy'), 'utf8'), 'gcn.dy');
  const spec = specOf(readFileSync(join(root, 'examples', 'gcn.dy'), 'utf8'), 'gcn.dy');
  const graphs = new Map<string, CsrMatrix>();
  for (const g of REAL) graphs.set(g, graph(g));
  for (const [n, mk] of Object.entries(GENERATED)) graphs.set(n, mk());
  const profiles = [...graphs.values()].map((g) => gcnBinding(g, F, H, C));
  const samples = sampleBindings(profiles, { perProfile: 12, shapeDims: { A: ['n', 'n'] } });
  const plan = buildGuards(spec, system('paper-1g1f'), samples, goal('throughput'));
  const { binary, manifest } = await compileWasm(kernel);
  const config = throughputConfig(kernel, spec, manifest, plan);
  // GPU and FPGA stages run the CPU kernels in memories of their own (test/helpers/loopback.ts): these tests are about decisions.
  const backends = await wasmAndLoopbacks(binary, manifest);
  const wasm = backends.cpu;
  const W1s = new Map<number, DenseTensor>();
  const inputCache = new Map<string, Record<string, Tensor>>();
  const refCache = new Map<string, DenseTensor>();
  const inputs = (name: string, f = F): Record<string, Tensor> => {
    const key = `${name}:${f}`;
    let x = inputCache.get(key);
    if (!x) {
      const A = graphs.get(name)!;
      let W1 = W1s.get(f);
      if (!W1) W1s.set(f, (W1 = random([f, H], `W1:${f}`)));
      inputCache.set(key, (x = { A, X: random([A.rows, f], `X:${key}`), W1, W2: random([H, C], 'W2') }));
    }
    return x;
  };
  const reference = (name: string, f = F): DenseTensor => {
    const key = `${name}:${f}`;
    let y = refCache.get(key);
    if (!y) {
      const r = interpretKernel(kernel, { tensors: new Map(Object.entries(inputs(name, f))), scalars: new Map() });
      refCache.set(key, (y = r.outputs.get('Y') as DenseTensor));
    }
    return y;
  };
  return { kernel, config, plan, samples, wasm, backends, graphs, inputs, reference };
}

export function runtimeFor(fx: Fixture, o: Partial<RuntimeOptions> = {}): GuardedRuntime {
  return createGuardedRuntime(fx.config, { system: system('paper-1g1f'), backends: fx.backends, ...o });
}

/**
 * Worst |a - b| / (max(1, |b|) + 0.1 max|b|): the examples are f32, so
 * values agree to 1e-4 relative (test/wasm/compare.ts), except where f32 sums
 * of large terms cancel (1138_bus, olm1000 have entries up to 1e9): there the
 * error is bounded by the largest output, about 1e-7 of it as measured; the
 * caller asks for <= 1e-4, i.e. 1e-5 of max|b| at worst.
 */
export function maxRelErr(a: DenseTensor, b: DenseTensor): number {
  if (a.data.length !== b.data.length) return Infinity;
  let big = 0;
  for (const v of b.data) big = Math.max(big, Math.abs(v));
  let worst = 0;
  for (let i = 0; i < a.data.length; i++)
    worst = Math.max(worst, Math.abs(a.data[i]! - b.data[i]!) / (Math.max(1, Math.abs(b.data[i]!)) + 0.1 * big));
  return worst;
}
