/**
 * Stage-by-stage execution (runtime/exec, runtime/native), on the gcn
 * project built with `dype build --emulate` (or, with --real on a host with
 * the devices, `dype build --real`: the runtime's GPU path on a GPU):
 *   (1) the cost of one native call through koffi: a direct call of the
 *       ABI (device_count), a launch over an empty row range, and the same
 *       off the main thread, against a plain JavaScript call;
 *   (2) host to emulated-device copy throughput (upload, download) of the
 *       CUDA emulation and the FPGA C simulation, against TypedArray.set in
 *       JavaScript (a memcpy) at the same sizes;
 *   (3) per stage, measured (median of RUNS warm runs) against predicted,
 *       for partitions over wasm, cuda-emu and fpga-csim on real graphs; the
 *       system is this machine's calibrated CPU beside paper-1g1f's GPU and
 *       FPGA, so CPU stages compare like with like, and GPU/FPGA stages
 *       show how far the emulation is from the device the model describes;
 *   (4) a stream of STREAM inputs through two- and three-stage pipelines:
 *       measured makespan against the sum of its stages' times and against
 *       the same inputs one at a time.
 * Every partition's result is checked against the first partition's (all on
 * the CPU, wasm): a relative difference over 1e-4 fails the run (exit 1).
 *   npm run build && node dist/bench/exec.js   (writes bench/results/exec.json)
 * Options: --real (the real libraries; partitions and streams over devices
 * the system lacks are left out), --system FILE (the system of the
 * predictions, default this machine's CPU beside paper-1g1f's GPU and FPGA),
 * --matrices DIR (default ../shared/data/matrices), --graphs a,b,...,
 * --threads T (wasm stages), --out DIR (default bench/results).
 */
import { fixedGuards } from '../runtime/guards/build.js';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parsePartition } from '../cli/partition-arg.js';
import { stagePlans } from '../runtime/engine/execute.js';
import { createGuardedRuntime } from '../runtime/engine/runtime.js';
import type { RuntimeConfig } from '../runtime/engine/types.js';
import { closeBackends, KernelEngine, Slot, type StageBackend } from '../runtime/exec/index.js';
import { features } from '../runtime/features/index.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import { NativeStageBackend } from '../runtime/native/backend.js';
import { PATTERN_FIGURES } from '../runtime/native/abi.js';
import { openProject, readProject } from '../runtime/native/project.js';
import { bindProblem } from '../runtime/plan/bind.js';
import { evaluateChoices } from '../runtime/plan/dp.js';
import type { PlanSpec } from '../runtime/plan/types.js';
import { Rng, seedFor } from '../runtime/random.js';
import { loadSystemFile } from '../runtime/system/load.js';
import type { SystemSpec } from '../runtime/system/types.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../runtime/tensor.js';
import type { WasmManifest } from '../runtime/wasm/manifest.js';
import { DEFAULT_ENERGY_SCOPE, DEFAULT_STREAM_LENGTH, type PlanGoal } from '../runtime/plan/figures.js';

