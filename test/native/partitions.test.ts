/**
 * Every partition executes for real and right. For each example, a project
 * compiled for paper-2g2f (1 CPU, 2 GPUs, 2 FPGAs) with guards built from
 * real-matrix profiles, its libraries built with `dype build --emulate`
 * (CUDA on the CPU emulation, the HLS kernels in C simulation), runs on
 * wasm + cuda-emu + fpga-csim: every partition in plan.json (the table of
 * every objective's guards), a stage split
 * over both GPUs and over both FPGAs, and a pipeline across the three kinds;
 * each equals the reference interpreter within the dtype's tolerance
 * (test/wasm/compare.ts: f32 1e-4 relative), and each stage reports the
 * backend of its device. A stream of 8 inputs gives the outputs of one at a
 * time, across a partition switch. Breaking one stub of the emulated GPU
 * library makes the GPU stage's outputs wrong: the stage really ran there.
 * Needs g++ and the data (skipped, saying so, without them).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interpretKernel } from '../../interp/interpret.js';
import { stagePlans } from '../../runtime/engine/execute.js';
import { createGuardedRuntime } from '../../runtime/engine/runtime.js';
import type { RunResult, RuntimeConfig } from '../../runtime/engine/types.js';
import { closeBackends, KernelEngine, Slot, type StageBackends } from '../../runtime/exec/index.js';
import { walkTree } from '../../runtime/guards/tree.js';
import { partitionTable, type GuardPlans, type TablePartition } from '../../runtime/guards/objectives.js';
import type { GuardPlan } from '../../runtime/guards/types.js';
import { features } from '../../runtime/features/index.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { openProject, readProject } from '../../runtime/native/project.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { choicesOf, evaluateChoices, planPareto, type StageChoice } from '../../runtime/plan/dp.js';
import type { Objective, PlanSpec } from '../../runtime/plan/types.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import type { Tensor } from '../../runtime/tensor.js';
import type { WasmManifest } from '../../runtime/wasm/manifest.js';
import { cleanup, example, freshDir, runCliAsync } from '../helpers/cli.js';
import { exampleInputs } from '../helpers/example-inputs.js';
import { expectClose, loopKernel, TOL_F32, TOL_F64, toMaps } from '../wasm/compare.js';
import { goal, STEADY } from '../helpers/goal.js';

const M = join(import.meta.dirname, '..', '..', '..', 'shared', 'data', 'matrices');
const HAVE = existsSync(M) && spawnSync('g++', ['--version']).status === 0;
const EXAMPLES = ['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp'];
const MATRICES = ['karate.mtx', 'Erdos971.mtx'];
/** Dims and scalars the guards are built for (the inputs' widths: test/helpers/example-inputs.ts). */
const PROFILE: Record<string, string[]> = {
  spmv: [],
  spmm: ['k=4'],
  gcn: ['f=8', 'h=8', 'c=4'],
  attention: ['d=4'],
  pagerank: ['d=0.85'],
  sssp: [],
};

interface Project {
  dir: string;
  spec: PlanSpec;
  manifest: WasmManifest;
  /** The initial objective's guards. */
  guards: GuardPlan;
  /** Every objective's partitions. */
  partitions: TablePartition[];
  sys: SystemSpec;
  backends: StageBackends;
}

const root = freshDir('dype-partitions-');
const projects = new Map<string, Project>();
afterAll(() => {
  for (const p of projects.values()) closeBackends(p.backends);
  cleanup(root);
});

