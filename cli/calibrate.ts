/**
 * `dype calibrate`: times the wasm SpMV (f32) and SpMM (K = 16, f32) kernels
 * on a ladder of generated matrices, fits the CPU cost model's effective
 * compute, bandwidth and per-op overhead to them (runtime/plan/calibrate-fit.ts),
 * writes a system file in the form of systems/this-machine.json, and reports
 * the model's error on real matrices that the fit did not see.
 */
import { existsSync, statSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuThreadsFor } from '../runtime/catalogue/index.js';
import { features } from '../runtime/features/index.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import { writeFileAtomic } from '../runtime/io/mtx-write.js';
import { bindProblem } from '../runtime/plan/bind.js';
import { errorSummary, fitCpuParams, predictMs, type CalibrationSample } from '../runtime/plan/calibrate-fit.js';
import type { PlanOp, PlanSpec } from '../runtime/plan/types.js';
import { loadSystemFile, parseSystem } from '../runtime/system/load.js';
import { cpuFitFor, cpuFitPath, withCpuFit } from '../runtime/system/cpu-backend.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../runtime/tensor.js';
import type { DeviceSpec } from '../runtime/system/types.js';
import type { WasmExecutor } from '../runtime/wasm/executor.js';
import { InputError } from '../runtime/errors.js';
import { usage } from './errors.js';
import { positiveInt } from './int-option.js';
import { checkOutputFile } from './output-path.js';
import {
  cpuClockUsable,
  crowdedLeftOut,
  MIN_HELP,
  PACKED_SHARE,
  placementSummary,
  RETAKE_HELP,
  SpeedProbe,
  speedSummary,
  STEADY,
  timeRuns,
  type Timing,
} from './calibrate-timing.js';
import { calibrateDense, calibrationKernel, denseShapeCount, type DenseFit } from './calibrate-dense.js';
import { capThreads } from './threads.js';
import { snakeKeys } from './json-keys.js';
import { resolveSystem } from './planning.js';
import { progress } from './progress.js';
import { generatedMatrix, skewedMatrix } from '../runtime/generate.js';

export interface CalibrateOptions {
  output?: string;
  /** --history FILE: refit from measured op runs instead of timing kernels (cli/calibrate-history.ts). */
  history?: string;
  /** With --history: the system file whose devices the runs are for (default this-machine). */
  system?: string;
  threads?: string;
  /** auto (native where a C compiler runs, else wasm with a note), native or wasm: the backend timed and fitted. */
  backend?: string;
  quick?: boolean;
  json?: boolean;
}

const CALIBRATE_BACKENDS = ['auto', 'native', 'wasm'] as const;

const here = dirname(fileURLToPath(import.meta.url));
/** Held out: timed only to measure the model's error. */
const HELD_OUT = ['bcsstk33', 'luxembourg_osm', 'ca-GrQc', 'cage8', 'adder_dcop_05'];
/** Real matrices in the fit: FEM bands, a power-law graph, heavy row skew, an unsymmetric chemical matrix. */
// Real matrices in the fit besides the generated ladder: with few of them the fit, dominated by
// generated matrices (which cost more per entry than real ones at equal features), over-predicted real inputs.
const FIT_REAL = [
  'bcsstk13.mtx',
  'whitaker3.mtx',
  'facebook_combined.txt',
  'Groebner_id2003_aug.mtx',
  'bayer10.mtx',
  'fidapex6.mtx',
  'bcspwr10.mtx',
  'cora.cites',
  'dnn_n1024-l1.mtx',
  'olm1000.mtx',
  'west0479.mtx',
  'Erdos971.mtx',
  'jazz.mtx',
  '1138_bus.mtx',
  'lp_ship04l.mtx',
];
const HELD_OUT_K = 16;
const FITTED_NOTE = 'Sparse-kernel model fitted by `dype calibrate`.';

export const PROGRAMS = {
  spmv: 'kernel spmv(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }',
  spmm: 'kernel spmm(A: csr<f32>[m, n], B: dense<f32>[n, c]) -> (Y: dense<f32>[m, c]) { Y[i, k] = A[i, j] * B[j, k]; }',
  sddmm:
    'kernel sddmm(A: csr<f32>[n, n], Q: dense<f32>[n, d], K: dense<f32>[n, d]) -> (S: csr<f32>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }',
} as const;
export type ProgramName = keyof typeof PROGRAMS;
/**
 * One timed kernel: SpMV (k = 0), SpMM with k dense columns (the dim c is bound at run time), or with `sddmm` an
 * SDDMM of width k (square matrices only), whose in-order dot products the model prices apart (nsPerDotElement, and nsPerDotRowElement for the row-side operand read once a row).
 */
