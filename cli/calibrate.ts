/**
 * `dype calibrate`: times the wasm SpMV (f32) and SpMM (K = 16, f32) kernels
 * on a ladder of generated matrices, fits the CPU cost model's effective
 * compute, bandwidth and per-op overhead to them (runtime/plan/calibrate-fit.ts),
 * writes a system file in the form of systems/this-machine.json, and reports
 * the model's error on real matrices that the fit did not see.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { emitWasm } from '../codegen/wasm/emit.js';
import { compileSource } from '../frontend/compile.js';
import type { Kernel } from '../ir/module.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { planSpec } from '../passes/plan-spec.js';
import { features } from '../runtime/features/index.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import { writeFileAtomic } from '../runtime/io/mtx-write.js';
import { bindProblem } from '../runtime/plan/bind.js';
import { cpuDeviceFor, errorSummary, fitCpuParams, median, predictMs, type CalibrationSample } from '../runtime/plan/calibrate-fit.js';
import { MODEL } from '../runtime/plan/cost.js';
import type { PlanOp } from '../runtime/plan/types.js';
import { loadSystemFile, parseSystem } from '../runtime/system/load.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../runtime/tensor.js';
import { createWasmExecutor, type WasmExecutor } from '../runtime/wasm/executor.js';
import { usage } from './errors.js';
import { resolveSystem } from './planning.js';
import { progress } from './progress.js';
import { generatedMatrix } from '../runtime/generate.js';

export interface CalibrateOptions {
  output?: string;
  threads?: string;
  quick?: boolean;
  json?: boolean;
}

const here = dirname(fileURLToPath(import.meta.url));
const K = 16;
const RUNS = 5;
const REAL = ['bcsstk33', 'luxembourg_osm', 'ca-GrQc', 'cage8', 'adder_dcop_05'];

const PROGRAMS = {
  spmv: 'kernel spmv(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }',
  spmm16: 'kernel spmm16(A: csr<f32>[m, n], B: dense<f32>[n, c]) -> (Y: dense<f32>[m, c]) { Y[i, k] = A[i, j] * B[j, k]; }',
} as const;
type KernelName = keyof typeof PROGRAMS;

/**
 * The ladder the fit uses: rows x mean nnz per row x column structure.
 * Random columns (locality near 0) and banded ones (near 1) spread the
 * kernels' arithmetic intensity, so both roofline rates can be determined.
 */
function ladder(quick: boolean): { rows: number; perRow: number; banded: boolean }[] {
  const rows = quick ? [2_000, 10_000, 40_000] : [1_000, 5_000, 20_000, 50_000, 200_000];
  const perRow = quick ? [8, 32] : [8, 16, 32];
  return rows.flatMap((r) => perRow.flatMap((p) => [false, true].map((banded) => ({ rows: r, perRow: p, banded }))));
}


function operand(name: KernelName, cols: number): DenseTensor {
  if (name === 'spmm16') {
    const data = new Float64Array(cols * K);
    for (let j = 0; j < cols; j++) for (let k = 0; k < K; k++) data[j * K + k] = ((j + k) % 5) * 0.5;
    return { format: 'dense', shape: [cols, K], data };
  }
  const data = new Float64Array(cols);
  for (let j = 0; j < cols; j++) data[j] = 1 + (j % 7) * 0.25;
  return { format: 'dense', shape: [cols], data };
}

interface Compiled {
  name: KernelName;
  planned: Kernel;
  ex: WasmExecutor;
}

async function compile(name: KernelName, threads: number): Promise<Compiled> {
  const m = compileSource(PROGRAMS[name], `${name}.dy`).module!;
  const planned = runPipeline(m, { passes: [...DEFAULT_PIPELINE] }).kernels[0]!;
  const lowered = runPipeline(m, { passes: [...DEFAULT_PIPELINE, lowerKernelsPass] }).kernels[0]!;
  const { binary, manifest } = await emitWasm(lowered);
  return { name, planned, ex: await createWasmExecutor(binary, manifest, { threads }) };
}

/** The planner's bound ops for this kernel on this matrix. */
function boundOps(c: Compiled, A: CsrMatrix): PlanOp[] {
  const dims = new Map([['m', A.rows], ['n', A.cols], ['c', K]]);
  return bindProblem(planSpec(c.planned), { sparse: new Map([['A', features(A, 2)]]), dims, scalars: new Map() }).ops;
}