beforeAll(async () => {
  if (!HAVE) return;
  for (const ex of EXAMPLES) {
    const dir = join(root, ex);
    const profiles = [...MATRICES.map((m) => `A=${join(M, m)}`), ...PROFILE[ex]!].flatMap((p) => ['--profile', p]);
    const c = await runCliAsync(
      [
        'compile',
        example(`${ex}.dy`),
        '-o',
        dir,
        '--targets',
        'wasm,cuda,hls,runtime',
        '--system',
        'paper-2g2f',
        ...profiles,
      ],
      { timeoutMs: 120_000 },
    );
    if (c.status !== 0) throw new Error(`compile ${ex}: ${c.stderr}`);
    const b = await runCliAsync(['build', dir, '--emulate'], { timeoutMs: 300_000 });
    if (b.status !== 0) throw new Error(`build ${ex}: ${b.stderr}`);
    const plan = JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')) as {
      system: SystemSpec;
      kernels: Record<
        string,
        { spec: PlanSpec; guards: GuardPlans; objective: Objective; partitions: { id: number; label: string }[] }
      >;
    };
    const k = plan.kernels[ex]!;
    const table = partitionTable(k.guards, k.objective);
    expect(table.partitions.map((p) => ({ id: p.id, label: p.label }))).toEqual(
      k.partitions.map((p) => ({ id: p.id, label: p.label })),
    );
    const manifest = JSON.parse(readFileSync(join(dir, 'wasm', `${ex}.manifest.json`), 'utf8')) as WasmManifest;
    projects.set(ex, {
      dir,
      spec: k.spec,
      manifest,
      guards: k.guards[k.objective]!,
      partitions: table.partitions,
      sys: plan.system,
      backends: await openProject(dir, plan.system, { emulate: true, kernel: ex }),
    });
  }
}, 1_500_000);

function reference(
  ex: string,
  args: { tensors: Map<string, Tensor>; scalars: Map<string, number> },
): Map<string, Tensor> {
  return interpretKernel(loopKernel(readFileSync(example(`${ex}.dy`), 'utf8'), `${ex}.dy`), args).outputs;
}

function expectReference(ex: string, got: Map<string, Tensor>, want: Map<string, Tensor>, what: string): void {
  const k = loopKernel(readFileSync(example(`${ex}.dy`), 'utf8'), `${ex}.dy`);
  for (const [n, t] of want) {
    const dt = k.results.find((r) => r.name === n)!.type.dtype;
    expectClose(got.get(n)!, t, dt === 'f32' ? TOL_F32 : dt === 'f64' ? TOL_F64 : 0, `${what}: ${n}`);
  }
}

/** Partitions beyond plan.json's: all ops split over both GPUs, over both FPGAs, and the cut points dealt out to gpu, fpga, cpu, gpu, fpga. */
function extraPartitions(p: Project): { name: string; choices: StageChoice[] }[] {
  const n = p.spec.ops.length;
  // A stage boundary may not fall inside a repeat region.
  const cuts = p.spec.ops
    .map((_, i) => i)
    .filter(
      (i) => i > 0 && (p.spec.ops[i]!.group === undefined || p.spec.ops[i - 1]!.group?.id !== p.spec.ops[i]!.group.id),
    );
  const bounds = [0, ...cuts.slice(0, 4), n];
  const kinds = ['gpu', 'fpga', 'cpu', 'gpu', 'fpga'];
  return [
    { name: 'cpu', choices: [{ start: 0, end: n, device: 'cpu', count: 1 }] },
    { name: 'gpu*2 (split)', choices: [{ start: 0, end: n, device: 'gpu', count: 2 }] },
    { name: 'fpga*2 (split)', choices: [{ start: 0, end: n, device: 'fpga', count: 2 }] },
    {
      name: 'pipeline over gpu, fpga, cpu',
      choices: bounds.slice(1).map((end, i) => ({ start: bounds[i]!, end, device: kinds[i]!, count: 1 })),
    },
  ];
}