/** The planner's documented defaults (the goal `dype compile` gives the guards when told nothing). */
const GOAL: PlanGoal = {
  objective: 'throughput',
  energyScope: DEFAULT_ENERGY_SCOPE,
  streamLength: DEFAULT_STREAM_LENGTH,
};

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: opt } = parseArgs({
  options: {
    real: { type: 'boolean', default: false },
    system: { type: 'string' },
    matrices: { type: 'string', default: join(root, '..', 'shared', 'data', 'matrices') },
    graphs: { type: 'string', default: 'jazz.mtx,cora.cites,ca-GrQc.mtx' },
    threads: { type: 'string', default: '2' },
    out: { type: 'string', default: join(root, 'bench', 'results') },
  },
});
const emulate = !opt.real;
const M = resolve(opt.matrices);
const out = resolve(opt.out);
const project = join(out, 'exec-gcn');
const RUNS = 5;
const STREAM = 16;
const F = 16;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const cli = (args: string[]): void => {
  const r = spawnSync(process.execPath, [join(root, 'dist', 'cli', 'main.js'), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`dype ${args.join(' ')}: ${r.stderr}`);
};

mkdirSync(out, { recursive: true });
rmSync(project, { recursive: true, force: true });
function defaultSystem(): SystemSpec {
  const here = loadSystemFile(join(root, 'systems', 'this-machine.json'));
  const paper = loadSystemFile(join(root, 'systems', 'paper-1g1f.json'));
  return {
    ...paper,
    name: 'this CPU + paper-1g1f GPU and FPGA',
    devices: [here.devices[0]!, ...paper.devices.filter((d) => d.kind !== 'cpu')],
  };
}
const sys: SystemSpec = opt.system ? loadSystemFile(resolve(opt.system)) : defaultSystem();
const kinds = new Set(sys.devices.map((d) => d.kind));
const ids = new Set(sys.devices.map((d) => d.id));
const targets = ['wasm', ...(kinds.has('gpu') ? ['cuda'] : []), ...(kinds.has('fpga') ? ['hls'] : [])];
cli(['compile', join(root, 'examples', 'gcn.dy'), '-o', project, '--targets', targets.join(',')]);
cli(['build', project, emulate ? '--emulate' : '--real']);
const info = readProject(project);
const backends = await openProject(project, sys, { emulate, kernel: 'gcn', threads: Number(opt.threads) });
/** Whether every stage of a partition text names a device of this system. */
const runsHere = (text: string): boolean =>
  text.split('|').every((st) => ids.has(st.split(':')[0]!.replace(/\*.*/, '')));
const manifest = JSON.parse(readFileSync(join(project, 'wasm', 'gcn.manifest.json'), 'utf8')) as WasmManifest;
const { plannedSpec } = await import('../codegen/implementations.js');
const { compileSource } = await import('../frontend/compile.js');
const { DEFAULT_PIPELINE, runPipeline } = await import('../passes/index.js');
const spec: PlanSpec = plannedSpec(
  runPipeline(compileSource(readFileSync(join(root, 'examples', 'gcn.dy'), 'utf8'), 'gcn.dy').module!, {
    passes: DEFAULT_PIPELINE,
  }),
  'gcn.dy',
  'gcn',
);

// ---- (1) call cost ----
const timeCalls = (n: number, f: () => unknown): number => {
  for (let i = 0; i < 1000; i++) f();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) f();
  return ((performance.now() - t0) / n) * 1e3;
};
const natives = (['gpu', 'fpga'] as const).flatMap((k) => (backends[k] ? [backends[k] as NativeStageBackend] : []));
const gpu = backends.gpu as NativeStageBackend;
const noop = (x: number): number => x + 1;
const calls: Record<string, number> = {
  'JavaScript function call (baseline)': timeCalls(1e6, () => noop(1)),
};
for (const be of natives)
  calls[`device_count, direct (${be.name})`] = timeCalls(2e5, () => be.lib.call('device_count'));
{
  // A launch of gcn's op1 over the empty row range [0, 0): the whole launch path, no work.
  const bufs = manifest.ops[1]!.buffers.map(() => gpu.alloc(0, 64));
  const h = gpu.lookup('gcn', 'op1', 'row-per-thread');
  const sizes = [...manifest.ops[1]!.sizes.map(() => 1), ...PATTERN_FIGURES.map(() => 1)];
  calls[`launch of an empty range, through the stage backend (${gpu.name})`] = timeCalls(1e5, () =>
    gpu.launch(0, h, bufs, sizes, 0, 0),
  );
  let n = 0;
  const t0 = performance.now();
  for (; n < 2000; n++) await gpu.lib.callAsync('device_count');
  calls[`device_count, off the main thread (koffi async, ${gpu.name})`] = ((performance.now() - t0) / n) * 1e3;
  bufs.forEach((b) => gpu.free(b));
}

// ---- (2) copy throughput ----
const copies: { backend: string; bytes: number; uploadGBs: number; downloadGBs: number; jsSetGBs: number }[] = [];
for (const be of natives as StageBackend[]) {
  for (const bytes of [4 << 10, 256 << 10, 16 << 20, ...(emulate ? [] : [256 << 20])]) {
    const src = new Uint8Array(bytes).fill(7);
    const dst = new Uint8Array(bytes);
    const buf = be.alloc(0, bytes);
    const reps = Math.max(5, Math.min(2000, Math.floor((256 << 20) / bytes)));
    const time = async (f: () => Promise<void> | void): Promise<number> => {
      const ts: number[] = [];
      for (let r = 0; r < 5; r++) {
        const t0 = performance.now();
        for (let i = 0; i < reps; i++) await f();
        ts.push((performance.now() - t0) / reps);
      }
      return bytes / (median(ts) * 1e6);
    };
    copies.push({
      backend: be.name,
      bytes,
      uploadGBs: await time(() => be.upload(buf, 0, src)),
      downloadGBs: await time(() => be.download(buf, 0, dst)),
      jsSetGBs: await time(() => dst.set(src)),
    });
    be.free(buf);
  }
}