/** Median of RUNS timed `execute` calls after one warm-up, ms. */
function timeMs(c: Compiled, A: CsrMatrix): number {
  const tensors = new Map<string, Tensor>([['A', A], [c.name === 'spmm16' ? 'B' : 'x', operand(c.name, A.cols)]]);
  const dims = new Map([['m', A.rows], ['n', A.cols], ['c', K]]);
  const run = (): void => void c.ex.execute({ tensors, scalars: new Map(), dims });
  run();
  const ts: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    run();
    ts.push(performance.now() - t0);
  }
  return median(ts);
}

function packageRoot(): string {
  for (const root of [join(here, '..', '..'), join(here, '..')]) if (existsSync(join(root, 'systems'))) return root;
  return join(here, '..', '..');
}

export interface CalibrationRow {
  matrix: string;
  kernel: KernelName;
  rows: number;
  nnz: number;
  measuredMs: number;
  predictedMs: number;
}

export async function calibrateCommand(o: CalibrateOptions, out: (s: string) => void): Promise<void> {
  const threads = o.threads === undefined ? Math.max(1, availableParallelism()) : Number(o.threads);
  if (!Number.isSafeInteger(threads) || threads < 1) throw usage(`--threads expects a positive integer, got '${o.threads}'`);
  const quick = o.quick === true;
  const presetPath = resolveSystem('this-machine');
  const preset = loadSystemFile(presetPath);
  const base = preset.devices.find((d) => d.kind === 'cpu');
  if (!base) throw new Error(`${presetPath} has no CPU device`);
  const dataDir = join(packageRoot(), '..', 'shared', 'data', 'matrices');
  const real = REAL.filter((n) => existsSync(join(dataDir, `${n}.mtx`)));
  const gen = ladder(quick);

  const kernels = [await compile('spmv', threads), await compile('spmm16', threads)];
  const bar = progress('calibrate', (gen.length + real.length) * kernels.length);
  let done = 0;
  const samples: CalibrationSample[] = [];
  const fitRows: Omit<CalibrationRow, 'predictedMs'>[] = [];
  const realRows: (Omit<CalibrationRow, 'predictedMs'> & { ops: PlanOp[] })[] = [];
  try {
    for (const g of gen) {
      const A = generatedMatrix(g.rows, g.perRow, g.banded);
      for (const c of kernels) {
        const measuredMs = timeMs(c, A);
        samples.push({ ops: boundOps(c, A), measuredMs });
        fitRows.push({ matrix: `${g.banded ? 'banded' : 'random'}-${g.rows}x${g.perRow}`, kernel: c.name, rows: A.rows, nnz: A.values.length, measuredMs });
        bar.tick(++done);
      }
    }
    for (const n of real) {
      const A = toCsr(loadMatrix(join(dataDir, `${n}.mtx`)));
      for (const c of kernels) {
        const measuredMs = timeMs(c, A);
        realRows.push({ matrix: n, kernel: c.name, rows: A.rows, nnz: A.values.length, measuredMs, ops: boundOps(c, A) });
        bar.tick(++done);
      }
    }
  } finally {
    bar.done();
    for (const c of kernels) c.ex.close();
  }

  // The preset's peaks are hardware bounds the effective figures cannot pass.
  const fit = fitCpuParams(samples, {
    threads,
    start: { effGflops: 5, effBandwidthGBs: 10, overheadUs: 10 },
    maxEffGflops: base.peakGflops.f32 * MODEL.cpu.compute,
  });
  const p = fit.params;
  const device = cpuDeviceFor(p, threads, base);
  const round = (x: number): number => Number(x.toPrecision(4));
  const date = new Date().toISOString().slice(0, 10);
  const how = `measured by dype calibrate on ${date} (${threads} thread${threads === 1 ? '' : 's'}${quick ? ', --quick' : ''})`;
  const ratio = base.peakGflops.f64 / base.peakGflops.f32;
  const peakF32 = round(p.effGflops / MODEL.cpu.compute);
  const sys = {
    ...preset,
    description: `${preset.description.replace(/ Calibration will refit the figures\.$/, '')} Compute, bandwidth and launch overhead fitted by \`dype calibrate\`.`,
    devices: preset.devices.map((d) =>
      d === base
        ? { ...d, peakGflops: { ...d.peakGflops, f32: peakF32, f64: round(peakF32 * ratio) }, memBandwidthGBs: round(device.memBandwidthGBs), launchOverheadUs: round(p.overheadUs), threads }
        : d,
    ),
    sources: {
      ...(preset.sources ?? {}),
      'devices[0].peakGflops.f32': `${how}${fit.determined.effGflops ? '' : ' (not determined by the runs: none was compute-bound)'}: effective ${round(p.effGflops)} GFLOP/s fitted on wasm SpMV/SpMM K=${K} (f32) over a generated ladder, stored divided by MODEL.cpu.compute = ${MODEL.cpu.compute} so the model reproduces the fit`,
      'devices[0].peakGflops.f64': `${how}: the f32 figure times the preset's f64/f32 ratio ${ratio}`,
      'devices[0].memBandwidthGBs': `${how}${fit.determined.effBandwidthGBs ? '' : ' (not determined by the runs: none was memory-bound)'}: effective ${round(p.effBandwidthGBs)} GB/s fitted on the same runs, stored divided by MODEL.cpu.memory = ${MODEL.cpu.memory}`,
      'devices[0].launchOverheadUs': `${how}: per-op overhead fitted on the same runs`,
      'devices[0].threads': `${how}: worker threads the kernels were timed with`,
    },
  };
  const text = JSON.stringify(sys, null, 2) + '\n';
  const written = parseSystem(text, o.output ?? '<calibrated system>');
  const d = written.devices.find((x) => x.kind === 'cpu')!;

  const predictedRows = (rows: typeof realRows): CalibrationRow[] => rows.map(({ ops, ...r }) => ({ ...r, predictedMs: predictMs(ops, d) }));
  const evalRows = predictedRows(realRows);
  const summary = errorSummary(evalRows);
  const fitted = { effGflops: p.effGflops, effBandwidthGBs: p.effBandwidthGBs, launchOverheadUs: p.overheadUs, peakGflopsF32: d.peakGflops.f32, memBandwidthGBs: d.memBandwidthGBs, threads, fitRmsRelError: fit.rmsRelError, determined: fit.determined };
  if (o.output !== undefined) writeFileAtomic(o.output, text);

  if (o.json) {
    const fitPred = samples.map((s, i) => ({ ...fitRows[i]!, predictedMs: predictMs(s.ops, d) }));
    out(JSON.stringify({ fitted, fitRows: fitPred, rows: evalRows, error: summary, ...(o.output === undefined ? { system: sys } : { output: o.output }) }, null, 2) + '\n');
    return;
  }
  if (o.output === undefined) out(text);
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const lines = [
    `fitted on ${samples.length} runs (${gen.length} generated matrices x ${kernels.length} kernels, ${threads} thread${threads === 1 ? '' : 's'}): effective ${fitted.effGflops.toFixed(2)} GFLOP/s, ${fitted.effBandwidthGBs.toFixed(2)} GB/s, overhead ${fitted.launchOverheadUs.toFixed(1)} us (fit rms relative error ${pct(fit.rmsRelError)})`,
    ...(['effGflops', 'effBandwidthGBs', 'overheadUs'] as const).filter((k) => !fit.determined[k]).map((k) => `warning: the runs do not determine ${k} (no run is bound by it); its value is arbitrary`),
    `system file: peakGflops.f32 ${d.peakGflops.f32}, memBandwidthGBs ${d.memBandwidthGBs}, launchOverheadUs ${d.launchOverheadUs}${o.output !== undefined ? ` -> ${o.output}` : ''}`,
    '',
    'model error on real matrices (not used in the fit):',
    `${'matrix'.padEnd(16)} ${'kernel'.padEnd(7)} ${'nnz'.padStart(9)} ${'measured ms'.padStart(12)} ${'predicted ms'.padStart(13)} ${'error'.padStart(8)}`,
    ...evalRows.map((r) => `${r.matrix.padEnd(16)} ${r.kernel.padEnd(7)} ${String(r.nnz).padStart(9)} ${r.measuredMs.toFixed(3).padStart(12)} ${r.predictedMs.toFixed(3).padStart(13)} ${pct((r.predictedMs - r.measuredMs) / r.measuredMs).padStart(8)}`),
    evalRows.length === 0 ? `no real matrices found in ${dataDir}` : `median absolute relative error ${pct(summary.medianAbsRelError)}, worst ${pct(summary.worstAbsRelError)}`,
  ];
  // With the system file on stdout, the report goes to stderr so stdout stays valid JSON.
  (o.output === undefined ? (s: string) => void process.stderr.write(s) : out)(lines.join('\n') + '\n');
}