type Run = { k: number; sddmm?: true };
const label = (r: Run): string => (r.sddmm ? `sddmm${r.k}` : r.k === 0 ? 'spmv' : `spmm${r.k}`);
/** A real matrix's name in calibrate's rows: its file name less the extension. */
const realName = (file: string): string => file.replace(/\.[a-z]+$/, '');
/** The run a label names (label's inverse): `spmv`, `spmm<k>`, `sddmm<k>`; undefined for another text. */
function runOf(text: string): Run | undefined {
  const m = /^(spmv|spmm|sddmm)(\d*)$/.exec(text);
  if (!m || (m[1] === 'spmv') !== (m[2] === '')) return undefined;
  return m[1] === 'sddmm' ? { k: Number(m[2]), sddmm: true } : { k: m[1] === 'spmv' ? 0 : Number(m[2]) };
}
/** Whether the run can be timed on A (SDDMM needs a square matrix). */
const runsOn = (r: Run, A: CsrMatrix): boolean => !r.sddmm || A.rows === A.cols;

interface LadderEntry {
  name: string;
  A: () => CsrMatrix;
}

/**
 * The generated part of the fit: rows x mean nnz per row x column structure,
 * plus power-law row lengths. The sizes straddle the caches (the dense
 * operand of SpMM K = 32 on 256k rows is 32 MB), short and long rows
 * separate the per-row and per-entry terms, random and banded columns the
 * cache misses.
 */
function ladder(quick: boolean): LadderEntry[] {
  const rows = quick ? [2_000, 16_000, 128_000] : [1_000, 4_000, 16_000, 64_000, 256_000];
  const perRow = quick ? [2, 16] : [2, 8, 32];
  const out: LadderEntry[] = rows.flatMap((r) =>
    perRow.flatMap((p) =>
      [false, true].map((banded) => ({
        name: `${banded ? 'banded' : 'random'}-${r}x${p}`,
        A: () => generatedMatrix(r, p, banded),
      })),
    ),
  );
  for (const [r, p] of quick
    ? [[16_000, 8]]
    : [
        [4_000, 4],
        [4_000, 16],
        [64_000, 4],
        [64_000, 16],
      ])
    out.push({ name: `skewed-${r}x${p}`, A: () => skewedMatrix(r!, p!) });
  return out;
}

function operand(cols: number, k: number): DenseTensor {
  if (k === 0)
    return { format: 'dense', shape: [cols], data: Float64Array.from({ length: cols }, (_, j) => 1 + (j % 7) * 0.25) };
  return { format: 'dense', shape: [cols, k], data: Float64Array.from({ length: cols * k }, (_, p) => (p % 5) * 0.5) };
}

interface Compiled {
  planned: Map<ProgramName, PlanSpec>;
  executors: Map<string, WasmExecutor>;
  /** The machine's speed through the run: an SpMV of its own executor (so that no timing's inputs move). */
  probe: SpeedProbe;
}

/** The probe's matrix: 32,000 entries, in cache, some 10-40 us a call. */
const PROBE_MATRIX = { rows: 4000, perRow: 8 };

async function compile(threadCounts: readonly number[], backend: 'native' | 'wasm'): Promise<Compiled> {
  const planned = new Map<ProgramName, PlanSpec>();
  const executors = new Map<string, WasmExecutor>();
  for (const name of Object.keys(PROGRAMS) as ProgramName[]) {
    const k = await calibrationKernel(name, PROGRAMS[name], backend, threadCounts);
    planned.set(name, k.spec);
    for (const [t, e] of k.executors) executors.set(`${name}/${t}`, e);
  }
  const probeExec = (await calibrationKernel('spmv', PROGRAMS.spmv, backend, [1])).executors.get(1)!;
  executors.set('probe', probeExec);
  const A = generatedMatrix(PROBE_MATRIX.rows, PROBE_MATRIX.perRow);
  const inputs = {
    tensors: new Map<string, Tensor>([
      ['A', A],
      ['x', operand(A.cols, 0)],
    ]),
    scalars: new Map(),
  };
  return { planned, executors, probe: new SpeedProbe(() => probeExec.execute(inputs)) };
}