describe.skipIf(!HAVE)('partitions of every example on wasm + cuda-emu + fpga-csim', () => {
  for (const ex of EXAMPLES)
    it(`${ex}: every partition in plan.json, split stages and a three-kind pipeline equal the reference`, async () => {
      const p = projects.get(ex)!;
      const engine = new KernelEngine(p.manifest, p.backends, p.sys);
      const slot = new Slot();
      const seen = new Set<string>();
      const parts = [
        ...p.partitions.map((g) => ({
          name: `plan.json partition ${g.id} (${g.label}; ${g.objectives.join(', ')})`,
          choices: g.choices,
        })),
        ...extraPartitions(p),
      ];
      for (const file of MATRICES) {
        const A = toCsr(loadMatrix(join(M, file)));
        const args = toMaps(exampleInputs(ex, A));
        const want = reference(ex, args);
        const problem = bindProblem(p.spec, {
          sparse: new Map([['A', features(A, 2)]]),
          dims: engine.L.bindDims(args),
          scalars: args.scalars,
        });
        for (const part of parts) {
          const mapping = evaluateChoices(p.sys, problem, part.choices, STEADY);
          expect(mapping, `${ex} on ${file}: ${part.name} is feasible`).toBeDefined();
          const plans = stagePlans(p.sys, p.spec, part, mapping!);
          engine.begin(slot, engine.prepare(args));
          const runs = [];
          for (const st of plans) runs.push(await engine.runStage(slot, st));
          const got = await engine.collect(slot);
          engine.end(slot);
          expectReference(ex, got, want, `${ex} on ${file}, ${part.name}`);
          runs.forEach((r, i) => {
            const kind = plans[i]!.kind;
            expect(r.backend, `${part.name}, stage ${i}`).toBe(
              kind === 'cpu' ? 'wasm' : kind === 'gpu' ? 'cuda-emu' : 'fpga-csim',
            );
            expect(r.devices).toEqual(plans[i]!.devices);
            seen.add(r.backend);
          });
        }
      }
      expect([...seen].sort()).toEqual(['cuda-emu', 'fpga-csim', 'wasm']);
      engine.close([slot]);
    }, 600_000);
});

describe.skipIf(!HAVE)('streams and switches', () => {
  it('gcn: a stream of 8 inputs through a pipeline gives the outputs of one at a time; a switch mid-stream keeps them right', async () => {
    const p = projects.get('gcn')!;
    const inputs = MATRICES.map((f) => exampleInputs('gcn', toCsr(loadMatrix(join(M, f)))));
    const pipeline = extraPartitions(p).find((x) => x.name.startsWith('pipeline'))!;
    // Guards that put the small graph on the three-kind pipeline and the larger on the planner's best
    // mapping for it, on a system whose GPUs are too small to hold the larger graph: the pipeline
    // cannot run it, so the runtime switches at once (and back is never needed).
    const sys: SystemSpec = {
      ...p.sys,
      devices: p.sys.devices.map((d) => (d.kind === 'gpu' ? { ...d, memoryGB: 2e-5 } : d)),
    };
    const engine = new KernelEngine(p.manifest, p.backends, sys);
    const problemOf = (i: number) =>
      bindProblem(p.spec, {
        sparse: new Map([['A', features(toCsr(loadMatrix(join(M, MATRICES[i]!))), 2)]]),
        dims: engine.L.bindDims(toMaps(inputs[i]!)),
        scalars: new Map(),
      });
    expect(
      evaluateChoices(sys, problemOf(0), pipeline.choices, STEADY),
      'the pipeline holds the small graph',
    ).toBeDefined();
    expect(evaluateChoices(sys, problemOf(1), pipeline.choices, STEADY), 'but not the larger').toBeUndefined();
    const best = choicesOf(problemOf(1), planPareto(sys, problemOf(1), goal('throughput')).pareto[0]!);
    const guards: GuardPlan = {
      ...p.guards,
      partitions: [
        { id: 0, choices: pipeline.choices, label: 'pipeline', fallbacks: [] },
        { id: 1, choices: best, label: 'best for Erdos971', fallbacks: [] },
      ],
      tree: { feature: 'A.rows', tier: 0, threshold: 100, le: { leaf: 0 }, gt: { leaf: 1 } },
      ranges: {},
    };
    const cfg: RuntimeConfig = {
      program: 'gcn',
      // The project's backends carry its hash, which the runtime checks against its own (DY3044).
      programHash: readProject(p.dir).programHash,
      kernel: 'gcn',
      manifest: p.manifest,
      spec: p.spec,
      objective: 'throughput',
      guards: { throughput: guards },
      params: [
        { name: 'A', kind: 'sparse', shape: ['n', 'n'] },
        { name: 'X', kind: 'dense', shape: ['n', 'f'] },
        { name: 'W1', kind: 'dense', shape: ['f', 'h'] },
        { name: 'W2', kind: 'dense', shape: ['h', 'c'] },
      ],
      guard: { throughput: (f) => walkTree(guards.tree, (k) => f[k]).leaf },
    };
    const seq = [0, 0, 0, 0, 1, 1, 1, 1].map((g, i) => ({
      inputs: inputs[g]!.tensors as Record<string, Tensor>,
      name: `${MATRICES[g]} #${i}`,
    }));
    const one = createGuardedRuntime(cfg, { system: sys, backends: p.backends });
    const single: RunResult[] = [];
    for (const x of seq) single.push(await one.run(x.inputs, x.name));
    const rt = createGuardedRuntime(cfg, { system: sys, backends: p.backends });
    const streamed = await rt.stream(seq);
    expect(streamed.results.map((r) => r.log.input)).toEqual(seq.map((x) => x.name));
    expect(rt.stats().switches).toBe(1);
    expect(streamed.results[4]!.reason).toMatch(/cannot run this input/);
    expect(streamed.results.map((r) => r.partition.id)).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    streamed.results.forEach((r, i) => {
      for (const [n, t] of single[i]!.outputs)
        expectClose(
          r.outputs.get(n)!,
          t,
          0,
          `stream ${seq[i]!.name}: ${n} (same partitions, same kernels: bit for bit)`,
        );
      expectReference('gcn', r.outputs, reference('gcn', toMaps(inputs[i < 4 ? 0 : 1]!)), `stream ${seq[i]!.name}`);
    });
    expect(streamed.results[0]!.stages.map((s) => s.backend)).toEqual(
      pipeline.choices.map((c) => (c.device === 'cpu' ? 'wasm' : c.device === 'gpu' ? 'cuda-emu' : 'fpga-csim')),
    );
    one.close();
    rt.close();
  }, 600_000);
});

