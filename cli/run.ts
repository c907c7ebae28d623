/**
 * `dype run`: compile, bind inputs, execute with the chosen backend, time the
 * kernel (one warm-up, then the median of --repeat runs), write outputs.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { plannedSpec } from '../codegen/implementations.js';
import { checkInputs, type KernelInputs } from '../interp/bind.js';
import { interpretKernel, type InterpretResult } from '../interp/interpret.js';
import type { Kernel } from '../ir/module.js';
import { InputError } from '../runtime/errors.js';
import type { Tensor } from '../runtime/tensor.js';
import { cpuBackendOf, systemForCpuBackend } from '../runtime/system/cpu-backend.js';
import type { CpuBackendName } from '../runtime/system/types.js';
import { DEFAULT_RUN_SYSTEM, MAX_REPEAT } from './defaults.js';
import { positiveInt } from './int-option.js';
import { CliError, usage } from './errors.js';
import { tier0 } from '../runtime/features/index.js';
import { loadInputs, parseAssignments, parseScalars } from './inputs.js';
import { outFiles, outputDecl, summarize, summaryText, writeAllAtomic } from './outputs.js';
import { boundDims, loadSystem, parseGoal, planFor, sparseFeatures, type GoalOptions } from './planning.js';
import { loadProgram, optimise, selectKernel } from './program.js';
import { progress } from './progress.js';
import { capThreads, opThreads, type OpThreads } from './threads.js';
import { snakeKeys, snakeValues } from './json-keys.js';
import { workersOver, workersText } from './workers.js';
import type { WasmExecutor, WorkerPlacement } from '../runtime/wasm/executor.js';
import { runTrace } from './run-trace.js';
import { repeatsJson, repeatText } from './repeats.js';
import { expectedTrips } from '../runtime/plan/bind.js';

export interface RunOptions extends GoalOptions {
  kernel?: string;
  input: string[];
  out: string[];
  param: string[];
  /** auto (the default without --project): native where a C compiler exists, else wasm with a note. */
  backend?: string;
  /** --project DIR: run a compiled project's partition stage by stage (cli/run-project.ts). */
  project?: string;
  /** --partition auto|ID|"<stages>" (with --project). */
  partition?: string;
  /** --emulate: the emulated GPU/FPGA builds may serve their stages. */
  emulate?: boolean;
  /** --history FILE (with --project): append every op run to this per-machine history. */
  history?: string;
  threads?: string;
  repeat?: string;
  json?: boolean;
  system?: string;
  powerCap?: string;
  p2p?: boolean;
  /** false with --no-cache: compile the kernel afresh (wasm module or native library), neither reading nor writing the compile cache. */
  cache?: boolean;
  /** --trace FILE: Chrome trace-event timeline of the predicted stages and the measured runs. */
  trace?: string;
}

export const BACKENDS = ['auto', 'native', 'wasm', 'reference'] as const;

export { DEFAULT_RUN_SYSTEM };

/** `--repeat N` of `dype run` (with or without --project): 1 when absent. */
export function parseRepeat(v: string | undefined): number {
  return v === undefined ? 1 : positiveInt('--repeat', v, 1, MAX_REPEAT);
}

/** The median and the minimum of the run times (any number of them: no argument spread). */
export function timingOf(times: ArrayLike<number>): { runs: number; median_ms: number; min_ms: number } {
  const s = Float64Array.from(times).sort();
  const m = s.length >> 1;
  let min = Infinity;
  for (let i = 0; i < s.length; i++) if (s[i]! < min) min = s[i]!;
  return { runs: s.length, median_ms: s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2, min_ms: min };
}