/** The backend asked for, resolved as dype run resolves it: auto takes native where the C compiler runs. */
async function calibrateBackend(asked: string): Promise<{ backend: 'native' | 'wasm'; note?: string }> {
  if (!(CALIBRATE_BACKENDS as readonly string[]).includes(asked))
    throw usage(`--backend expects one of ${CALIBRATE_BACKENDS.join(', ')}, got '${asked}'`);
  if (asked === 'wasm') return { backend: 'wasm' };
  const { cCompiler, compilerVersion } = await import('../codegen/cpu/build.js');
  try {
    compilerVersion(cCompiler());
    return { backend: 'native' };
  } catch (e) {
    const why = (e as Error).message;
    if (asked === 'native')
      throw new InputError('DY3040', '--backend native', undefined, `the native backend is not available: ${why}`);
    return { backend: 'wasm', note: `the native backend is not available (${why}); timing the wasm backend instead` };
  }
}

const program = (r: Run): ProgramName => (r.sddmm ? 'sddmm' : r.k === 0 ? 'spmv' : 'spmm');
const dimsOf = (A: CsrMatrix, r: Run): Map<string, number> =>
  r.sddmm
    ? new Map([
        ['n', A.rows],
        ['d', r.k],
      ])
    : new Map([
        ['m', A.rows],
        ['n', A.cols],
        ['c', Math.max(1, r.k)],
      ]);

/** The planner's bound ops for this kernel on this matrix (features as the planner computes them). */
function boundOps(planned: ReadonlyMap<ProgramName, PlanSpec>, A: CsrMatrix, r: Run): PlanOp[] {
  return bindProblem(planned.get(program(r))!, {
    sparse: new Map([['A', features(A, 2)]]),
    dims: dimsOf(A, r),
    scalars: new Map(),
  }).ops;
}

/**
 * A recorded timing's matrix by the name calibrate gave it (a ladder entry, a real matrix of the fit or one held
 * out, read from `dataDir`) and the planner's bound ops of its kernel (a label: spmv, spmm16, sddmm16), for
 * refitting recorded timings (bench/calibrate-refit.ts). Undefined for a name or label calibrate does not make.
 * `loaded`, when given, keeps each matrix by name, so that a set's several kernels on one matrix read it once.
 */
export function calibrationOps(
  planned: ReadonlyMap<ProgramName, PlanSpec>,
  matrix: string,
  kernel: string,
  dataDir: string,
  loaded?: Map<string, CsrMatrix>,
): { A: CsrMatrix; ops: PlanOp[] } | undefined {
  const r = runOf(kernel);
  if (!r) return undefined;
  let A = loaded?.get(matrix);
  if (!A) {
    const entry = [...ladder(false), ...ladder(true)].find((e) => e.name === matrix);
    const file = [...FIT_REAL, ...HELD_OUT.map((n) => `${n}.mtx`)].find((f) => realName(f) === matrix);
    if (!entry && !file) return undefined;
    A = entry ? entry.A() : toCsr(loadMatrix(join(dataDir, file!)));
    loaded?.set(matrix, A);
  }
  return { A, ops: boundOps(planned, A, r) };
}

/**
 * A kernel's time on `threads` threads (cli/calibrate-timing.ts timeRuns). A run whose ops all stay on one thread
 * (`timedAs` 1: the model's pick for every op) wakes no worker and is timed as a one-thread run (timed as a
 * multi-thread one, the median of its wall times read 13-24% above the one-thread figure on ops of 8-10 us).
 */
function timeMs(
  c: Compiled,
  A: CsrMatrix,
  r: Run,
  threads: number,
  useCpu: boolean,
  timedAs = threads,
  warm = false,
): Timing & { probeMs: number } {
  const ex = c.executors.get(`${program(r)}/${threads}`)!;
  const tensors = new Map<string, Tensor>(
    r.sddmm
      ? [
          ['A', A],
          ['Q', operand(A.rows, r.k)],
          ['K', operand(A.rows, r.k)],
        ]
      : [
          ['A', A],
          [r.k === 0 ? 'x' : 'B', operand(A.cols, r.k)],
        ],
  );
  const dims = dimsOf(A, r);
  const call = (): void => ex.execute({ tensors, scalars: new Map(), dims });
  // The warm-up's calls are thrown away: no probe readings (they would join the run's median) and no retakes.
  if (warm) return { ...timeRuns(call, timedAs, false), probeMs: NaN };
  return c.probe.around(() => timeRuns(call, timedAs, useCpu, () => ex.placement()));
}

/** Runs every kernel enough for the engine to settle on its optimised code before anything is timed. */
function warmUp(c: Compiled, threadCounts: readonly number[]): void {
  const A = generatedMatrix(8_000, 8);
  for (const t of threadCounts)
    for (const r of [{ k: 0 }, { k: 16 }, { k: 16, sddmm: true as const }])
      for (let i = 0; i < 4; i++) timeMs(c, A, r, t, false, t, true);
}