// ---- inputs ----
function random(shape: number[], name: string): DenseTensor {
  const rng = new Rng(seedFor(7, name));
  const data = new Float64Array(shape[0]! * shape[1]!);
  for (let k = 0; k < data.length; k++) data[k] = rng.uniform(-1, 1);
  return { format: 'dense', shape, data };
}
const W1 = random([F, F], 'W1');
const W2 = random([F, F], 'W2');
const inputsOf = (A: CsrMatrix) => ({
  tensors: new Map<string, Tensor>([
    ['A', A],
    ['X', random([A.rows, F], 'X')],
    ['W1', W1],
    ['W2', W2],
  ]),
  scalars: new Map<string, number>(),
});

// ---- (3) measured against predicted, per stage ----
// The first is all on the CPU (wasm): every other partition's result is checked against it.
const PARTITIONS = [
  'cpu:op0-op3',
  'gpu:op0-op3',
  'fpga:op0-op3',
  'cpu:op0|gpu:op1-op3',
  'gpu:op0-op1|fpga:op2-op3',
  'gpu:op0-op1|cpu:op2-op3',
].filter(runsHere);
const GRAPHS = opt.graphs.split(',');
const TOLERANCE = 1e-4;
/** max |a - b| over max |b|, over every output. */
function difference(a: Map<string, Tensor>, b: Map<string, Tensor>): number {
  let err = 0;
  for (const [name, t] of b) {
    const x = a.get(name)!;
    if (t.format !== 'dense' || x.format !== 'dense') throw new Error(`${name}: a dense result was expected`);
    let scale = 1e-30;
    for (const v of t.data) scale = Math.max(scale, Math.abs(v));
    for (let k = 0; k < t.data.length; k++) err = Math.max(err, Math.abs(x.data[k]! - t.data[k]!) / scale);
  }
  return err;
}
const engine = new KernelEngine(manifest, backends, sys);
const slot = new Slot();
const stages: {
  graph: string;
  partition: string;
  stage: number;
  backend: string;
  measuredMs: number;
  predictedMs: number;
  bytesIn: number;
  /** The result's relative difference from the first partition's (wasm, all on the CPU). */
  difference: number;
}[] = [];
let failed = false;
for (const g of GRAPHS) {
  const A = toCsr(loadMatrix(join(M, g)));
  const args = inputsOf(A);
  const problem = bindProblem(spec, {
    sparse: new Map([['A', features(A, 2)]]),
    dims: engine.L.bindDims(args),
    scalars: new Map(),
  });
  let first: Map<string, Tensor> | undefined;
  for (const text of PARTITIONS) {
    const choices = parsePartition(text, spec, sys);
    const m = evaluateChoices(sys, problem, choices, GOAL)!;
    const plans = stagePlans(sys, spec, { choices }, m);
    const per: number[][] = plans.map(() => []);
    let bytes: number[] = [];
    let diff = 0;
    for (let r = 0; r <= RUNS; r++) {
      engine.begin(slot, engine.prepare(args));
      const runs = [];
      for (const p of plans) runs.push(await engine.runStage(slot, p));
      const result = await engine.collect(slot);
      engine.end(slot);
      first ??= result;
      diff = Math.max(diff, difference(result, first));
      if (r === 0) continue; // warm-up: first copies and first-call setup
      runs.forEach((x, i) => per[i]!.push(x.ms));
      bytes = runs.map((x) => x.bytesIn);
    }
    plans.forEach((p, i) =>
      stages.push({
        graph: g,
        partition: text,
        stage: i,
        backend: backends[p.kind]!.name,
        measuredMs: median(per[i]!),
        predictedMs: m.stages[i]!.timeMs,
        bytesIn: bytes[i]!,
        difference: diff,
      }),
    );
    if (diff > TOLERANCE) {
      console.error(
        `${g} ${text}: the result differs from ${PARTITIONS[0]}'s by ${diff.toExponential(2)} (over ${TOLERANCE})`,
      );
      failed = true;
    }
  }
}
engine.close([slot]);

