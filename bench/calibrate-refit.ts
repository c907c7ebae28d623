/**
 * Recorded `dype calibrate --json` timing sets refitted by this build's CPU
 * model, without timing again: per set, the held-out median absolute
 * relative error at one thread and at two, the fit's rms at each, and the
 * fitted branch history; then every set's held-out rows pooled (mean and
 * median absolute log error). With --against DIR the same sets are refitted
 * by another build's model too (its runtime/plan modules, a worktree's
 * `dist`), in the same process, on this build's planned ops. What a change
 * of the model's form does to its error on the same timings
 * (docs/COST-MODEL.md, *The branch history in bits of row lengths*). The
 * held-out two-thread rows are priced at the refit's own thread picks,
 * though they were timed at the picks of the build that timed them.
 * Sets with dense rows (GEMM and the map) are refitted too, with this
 * build's counts, in both dense forms: flops and bytes alone, and with the
 * loop trips (docs/COST-MODEL.md, *Dense ops by loop trips*). The counts
 * describe this build's kernels: a set timed by a build whose kernels loop
 * otherwise (before elementwise rows ran as one loop) is priced as if it
 * were this build's. With --scaled, sets that carry the machine's speed
 * around each timing (`speed`: cli/calibrate-timing.ts SpeedProbe) are
 * fitted and judged on their times scaled by it (time x speed: as at the
 * run's median speed), to see whether scaling would help.
 *   npm run build && node dist/bench/calibrate-refit.js [--against DIR] [--backend native|wasm] [--scaled] SET.json ...
 * (each SET.json the stdout of `node dist/cli/main.js calibrate --backend B --json`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  blockBytesOf,
  calibrationKernel,
  DENSE,
  denseCounts,
  fitDense,
  type DenseName,
} from '../cli/calibrate-dense.js';
import { calibrationOps, PROGRAMS, type ProgramName } from '../cli/calibrate.js';
import { crowdedLeftOut } from '../cli/calibrate-timing.js';
import * as thisFit from '../runtime/plan/calibrate-fit.js';
import { branchHistoryOf } from '../runtime/plan/model.js';
import type { PlanOp, PlanSpec } from '../runtime/plan/types.js';
import type { CsrMatrix } from '../runtime/tensor.js';
import { cpuFitFor } from '../runtime/system/cpu-backend.js';
import { loadSystemFile } from '../runtime/system/load.js';
import { matricesDir, root } from './gcn-guards.js';

const { values: opt, positionals: files } = parseArgs({
  options: { against: { type: 'string' }, backend: { type: 'string', default: 'native' }, scaled: { type: 'boolean' } },
  allowPositionals: true,
});
if (files.length === 0) throw new Error('give one or more SET.json files (dype calibrate --json output)');
if (opt.backend !== 'native' && opt.backend !== 'wasm') throw new Error(`--backend native|wasm, got ${opt.backend}`);
const backend = opt.backend;

type Fit = Pick<typeof thisFit, 'fitCpuParams' | 'predictMs' | 'cpuDeviceFor'>;
const models: [string, Fit][] = [['this build', thisFit]];
if (opt.against !== undefined) {
  const url = pathToFileURL(join(resolve(opt.against), 'runtime', 'plan', 'calibrate-fit.js')).href;
  models.push([`--against ${opt.against}`, (await import(url)) as Fit]);
}

interface Row {
  matrix: string;
  kernel: string;
  threads: number;
  measured_ms: number;
  /** Sets recorded since dype calibrate counted where its native workers ran. */
  workers_on_caller?: number;
  worker_chunks?: number;
  /** Sets recorded since dype calibrate read a probe around each timing: the machine's speed then. */
  speed?: number;
}
interface DenseRecord {
  kernel: DenseName;
  n: number;
  k: number;
  h: number;
  measured_ms: number;
}
interface CalibrateSet {
  fitted: { launch_overhead_us: number };
  fit_rows: Row[];
  rows: Row[];
  rows_threads?: Row[];
  dense?: { fit_rows: DenseRecord[]; rows: DenseRecord[] };
}

const planned = new Map<ProgramName, PlanSpec>();
for (const name of Object.keys(PROGRAMS) as ProgramName[])
  planned.set(name, (await calibrationKernel(name, PROGRAMS[name], 'wasm', [])).spec);
const opsMemo = new Map<string, PlanOp[]>();
const loaded = new Map<string, CsrMatrix>();
const opsOf = (r: Row): PlanOp[] => {
  const key = `${r.matrix}/${r.kernel}`;
  let ops = opsMemo.get(key);
  if (!ops) {
    const found = calibrationOps(planned, r.matrix, r.kernel, matricesDir, loaded);
    if (!found) throw new Error(`${key}: not a matrix and kernel dype calibrate times`);
    opsMemo.set(key, (ops = found.ops));
  }
  return ops;
};

const base = cpuFitFor(loadSystemFile(join(root, 'systems', 'this-machine.json')).devices[0]!, backend).device;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const pct = (x: number): string => (Number.isNaN(x) ? '-' : `${(100 * x).toFixed(1)}%`);

// With --scaled, every sparse row's time scaled by the machine's speed where the set has it.
const withSpeed = (rows: Row[] | undefined): Row[] | undefined =>
  opt.scaled ? rows?.map((r) => ({ ...r, measured_ms: r.measured_ms * (r.speed ?? 1) })) : rows;