function packageRoot(): string {
  for (const root of [join(here, '..', '..'), join(here, '..')]) if (existsSync(join(root, 'systems'))) return root;
  return join(here, '..', '..');
}

export interface CalibrationRow {
  matrix: string;
  kernel: string;
  threads: number;
  rows: number;
  nnz: number;
  measuredMs: number;
  /**
   * The machine's speed around the timing (cli/calibrate-timing.ts SpeedProbe): the faster probe reading, ms,
   * and its speed relative to the run's median reading (set when the report is made).
   */
  probeMs: number;
  speed?: number;
  predictedMs: number;
  /**
   * At more threads, where the backend says where its workers ran (native): the share of the workers' joins on
   * the caller's core in the timing kept, and how many times it was taken again (cli/calibrate-timing.ts).
   */
  workersOnCaller?: number;
  /** At more threads: the share of the split ops' chunks the workers ran (cli/calibrate-timing.ts). */
  workerChunks?: number;
  retakes?: number;
}
type Timed = Omit<CalibrationRow, 'predictedMs'> & { ops: PlanOp[] };

const round = (x: number): number => Number(x.toPrecision(4));

/** A row's measured figures from its timing. */
const measured = (
  t: Timing & { probeMs: number },
): Pick<CalibrationRow, 'measuredMs' | 'probeMs' | 'workersOnCaller' | 'workerChunks' | 'retakes'> => ({
  measuredMs: t.ms,
  probeMs: t.probeMs,
  ...(t.onCaller !== null ? { workersOnCaller: round(t.onCaller) } : {}),
  ...(t.workerChunks !== null ? { workerChunks: round(t.workerChunks) } : {}),
  ...(t.onCaller !== null || t.workerChunks !== null ? { retakes: t.retakes } : {}),
});

/**
 * Whether two paths name one file: the same path, or (both existing) the same device and inode, so that a symbolic
 * or hard link to the history is caught too (the atomic write follows a link and would replace its target).
 */
function sameFile(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  const sa = statSync(a, { throwIfNoEntry: false });
  const sb = statSync(b, { throwIfNoEntry: false });
  return sa !== undefined && sb !== undefined && sa.dev === sb.dev && sa.ino === sb.ino;
}