// ---- (4) streams ----
const streams: {
  graph: string;
  partition: string;
  inputs: number;
  oneAtATimeMs: number;
  streamWallMs: number;
  stageSumMs: number;
  overlap: number;
}[] = [];
for (const [g, text] of (
  [
    ['cora.cites', 'gpu:op0-op1|fpga:op2-op3'],
    ['cora.cites', 'fpga:op0|gpu:op1|cpu:op2-op3'],
    ['ca-GrQc.mtx', 'gpu:op0-op1|fpga:op2-op3'],
    ['cora.cites', 'cpu:op0|gpu:op1-op3'],
    ['ca-GrQc.mtx', 'cpu:op0|gpu:op1-op3'],
    ['facebook_combined.txt', 'cpu:op0|gpu:op1-op3'],
  ] as const
).filter(([g, text]) => GRAPHS.includes(g) && runsHere(text) && (!kinds.has('fpga') || text.includes('fpga')))) {
  const choices = parsePartition(text, spec, sys);
  const guards = fixedGuards(GOAL, choices, text);
  const cfg: RuntimeConfig = {
    program: 'gcn',
    programHash: info.programHash,
    kernel: 'gcn',
    manifest,
    spec,
    objective: guards.objective,
    guards: { [guards.objective]: guards },
    params: [
      { name: 'A', kind: 'sparse', shape: ['n', 'n'] },
      { name: 'X', kind: 'dense', shape: ['n', 'f'] },
      { name: 'W1', kind: 'dense', shape: ['f', 'h'] },
      { name: 'W2', kind: 'dense', shape: ['h', 'c'] },
    ],
    guard: { [guards.objective]: () => 0 },
  };
  const rt = createGuardedRuntime(cfg, { system: sys, backends });
  const A = toCsr(loadMatrix(join(M, g)));
  const x = Object.fromEntries(inputsOf(A).tensors);
  await rt.run(x);
  const t0 = performance.now();
  for (let i = 0; i < STREAM; i++) await rt.run(x);
  const single = performance.now() - t0;
  await rt.stream([x]);
  const s = await rt.stream(Array.from({ length: STREAM }, (_, i) => ({ inputs: x, name: `#${i}` })));
  streams.push({
    graph: g,
    partition: text,
    inputs: STREAM,
    oneAtATimeMs: single,
    streamWallMs: s.wallMs,
    stageSumMs: s.stageSumMs,
    overlap: 1 - s.wallMs / s.stageSumMs,
  });
  rt.close();
}
closeBackends(backends);

// ---- report ----
const load = loadavg()[0]!;
console.log(`load average ${load.toFixed(2)}; system for predictions: ${sys.name}\n`);
console.log('one native call (us)');
for (const [k, v] of Object.entries(calls)) console.log(`  ${k.padEnd(52)} ${v.toFixed(3)}`);
console.log(`\nhost <-> ${emulate ? 'emulated ' : ''}device copies (GB/s; baseline: TypedArray.set in JavaScript)`);
console.log('  backend     bytes      upload  download  js set');
for (const c of copies)
  console.log(
    `  ${c.backend.padEnd(10)} ${String(c.bytes).padStart(9)}  ${c.uploadGBs.toFixed(2).padStart(6)}  ${c.downloadGBs.toFixed(2).padStart(8)}  ${c.jsSetGBs.toFixed(2).padStart(6)}`,
  );
console.log(`\nper stage: measured (median of ${RUNS} warm runs) against predicted`);
console.log(
  '  graph         partition                   stage backend     measured ms  predicted ms  ratio  difference',
);
for (const s of stages)
  console.log(
    `  ${s.graph.padEnd(13)} ${s.partition.padEnd(27)} ${String(s.stage).padStart(5)} ${s.backend.padEnd(10)} ${s.measuredMs.toFixed(3).padStart(11)}  ${s.predictedMs.toFixed(4).padStart(12)}  ${(s.measuredMs / s.predictedMs).toFixed(1).padStart(6)}  ${s.difference.toExponential(1).padStart(10)}`,
  );
console.log(`\nstreams of ${STREAM} inputs (measured)`);
console.log('  graph         partition                      one at a time  stream wall  sum of stages  overlap');
for (const s of streams)
  console.log(
    `  ${s.graph.padEnd(13)} ${s.partition.padEnd(30)} ${s.oneAtATimeMs.toFixed(1).padStart(13)}  ${s.streamWallMs.toFixed(1).padStart(11)}  ${s.stageSumMs.toFixed(1).padStart(13)}  ${(s.overlap * 100).toFixed(0).padStart(6)}%`,
  );
writeFileSync(
  join(out, 'exec.json'),
  JSON.stringify(
    {
      date: new Date().toISOString(),
      load,
      system: sys.name,
      libraries: emulate ? 'emulated' : 'real',
      runs: RUNS,
      calls,
      copies,
      stages,
      streams,
    },
    null,
    2,
  ),
);
console.log(`\nwrote ${join(out, 'exec.json')}`);
if (failed) process.exit(1);