const sets = files.map((file) => {
  const set = JSON.parse(readFileSync(file, 'utf8')) as CalibrateSet;
  return {
    file,
    set: {
      ...set,
      fit_rows: withSpeed(set.fit_rows)!,
      rows: withSpeed(set.rows)!,
      rows_threads: withSpeed(set.rows_threads),
    },
  };
});
const results: Record<string, unknown>[] = [];
for (const [label, m] of models) {
  console.log(`\n${label}`);
  console.log('set                        held-out 1T   2T      fit rms 1T   2T      history   efficiency');
  const logs1: number[] = [];
  const logs2: number[] = [];
  for (const { file, set } of sets) {
    // As dype calibrate fits: without the timings whose workers had no cores of their own.
    const rows = set.fit_rows.map((r) => ({
      ...r,
      workersOnCaller: r.workers_on_caller,
      workerChunks: r.worker_chunks,
    }));
    const leftOut = crowdedLeftOut(rows);
    const fit = m.fitCpuParams(
      rows
        .filter((r) => !leftOut.has(r))
        .map((r) => ({ ops: opsOf(r), measuredMs: r.measured_ms, threads: r.threads })),
      { base },
    );
    const device = m.cpuDeviceFor(fit.params, 2, base);
    const errors = (rows: Row[], threads: number): number[] =>
      rows.map((r) => m.predictMs(opsOf(r), { ...device, threads }, false) / r.measured_ms - 1);
    const e1 = errors(set.rows, 1);
    const e2 = errors(set.rows_threads ?? [], 2);
    logs1.push(...e1.map((e) => Math.abs(Math.log1p(e))));
    logs2.push(...e2.map((e) => Math.abs(Math.log1p(e))));
    // Another build's fit may give its history in an older form; this build reads every form.
    const model = fit.params.model;
    const history = branchHistoryOf(model)?.size;
    const row = {
      model: label,
      set: file,
      heldOut1: median(e1.map(Math.abs)),
      heldOut2: median(e2.map(Math.abs)),
      fitRms1: fit.rmsRelError,
      fitRms2: fit.rmsRelErrorThreads,
      history,
      parallelEfficiency: model.parallelEfficiency,
    };
    results.push(row);
    console.log(
      `${file.slice(-26).padEnd(26)} ${pct(row.heldOut1).padStart(11)} ${pct(row.heldOut2).padStart(7)} ` +
        `${pct(row.fitRms1).padStart(12)} ${pct(row.fitRms2).padStart(7)} ${String(history ?? '-').padStart(9)} ` +
        `${row.parallelEfficiency?.toFixed(3) ?? '-'}`,
    );
  }
  console.log(
    `pooled held-out abs log error, mean / median: 1 thread ${mean(logs1).toFixed(3)} / ${median(logs1).toFixed(3)}, ` +
      `2 threads ${logs2.length ? `${mean(logs2).toFixed(3)} / ${median(logs2).toFixed(3)}` : '-'}`,
  );
}
const denseSpecs = new Map<DenseName, PlanSpec>();
for (const name of Object.keys(DENSE) as DenseName[])
  denseSpecs.set(name, (await calibrationKernel(`calibrate_${name}`, DENSE[name], 'wasm', [])).spec);
const blockBytes = blockBytesOf(backend);
const counted = (r: DenseRecord) => ({
  ...r,
  measuredMs: r.measured_ms,
  ...denseCounts(denseSpecs.get(r.kernel)!, r, blockBytes),
});
const denseResults: Record<string, unknown>[] = [];
const denseSets = sets.flatMap(({ file, set }) => (set.dense ? [{ file, set, dense: set.dense }] : []));
if (denseSets.length > 0) {
  console.log(`\ndense ops, this build's counts (trips at ${blockBytes}-byte blocks), held-out median / worst`);
  console.log('set                        flops+bytes       with trips        ns per trip');
  for (const { file, set, dense } of denseSets) {
    const [fitRows, heldRows] = [dense.fit_rows.map(counted), dense.rows.map(counted)];
    const fitted = (trips: boolean) => fitDense(fitRows, heldRows, set.fitted.launch_overhead_us, blockBytes, trips);
    const errs = (f: ReturnType<typeof fitted>): number[] =>
      f.rows.map((r) => Math.abs(r.predictedMs / r.measuredMs - 1));
    const withTrips = fitted(true);
    const [before, after] = [errs(fitted(false)), errs(withTrips)];
    const row = {
      set: file,
      flopsBytes: { median: median(before), worst: Math.max(...before) },
      trips: { median: median(after), worst: Math.max(...after) },
      nsPerDenseTrip: withTrips.nsPerDenseTrip,
    };
    denseResults.push(row);
    console.log(
      `${file.slice(-26).padEnd(26)} ${`${pct(row.flopsBytes.median)} / ${pct(row.flopsBytes.worst)}`.padStart(15)} ` +
        `${`${pct(row.trips.median)} / ${pct(row.trips.worst)}`.padStart(17)} ${row.nsPerDenseTrip.toPrecision(4).padStart(13)}`,
    );
  }
}
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'calibrate-refit.json'),
  JSON.stringify(
    {
      command: `node dist/bench/calibrate-refit.js ${process.argv.slice(2).join(' ')}`,
      backend,
      results,
      dense: denseResults,
    },
    null,
    2,
  ),
);