export async function runCommand(file: string, opts: RunOptions, stdout: (s: string) => void): Promise<void> {
  if (opts.project !== undefined)
    return (await import('./run-project.js')).runProjectCommand(file, { ...opts, project: opts.project }, stdout);
  const projectOnly =
    opts.partition !== undefined
      ? '--partition'
      : opts.emulate
        ? '--emulate'
        : opts.history !== undefined
          ? '--history'
          : undefined;
  if (projectOnly)
    throw usage(
      `${projectOnly} needs --project DIR (a project compiled by dype compile, its libraries built by dype build)`,
    );
  const asked = opts.backend ?? 'auto';
  if (!(BACKENDS as readonly string[]).includes(asked))
    throw usage(`backend '${asked}' is not available in this build; available: ${BACKENDS.join(', ')}`);
  const o = { ...opts, backend: asked };
  const repeat = parseRepeat(o.repeat);
  const threadsAsked = o.threads !== undefined ? positiveInt('--threads', o.threads, 1) : undefined;
  // wasm, native: --threads, default all cores (results are bit-identical for any count); reference: one thread.
  const threads =
    o.backend !== 'reference' ? (threadsAsked !== undefined ? capThreads(threadsAsked) : availableParallelism()) : 1;
  const inputs = parseAssignments(o.input, '--input');
  const outs = parseAssignments(o.out, '--out');
  const params = parseAssignments(o.param, '--param');
  const targets = outs.map((a) => resolve(a.value));
  const clash = targets.findIndex((t, i) => targets.indexOf(t) !== i);
  if (clash >= 0)
    throw usage(
      `--out ${outs[clash]!.name} and --out ${outs[targets.indexOf(targets[clash]!)]!.name} name the same file '${outs[clash]!.value}'`,
    );
  const traceClash = o.trace !== undefined ? targets.indexOf(resolve(o.trace)) : -1;
  if (traceClash >= 0) throw usage(`--trace and --out ${outs[traceClash]!.name} name the same file '${o.trace!}'`);
  // The trace is JSON: written over an input file, it would replace the matrix the next run reads.
  const traceOverInput =
    o.trace !== undefined
      ? inputs.find((a) => !a.value.startsWith('@') && resolve(a.value) === resolve(o.trace!))
      : undefined;
  if (traceOverInput)
    throw usage(
      `--trace and --input ${traceOverInput.name} name the same file '${o.trace!}': the trace would replace the input`,
    );
  const program = loadProgram(file);
  const module = optimise(program);
  const kernel = selectKernel(module, file, o.kernel);
  // Every --out name is checked before any work (DY3014).
  for (const a of outs) outputDecl(kernel, a.name);
  const scalars = parseScalars(kernel, params);
  const loaded = loadInputs(kernel, inputs, scalars);
  const tensors = new Map<string, Tensor>([...loaded].map(([n, li]) => [n, li.tensor]));
  const kernelInputs = {
    tensors,
    scalars,
    sourceOf: (n: string) => loaded.get(n)?.source ?? `--input ${n}`,
    lineOf: (n: string) => loaded.get(n)?.mtx?.sizeLine,
  };
  // The system first: the CPU model picks each op's threads for the run (and the partition printed after it).
  const sys = loadSystem(o, DEFAULT_RUN_SYSTEM);
  const feats = sparseFeatures(kernel, tensors);
  const dims = boundDims(kernel, tensors, scalars, loaded);
  const spec = plannedSpec(module, file, kernel.name);
  // Each CPU backend picks threads by its own fit (runtime/system/cpu-backend.ts).
  const picks = (b: CpuBackendName): OpThreads => opThreads(spec, sys, { sparse: feats, dims, scalars }, threads, b);
  let perOp: OpThreads = { counts: new Map<string, number>(), from: 'the reference backend runs on one thread' };
  let note: string | undefined;
  let compiled: Runner | undefined;
  if (o.backend === 'native' || o.backend === 'auto') {
    try {
      perOp = picks('native');
      compiled = await nativeRunner(file, kernel, kernelInputs, threads, perOp.counts, o.cache !== false);
      o.backend = 'native';
    } catch (e) {
      // codegen/cpu/build.ts CpuBuildError (that module is loaded only when a native build is tried).
      if ((e as Error).name !== 'CpuBuildError') throw e;
      const why = (e as Error).message;
      if (o.backend === 'native')
        throw new InputError('DY3040', '--backend native', undefined, `the native backend is not available: ${why}`);
      // Never silently: the note goes to stderr and into --json.
      note = `the native backend is not available (${why}); ran on the wasm backend instead`;
      process.stderr.write(`note: ${note}\n`);
      o.backend = 'wasm';
    }
  }
  if (o.backend === 'wasm') {
    perOp = picks('wasm');
    compiled = await wasmRunner(program.source, kernel, kernelInputs, threads, perOp.counts, o.cache !== false);
  }
  const wasm = compiled;
  let reference: InterpretResult | undefined;
  const execute = wasm ? wasm.execute : (): void => void (reference = interpretKernel(kernel, kernelInputs));
  // With --repeat N: one warm-up run, then N timed runs. Without: one timed run.
  // Timing covers kernel execution only: the results are read back after it.
  let result: InterpretResult | undefined;
  const times: number[] = [];
  const bar = progress(`running ${kernel.name}`, repeat);
  let workers: ReturnType<typeof workersOver> | undefined;
  try {
    if (o.repeat !== undefined) execute();
    const before = wasm?.placement();
    for (let r = 0; r < repeat; r++) {
      const t0 = performance.now();
      execute();
      times.push(performance.now() - t0);
      bar.tick(r + 1);
    }
    // With one thread no op is split, and there is nothing to say.
    if (threads > 1) workers = workersOver(before, wasm?.placement());
    result = wasm ? wasm.results() : reference;
  } finally {
    bar.done();
    wasm?.close();
  }
  if (!result) throw new CliError('internal: no run happened');
  // The mapping the planner would pick on the described system for this data.
  const goal = parseGoal(o);
  const { objective } = goal;
  // Convergence loops: the planner's prior, and the trips this run observed (mean per run), which the partition is costed at.
  const observed = new Map(result.repeats.filter((r) => r.until).map((r) => [r.id, r.trips / Math.max(1, r.runs)]));
  const estimates = new Map(result.repeats.filter((r) => r.until).map((r) => [r.id, expectedTrips(r.max, feats)]));
  // Priced as the backend that ran would run its CPU stages (the reference interpreter is no CPU backend: as given).
  const ran = cpuBackendOf(o.backend);
  const plan = planFor(spec, ran ? systemForCpuBackend(sys, ran).system : sys, feats, dims, scalars, goal, observed);
  const best = plan.pareto[0]!;
  // The results and the trace are written together, all or none (a trace that cannot be written leaves no --out).
  const files = outFiles(kernel, outs, loaded, result.outputs, `${o.backend} backend`);
  if (o.trace !== undefined)
    files.push({
      path: o.trace,
      where: `--trace ${o.trace}`,
      data: runTrace(best, times, `${kernel.name} on ${sys.name}`, o.backend),
    });
  writeAllAtomic(files);
  const features = Object.fromEntries(
    [...loaded].map(([n, li]) => [n, { ...(feats.get(n) ?? tier0(li.tensor)), source: li.source }]),
  );
  const summaries = Object.fromEntries([...result.outputs].map(([n, t]) => [n, summarize(t)]));
  // Named as `run --project` names them: a reader of the JSON alone tells the measured figures from the modelled.
  const timing = { ...timingOf(times), clock: 'measured' };
  const partition = {
    system: sys.name,
    objective,
    energy_scope: goal.energyScope,
    stream_length: goal.streamLength,
    stages: best.stages.map((st) => ({ ops: st.ops, devices: st.devices, variants: st.variants })),
  };
  const predicted = {
    period_ms: best.periodMs,
    per_input_ms: best.perInputMs,
    latency_ms: best.latencyMs,
    energy_j: best.energyJ,
    device_energy_j: best.deviceEnergyJ,
    system_energy_j: best.systemEnergyJ,
    power_w: best.powerW,
    clock: 'modelled',
  };
  if (o.json) {
    stdout(
      JSON.stringify(
        {
          kernel: kernel.name,
          backend: o.backend,
          ...(asked !== o.backend ? { backend_asked: asked } : {}),
          ...(note !== undefined ? { backend_note: note } : {}),
          threads,
          threads_per_op: Object.fromEntries(perOp.counts),
          threads_from: perOp.from,
          ...(workers ? { workers: snakeKeys(workers) } : {}),
          ...(wasm ? { compile: { ...wasm.compile, clock: 'measured' } } : {}),
          outputs: Object.fromEntries(outs.map((a) => [a.name, a.value])),
          timing,
          features: snakeValues(features),
          dims: Object.fromEntries(result.dims),
          summary: summaries,
          repeats: repeatsJson(result.repeats, estimates),
          partition,
          predicted,
        },
        null,
        2,
      ) + '\n',
    );
    return;
  }
  const lines: string[] = [];
  lines.push(`kernel ${kernel.name}: ${o.backend} backend, ${threads} thread${threads === 1 ? '' : 's'}`);
  if (perOp.counts.size > 0)
    lines.push(
      `  threads per op: ${[...perOp.counts].map(([op, n]) => `${op} ${n}`).join(', ')} (picked by ${perOp.from})`,
    );
  else if (o.backend !== 'reference') lines.push(`  threads per op: ${perOp.from}`);
  if (workers && workers.splitOps > 0) lines.push(`  ${workersText(workers)}`);
  for (const [n, f] of Object.entries(features)) {
    const shape =
      f.format === 'dense' ? (loaded.get(n)!.tensor as { shape: number[] }).shape.join(' x ') : `${f.rows} x ${f.cols}`;
    lines.push(
      `  input  ${n.padEnd(6)} ${f.format.padEnd(5)} ${shape}${f.format === 'dense' ? '' : `, nnz ${f.nnz}, density ${f.density.toExponential(2)}`}  (${f.source})`,
    );
  }
  for (const [n, s] of Object.entries(summaries)) {
    const where = outs.find((a) => a.name === n)?.value;
    lines.push(
      `  output ${n.padEnd(6)} ${s.shape.join(' x ')}${s.nnz !== undefined ? `, nnz ${s.nnz}` : ''}: ${summaryText(s)}${where ? ` -> ${where}` : ''}`,
    );
  }
  lines.push(
    `  partition on ${sys.name} (${objective}): ${best.stages.map((st) => `[${st.ops.join(' ')}]@${st.devices.join('+')}`).join(' -> ')}; predicted latency ${predicted.latency_ms.toPrecision(3)} ms, energy ${(predicted.device_energy_j * 1e3).toPrecision(3)} mJ device / ${(predicted.system_energy_j * 1e3).toPrecision(3)} mJ system`,
  );
  for (const r of result.repeats) lines.push(`  ${repeatText(r)} (${o.backend} backend)`);
  lines.push(
    `  executed on this machine by the ${o.backend} backend${asked !== o.backend ? ` (--backend ${asked})` : ''}${note !== undefined ? `; note: ${note}` : ''}`,
  );
  if (wasm)
    lines.push(
      `  compile: ${wasm.compile.ms.toFixed(1)} ms measured${wasm.compile.cached ? ' (from the compile cache)' : ''}${o.backend === 'native' ? ` (C library built with ${wasm.compile.cc ?? 'cc'})` : ''}`,
    );
  lines.push(
    `  time: median ${timing.median_ms.toFixed(3)} ms, min ${timing.min_ms.toFixed(3)} ms over ${timing.runs} run(s), measured on this host by the ${o.backend} backend${o.repeat === undefined ? ` (one cold run: ${o.backend === 'native' ? "input copies into the library's memory and the library's first calls included" : wasm ? "input copies into wasm memory and the engine's first-call compilation included" : 'binding and checking the inputs included; the interpreter compiles nothing'}; --repeat N times warm runs)` : ''}`,
  );
  stdout(lines.join('\n') + '\n');
  if (outs.length === 0 && kernel.results.length > 0) {
    // Nothing written: say how to, since a run without --out is usually a first try.
    stdout(`  (no --out given; write results with --out ${kernel.results[0]!.name}=FILE.mtx)\n`);
  }
}