export async function calibrateCommand(o: CalibrateOptions, out: (s: string) => void): Promise<void> {
  // Before seconds of timing (or of refitting), not after.
  if (o.output !== undefined) checkOutputFile(o.output);
  if (o.history !== undefined && o.output !== undefined && sameFile(o.history, o.output))
    throw usage(`-o names the --history file '${o.output}': the system file would replace the runs it is fitted from`);
  if (o.history !== undefined) {
    if (o.quick || o.threads !== undefined || o.backend !== undefined)
      throw usage('--history refits from recorded runs: --quick, --threads and --backend do not apply');
    return (await import('./calibrate-history.js')).calibrateFromHistory(
      {
        history: o.history,
        ...(o.system !== undefined ? { system: o.system } : {}),
        ...(o.output !== undefined ? { output: o.output } : {}),
        ...(o.json ? { json: true } : {}),
      },
      out,
    );
  }
  if (o.system !== undefined) throw usage("--system goes with --history (dype calibrate times this machine's CPU)");
  const threadsAsked =
    o.threads === undefined ? Math.max(1, availableParallelism()) : positiveInt('--threads', o.threads, 1);
  // Timing more threads than cores measures the operating system's scheduler, not the kernels.
  const threads = capThreads(threadsAsked);
  const quick = o.quick === true;
  const { backend, note } = await calibrateBackend(o.backend ?? 'auto');
  // Never silently: the note goes to stderr and into --json.
  if (note !== undefined) process.stderr.write(`note: ${note}\n`);
  const presetPath = resolveSystem('this-machine');
  const preset = loadSystemFile(presetPath);
  const cpuIndex = preset.devices.findIndex((d) => d.kind === 'cpu');
  if (cpuIndex < 0) throw new Error(`${presetPath} has no CPU device`);
  const base = preset.devices[cpuIndex]!;
  const dataDir = join(packageRoot(), '..', 'shared', 'data', 'matrices');
  const fitReal: LadderEntry[] = FIT_REAL.filter((f) => existsSync(join(dataDir, f))).map((f) => ({
    name: realName(f),
    A: () => toCsr(loadMatrix(join(dataDir, f))),
  }));
  const heldOut = HELD_OUT.filter((n) => existsSync(join(dataDir, `${n}.mtx`)));
  const fitSet = [...ladder(quick), ...(quick ? fitReal.slice(0, 3) : fitReal)];
  const fitRuns: Run[] = quick
    ? [{ k: 0 }, { k: 16 }, { k: 32 }, { k: 16, sddmm: true }]
    : [{ k: 0 }, { k: 4 }, { k: 16 }, { k: 32 }, { k: 16, sddmm: true }];
  // The parallel efficiency is fitted at 2 threads (or at --threads if fewer), on every other matrix.
  const fitThreads = Math.min(2, threads);
  const threadSet = fitThreads > 1 ? fitSet.filter((_, i) => i % 2 === 0) : [];
  const threadRuns: Run[] = [{ k: 0 }, { k: 16 }];
  const evalRuns: Run[] = [{ k: 0 }, { k: HELD_OUT_K }, { k: HELD_OUT_K, sddmm: true }];
  const threadCounts = [...new Set([1, fitThreads, threads])];

  const c = await compile(threadCounts, backend);
  const total =
    fitSet.length * fitRuns.length +
    threadSet.length * threadRuns.length +
    heldOut.length * evalRuns.length * (threads > 1 ? 2 : 1) +
    denseShapeCount(quick);
  const bar = progress('calibrate', total);
  let done = 0;
  const fitTimed: (Timed & { sampleThreads: number })[] = [];
  const heldTimed: Timed[] = [];
  // Called once on every path: where a timing step throws, or after the last one.
  const closeAll = (): void => {
    for (const ex of c.executors.values()) ex.close();
  };
  // The held-out matrices, loaded once for the runs at 1 thread and at T.
  const heldMatrices = new Map<string, CsrMatrix>();
  const useCpu = cpuClockUsable();
  try {
    warmUp(c, threadCounts);
    const inThreadSet = new Set(threadSet.map((e) => e.name));
    for (const e of fitSet) {
      const A = e.A();
      const time = (r: Run, t: number): void => {
        fitTimed.push({
          matrix: e.name,
          kernel: label(r),
          threads: t,
          sampleThreads: t,
          rows: A.rows,
          nnz: A.values.length,
          ...measured(timeMs(c, A, r, t, useCpu)),
          ops: boundOps(c.planned, A, r),
        });
        bar.tick(++done);
      };
      for (const r of fitRuns) if (runsOn(r, A)) time(r, 1);
      if (inThreadSet.has(e.name)) for (const r of threadRuns) time(r, fitThreads);
    }
    for (const n of heldOut) {
      const A = toCsr(loadMatrix(join(dataDir, `${n}.mtx`)));
      heldMatrices.set(n, A);
      for (const r of evalRuns) {
        if (!runsOn(r, A)) continue;
        heldTimed.push({
          matrix: n,
          kernel: label(r),
          threads: 1,
          rows: A.rows,
          nnz: A.values.length,
          ...measured(timeMs(c, A, r, 1, useCpu)),
          ops: boundOps(c.planned, A, r),
        });
        bar.tick(++done);
      }
    }
  } catch (e) {
    bar.done();
    closeAll();
    throw e;
  }

  // Held-out rows count whatever their placement: the model's error where it is used.
  const leftOut = crowdedLeftOut(fitTimed);
  const samples: CalibrationSample[] = fitTimed
    .filter((r) => !leftOut.has(r))
    .map((r) => ({
      ops: r.ops,
      measuredMs: r.measuredMs,
      threads: r.sampleThreads,
    }));
  // The fit starts from the backend's own figures where the preset has them (the others play no part).
  const fit = fitCpuParams(samples, { base: cpuFitFor(base, backend).device });
  const p = fit.params;
  let denseFit: DenseFit;
  try {
    denseFit = await calibrateDense(
      backend,
      quick,
      p.overheadUs,
      (call) => timeRuns(call, 1, useCpu).ms,
      () => bar.tick(++done),
    );
  } catch (e) {
    bar.done();
    closeAll();
    throw e;
  }
  const date = new Date().toISOString().slice(0, 10);
  const how = `measured by dype calibrate on ${date} (${backend} SpMV, SpMM K = ${fitRuns
    .filter((r) => r.k > 0 && !r.sddmm)
    .map((r) => r.k)
    .join('/')} and SDDMM d = ${fitRuns
    .filter((r) => r.sddmm)
    .map((r) => r.k)
    .join(
      '/',
    )}, f32, ${fitSet.length} matrices at 1 thread${fitThreads > 1 ? `, ${threadSet.length} at ${fitThreads} threads` : ''}${quick ? ', --quick' : ''})`;
  // At one thread the thread figures are not fitted (and not written), rather than undetermined.
  const undetermined = (Object.keys(fit.determined) as (keyof typeof fit.determined)[]).filter(
    (k) => !fit.determined[k] && (fitThreads > 1 || (k !== 'parallelEfficiency' && k !== 'dispatchUsPerThread')),
  );
  const model = Object.fromEntries(
    Object.entries({
      ...p.model,
      nsPerDenseFlop: denseFit.nsPerDenseFlop,
      nsPerDenseByte: denseFit.nsPerDenseByte,
      nsPerDenseTrip: denseFit.nsPerDenseTrip,
      denseBlockBytes: denseFit.denseBlockBytes,
    }).map(([k, v]) => [k, round(v)]),
  ) as unknown as NonNullable<DeviceSpec['cpuModel']>;
  // Into the backend's slot: the preset keeps the other backend's fit (runtime/system/cpu-backend.ts).
  // The host the runs were made on, and its memory (the planner refuses inputs that do not fit it): the preset's
  // would stay the machine it was made on.
  const memoryGB = Math.round(totalmem() / 1e8) / 10;
  const host = `${cpus()[0]?.model.trim() || 'an unnamed CPU'}, ${availableParallelism()} hardware threads, ${memoryGB} GB of memory`;
  const device: DeviceSpec = {
    ...withCpuFit(base, backend, { launchOverheadUs: round(p.overheadUs), cpuModel: model }),
    threads,
    memoryGB,
  };
  const at = `devices[${cpuIndex}]`;
  const slot = cpuFitPath(device, backend, at);
  const sys = {
    ...preset,
    description: `The host CPU (${host})${preset.devices.length === 1 ? ', no GPU or FPGA' : ''}. ${FITTED_NOTE} On ${date} it fitted the ${backend} backend's model and overhead, the threads and the memory on this host; the peak throughput and memory bandwidth are the preset ${preset.name}'s (hardware bounds dype calibrate does not measure)${preset.devices[cpuIndex]!.cpuBackendModels || (device.cpuModelBackend !== backend && device.cpuModel) ? ', and so is the other backend\u2019s fit' : ''}.`,
    devices: preset.devices.map((d, i) => (i === cpuIndex ? device : d)),
    measuredOn: {
      ...(preset.measuredOn ?? {}),
      [`${slot}.cpuModel`]: host,
      [`${slot}.launchOverheadUs`]: host,
      [`${at}.memoryGB`]: host,
    },
    sources: {
      ...(preset.sources ?? {}),
      [`${at}.memoryGB`]: `os.totalmem() on this host at calibration (${date}): ${totalmem()} bytes`,
      [`${slot}.cpuModel`]: `${how}: non-negative least squares on relative errors, cache size and branch-predictor history from grids (runtime/plan/calibrate-fit.ts)${undetermined.length ? `; not determined by the runs: ${undetermined.join(', ')}` : ''}`,
      [`${slot}.cpuModel.nsPerDenseFlop`]: `measured by dype calibrate on ${date} (${backend} GEMM and an elementwise map, f32, ${denseFit.fitRows.length} shapes at 1 thread): non-negative least squares on relative errors with the per-op overhead above (cli/calibrate-dense.ts)`,
      [`${slot}.cpuModel.nsPerDenseByte`]: `(see \`${slot}.cpuModel.nsPerDenseFlop\`)`,
      [`${slot}.cpuModel.nsPerDenseTrip`]: `(see \`${slot}.cpuModel.nsPerDenseFlop\`)`,
      [`${slot}.cpuModel.denseBlockBytes`]: `configuration: the ${backend} backend's block of columns a dense loop trip runs (${backend === 'native' ? 'codegen/cpu/lanes.ts CPU_BLOCK_BYTES' : 'codegen/wasm/simd.ts WASM_BLOCK_BYTES'})`,
      [`${slot}.launchOverheadUs`]: `${how}: per-op overhead fitted with the model`,
      [`${at}.threads`]:
        fitThreads > 1
          ? `${how}: worker threads the planner assumes (the parallel efficiency was fitted at ${fitThreads})`
          : `${how}: worker threads the planner assumes (--threads 1: no thread figure was fitted, and every op runs on one)`,
    },
  };
  const text = JSON.stringify(sys, null, 2) + '\n';
  const written = parseSystem(text, o.output ?? '<calibrated system>');
  // The fit just made, as the backend that was timed runs with it.
  const d = cpuFitFor(written.devices[cpuIndex]!, backend).device;
  // The held-out runs at T threads run each op on the threads the fitted model picks, as dype run does
  // (cli/threads.ts), so the error is that of the model where it is used.
  try {
    if (threads > 1)
      for (const [n, A] of heldMatrices)
        for (const r of evalRuns) {
          if (!runsOn(r, A)) continue;
          const ops = boundOps(c.planned, A, r);
          const picks = new Map(ops.map((op) => [op.id, cpuThreadsFor(op, d, threads)]));
          c.executors.get(`${program(r)}/${threads}`)!.setOpThreads(picks);
          heldTimed.push({
            matrix: n,
            kernel: label(r),
            threads,
            rows: A.rows,
            nnz: A.values.length,
            ...measured(timeMs(c, A, r, threads, useCpu, Math.max(...picks.values()))),
            ops,
          });
          bar.tick(++done);
        }
  } finally {
    bar.done();
    closeAll();
  }
  for (const r of [...fitTimed, ...heldTimed]) r.speed = round(c.probe.speed(r.probeMs));
  const at1 = { ...d, threads: 1 };
  const atT = (t: number): DeviceSpec => ({ ...d, threads: t });
  // allThreads: the fit's runs, every op on all threads as timed; the held-out ones ran the model's picks.
  const predict = (rows: Timed[], allThreads = false): CalibrationRow[] =>
    rows.map(({ ops, ...r }) => ({
      ...r,
      predictedMs: predictMs(ops, r.threads === 1 ? at1 : atT(r.threads), allThreads),
    }));
  const evalRows = predict(heldTimed.filter((r) => r.threads === 1));
  const evalRowsThreads = predict(heldTimed.filter((r) => r.threads > 1));
  const summary = errorSummary(evalRows);
  const denseSummary = errorSummary(denseFit.rows);
  const summaryThreads = evalRowsThreads.length ? errorSummary(evalRowsThreads) : undefined;
  const placement = placementSummary([...fitTimed, ...heldTimed], leftOut.size);
  const speeds = speedSummary([...fitTimed, ...heldTimed]);
  // Each group of timings whose errors the report gives: a spell that took in most of one (the held-out runs at
  // T threads are the last minute of a run) is a small share of the whole.
  const unsteadyGroups = (
    [
      ['the fit', fitTimed],
      ['the held-out runs at 1 thread', heldTimed.filter((r) => r.threads === 1)],
      [`the held-out runs at ${threads} threads`, heldTimed.filter((r) => r.threads > 1)],
    ] as const
  )
    .filter(([, rows]) => rows.length > 0 && speedSummary(rows).unsteady > rows.length / 10)
    .map(([name]) => name);
  const fitted = {
    backend,
    ...(note !== undefined ? { backendNote: note } : {}),
    launchOverheadUs: d.launchOverheadUs,
    cpuModel: d.cpuModel,
    threads,
    fitRmsRelError: fit.rmsRelError,
    fitRmsRelErrorThreads: Number.isNaN(fit.rmsRelErrorThreads) ? null : fit.rmsRelErrorThreads,
    determined: fit.determined,
  };
  if (o.output !== undefined) writeFileAtomic(o.output, text);

  if (o.json) {
    const fitRows = predict(
      fitTimed.map(({ sampleThreads: _t, ...r }) => r),
      true,
    );
    // snake_case like every --json output; the system file keeps its own format.
    const report = snakeKeys({
      fitted,
      fitRows,
      rows: evalRows,
      error: summary,
      dense: { fitRows: denseFit.fitRows, rows: denseFit.rows, error: denseSummary },
      ...(summaryThreads ? { rowsThreads: evalRowsThreads, errorThreads: summaryThreads } : {}),
      ...(placement ? { placement } : {}),
      speed: { ...speeds, unsteadyIn: unsteadyGroups },
    }) as Record<string, unknown>;
    out(
      JSON.stringify({ ...report, ...(o.output === undefined ? { system: sys } : { output: o.output }) }, null, 2) +
        '\n',
    );
    return;
  }
  if (o.output === undefined) out(text);
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const m = d.cpuModel!;
  const table = (rows: CalibrationRow[], s: { medianAbsRelError: number; worstAbsRelError: number }): string[] => [
    `${'matrix'.padEnd(16)} ${'kernel'.padEnd(7)} ${'nnz'.padStart(9)} ${'measured ms'.padStart(12)} ${'predicted ms'.padStart(13)} ${'error'.padStart(8)}`,
    ...rows.map(
      (r) =>
        `${r.matrix.padEnd(16)} ${r.kernel.padEnd(7)} ${String(r.nnz).padStart(9)} ${r.measuredMs.toFixed(3).padStart(12)} ${r.predictedMs.toFixed(3).padStart(13)} ${pct((r.predictedMs - r.measuredMs) / r.measuredMs).padStart(8)}`,
    ),
    rows.length === 0
      ? `no real matrices found in ${dataDir}`
      : `median absolute relative error ${pct(s.medianAbsRelError)}, worst ${pct(s.worstAbsRelError)}`,
  ];
  const lines = [
    `fitted on ${samples.length} runs of the ${backend} backend (${fitSet.length} matrices x ${fitRuns.length} kernels at 1 thread${fitThreads > 1 ? `, ${threadSet.length} x ${threadRuns.length} at ${fitThreads} threads` : ''}; fit rms relative error ${pct(fit.rmsRelError)}${Number.isNaN(fit.rmsRelErrorThreads) ? '' : `, ${pct(fit.rmsRelErrorThreads)} at ${fitThreads} threads`})`,
    `per op ${d.launchOverheadUs} us; ns per entry ${m.nsPerNnz}, per gathered element ${m.nsPerGather}, per row ${m.nsPerRow}, per output ${m.nsPerItem}, per cache miss ${m.nsPerMiss}, per byte beyond cache ${m.nsPerByte}; cache ${m.cacheMB} MB; per mispredicted row ${m.nsPerBranchMiss ?? 0} past ${m.branchHistoryChangeBits ?? 0} bits of row lengths a thread (weighed by their changes), per entry of a column block ${m.nsPerBlockEntry ?? 0}, per element of an in-order dot product ${m.nsPerDotElement ?? 0} and per element of its row-side operand a row ${m.nsPerDotRowElement ?? 0}${m.parallelEfficiency !== undefined ? `; parallel efficiency ${m.parallelEfficiency}, dispatch ${m.dispatchUsPerThread} us per extra thread` : ''}`,
    ...undetermined.map(
      (k) => `warning: the runs do not determine ${k}; its value is arbitrary within what fits equally well`,
    ),
    ...(o.output !== undefined ? [`system file -> ${o.output}`] : []),
    '',
    'model error on real matrices (not used in the fit), 1 thread:',
    ...table(evalRows, summary),
    ...(summaryThreads
      ? ['', `model error on the same matrices, ${threads} threads:`, ...table(evalRowsThreads, summaryThreads)]
      : []),
    `machine speed through the run (an SpMV probe read around each timing): ${speeds.slowest.toFixed(2)}-${speeds.fastest.toFixed(2)} of its median; ${speeds.unsteady} of ${speeds.timings} timings outside ${STEADY.from}-${STEADY.to}`,
    ...(unsteadyGroups.length > 0
      ? [
          `warning: the machine's speed changed through the run (other work on it or its host) in more than a tenth of the timings of ${unsteadyGroups.join(', ')}: the fit and its errors are less certain; calibrate again when it is quieter`,
        ]
      : []),
    ...(placement
      ? [
          `worker placement: ${placement.timings} multi-thread timings, ${placement.retaken} taken again (their workers perhaps without cores of their own: more than ${PACKED_SHARE * 100}% of their joins on the caller's core, or less than ${RETAKE_HELP * 100}% of their share of the chunks run), ${placement.crowdedKept} still crowded in the timing kept (as above, with less than ${MIN_HELP * 100}% of their share; ${placement.leftOutOfFit} left out of the fit; held-out rows count whatever their placement)`,
        ]
      : []),
    '',
    `dense ops (GEMM, elementwise; fitted on ${denseFit.fitRows.length} shapes at 1 thread): ns per flop ${m.nsPerDenseFlop}, per byte ${m.nsPerDenseByte}, per loop trip ${m.nsPerDenseTrip} (a block of ${m.denseBlockBytes} bytes of columns); error on shapes not in the fit:`,
    `${'kernel'.padEnd(8)} ${'n x k -> h'.padEnd(22)} ${'measured ms'.padStart(12)} ${'predicted ms'.padStart(13)} ${'error'.padStart(8)}`,
    ...denseFit.rows.map(
      (r) =>
        `${r.kernel.padEnd(8)} ${`${r.n} x ${r.k} -> ${r.h}`.padEnd(22)} ${r.measuredMs.toFixed(3).padStart(12)} ${r.predictedMs.toFixed(3).padStart(13)} ${pct((r.predictedMs - r.measuredMs) / r.measuredMs).padStart(8)}`,
    ),
    `median absolute relative error ${pct(denseSummary.medianAbsRelError)}, worst ${pct(denseSummary.worstAbsRelError)}`,
  ];
  // With the system file on stdout, the report goes to stderr so stdout stays valid JSON.
  (o.output === undefined ? (s: string) => void process.stderr.write(s) : out)(lines.join('\n') + '\n');
}