describe.skipIf(!HAVE)('the GPU stage really runs in the library', () => {
  it('a wrong result in one stub of the emulated CUDA library makes the GPU stage\u2019s outputs wrong', async () => {
    const p = projects.get('spmv')!;
    const dir = join(root, 'spmv-broken');
    rmSync(dir, { recursive: true, force: true });
    const c = await runCliAsync(['compile', example('spmv.dy'), '-o', dir, '--targets', 'wasm,cuda,hls'], {
      timeoutMs: 120_000,
    });
    expect(c.status).toBe(0);
    // The warp-per-row kernel stores twice its sum: one stub of the library computes wrong.
    const cu = join(dir, 'cuda', 'spmv.cu');
    const text = readFileSync(cu, 'utf8');
    const broken = text.replace(
      /(__global__ void[^{]*spmv_op0_warp_per_row[\s\S]*?y\[[^\]]+\] = )([^;]+);/,
      '$1($2) * 2.0f;',
    );
    expect(broken).not.toBe(text);
    writeFileSync(cu, broken);
    const b = await runCliAsync(['build', dir, '--emulate'], { timeoutMs: 300_000 });
    expect(b.status, b.stderr).toBe(0);
    copyFileSync(join(p.dir, 'project.json'), join(dir, 'project.json'));
    const backends = await openProject(dir, p.sys, { emulate: true, kernel: 'spmv' });
    const engine = new KernelEngine(p.manifest, backends, p.sys);
    const A = toCsr(loadMatrix(join(M, 'Erdos971.mtx')));
    const args = toMaps(exampleInputs('spmv', A));
    const want = reference('spmv', args);
    const problem = bindProblem(p.spec, {
      sparse: new Map([['A', features(A, 2)]]),
      dims: engine.L.bindDims(args),
      scalars: args.scalars,
    });
    const run = async (impl: string): Promise<Tensor> => {
      const slot = new Slot();
      const part = { choices: [{ start: 0, end: 1, device: 'gpu', count: 1 }] };
      const plans = stagePlans(p.sys, p.spec, part, evaluateChoices(p.sys, problem, part.choices, STEADY)!).map(
        (s) => ({ ...s, impls: { op0: impl } }),
      );
      engine.begin(slot, engine.prepare(args));
      await engine.runStage(slot, plans[0]!);
      const y = (await engine.collect(slot)).get('y')!;
      engine.end(slot);
      return y;
    };
    const wrong = await run('warp-per-row');
    expect(() => expectClose(wrong, want.get('y')!, TOL_F32, 'broken warp-per-row')).toThrow(/values differ/);
    // The other variants of the same library are untouched.
    expectClose(await run('row-per-thread'), want.get('y')!, TOL_F32, 'row-per-thread of the broken library');
    closeBackends(backends);
  }, 600_000);
});