interface Runner {
  execute: () => void;
  results: () => InterpretResult;
  close: () => void;
  compile: { cached: boolean; ms: number; cc?: string };
  /** Where the worker threads ran (WasmExecutor.placement). */
  placement: () => WorkerPlacement | undefined;
}

/** A runner over an executor of either CPU backend, each op on its picked threads. */
function runnerOver(
  exec: WasmExecutor,
  counts: ReadonlyMap<string, number>,
  inputs: KernelInputs,
  dims: ReturnType<typeof checkInputs>,
  compile: Runner['compile'],
): Runner {
  exec.setOpThreads(counts);
  const args = { tensors: inputs.tensors, scalars: inputs.scalars, dims };
  return {
    execute: () => exec.execute(args),
    results: () => exec.results(),
    close: () => exec.close(),
    compile,
    placement: () => exec.placement(),
  };
}

/**
 * The native backend: lower-kernels, print the kernel as C (codegen/cpu) and
 * build it with the system C compiler through the compile cache (a
 * CpuBuildError when there is no compiler or it fails), then run it through
 * the native loader with the wasm executor's layout. `compile.ms` covers
 * lowering, printing and the build (or the cache lookup).
 */
async function nativeRunner(
  file: string,
  kernel: Kernel,
  inputs: KernelInputs,
  threads: number,
  counts: ReadonlyMap<string, number>,
  useCache: boolean,
): Promise<Runner> {
  const dims = checkInputs(kernel, inputs);
  const t0 = performance.now();
  const { lowerKernelLoops } = await import('../ir/loops-lower.js');
  const { cacheRoot } = await import('../codegen/wasm/cache.js');
  const { compileCpuKernel } = await import('../codegen/cpu/compile.js');
  const { programName } = await import('../codegen/project.js');
  const { createNativeCpuExecutor } = await import('../runtime/native/cpu-executor.js');
  const c = compileCpuKernel(
    programName(file),
    { ...kernel, loops: kernel.loops ?? lowerKernelLoops(kernel) },
    useCache ? cacheRoot() : null,
    undefined,
    file,
  );
  const compile = { cached: c.build.cached, ms: performance.now() - t0, cc: c.build.cc };
  let exec;
  try {
    exec = createNativeCpuExecutor(c.build.path, c.manifest, { threads, program: c.program, programHash: c.hash });
  } finally {
    c.build.cleanup();
  }
  return runnerOver(exec, counts, inputs, dims, compile);
}

/**
 * The wasm backend: lower-kernels, emit (binaryen, imported only on a compile
 * cache miss) and instantiate once; inputs are bound and validated by
 * interp/bind.ts first. --repeat times `execute` (the kernel in wasm memory;
 * the same inputs object each time, so inputs are copied in once); results
 * are read once after. `compile.ms` covers lowering, the cache and emitting.
 */
async function wasmRunner(
  source: string,
  kernel: Kernel,
  inputs: KernelInputs,
  threads: number,
  counts: ReadonlyMap<string, number>,
  useCache: boolean,
): Promise<Runner> {
  const dims = checkInputs(kernel, inputs);
  const t0 = performance.now();
  const { lowerKernelLoops } = await import('../ir/loops-lower.js');
  const { cacheRoot, emitWasmCached } = await import('../codegen/wasm/cache.js');
  const { createWasmExecutor } = await import('../runtime/wasm/executor.js');
  const { binary, manifest, cached } = await emitWasmCached(
    source,
    { ...kernel, loops: kernel.loops ?? lowerKernelLoops(kernel) },
    {},
    useCache ? cacheRoot() : null,
  );
  const compile = { cached, ms: performance.now() - t0 };
  const exec = await createWasmExecutor(binary, manifest, { threads });
  return runnerOver(exec, counts, inputs, dims, compile);
}

export { CliError };
