/**
 * The GPU model against the GPU: anchors a system file's GPU constants on the
 * kernel times bench/gpu/run.sh measured, and reports the model's error and
 * its choice of schedule with the constants it has and with the anchored ones.
 *
 *   npm run build && node dist/bench/gpu/fit.js RESULTS [WORK] [--system h200-cpu]
 *
 * RESULTS is run.sh's OUT (its csv/ folder: dype_check's rows, every variant of
 * every op, median of 20 after 3 warm-ups); WORK the prepared work
 * (bench/results/gpu-work: jobs.txt, data/, the generated matrices' specs). The
 * SpMV and SpMM jobs are priced as the planner prices them: the catalogue's
 * time of each schedule on the system's GPU for the job's matrix features,
 * plus the sparse call floor. Three anchors, each from the measurements that
 * isolate it: gpuModel.sparseFloorUs (small SpMV, where every schedule is its
 * launch), gpuModel.queuedLaunchUs (what a launch queued after the first adds:
 * adaptive-rows against warp-per-row on the same small SpMV, where a row is long
 * enough for adaptive-rows' long-row pass; timings from stubs that queued it on
 * every call, before it took the longest-row figure, price the others wrong) and
 * gpuModel.effectiveBandwidthGBs (the largest regular SpMV, its time past the
 * floor being its DRAM bytes); and launchOverheadUs, a dense kernel's call
 * (the tiled and elementwise kernels of gcn, PageRank and SSSP). The model's other constants (imbalance, L2,
 * locality) stay as they are. Writes RESULTS/fit.json and prints a table.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { boundDims, loadSystem } from '../../cli/planning.js';
import {
  laneSteps,
  mergeSearchSteps,
  QUEUED_AFTER_FIRST,
  queuedAfterFirst,
  warpRows,
} from '../../runtime/catalogue/gpu.js';
import { callOverheadUs, implTimes } from '../../runtime/catalogue/index.js';
import type { GpuImpl } from '../../runtime/catalogue/names.js';
import { features } from '../../runtime/features/index.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import type { PlanOp } from '../../runtime/plan/types.js';
import type { DeviceSpec, GpuModelSpec } from '../../runtime/system/types.js';
import type { CsrMatrix } from '../../runtime/tensor.js';
import { compiledExample, jobBindings } from './examples.js';
import { GENERATED, generateMatrix } from './generated.js';

const root = resolve(import.meta.dirname, '..', '..', '..');
const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: { system: { type: 'string', default: 'h200-cpu' } },
});
if (positionals.length < 1) throw new Error('usage: node dist/bench/gpu/fit.js RESULTS [WORK] [--system NAME]');
const results = resolve(positionals[0]!);
const work = resolve(positionals[1] ?? join(root, 'bench', 'results', 'gpu-work'));
const sys = loadSystem({ system: opt.system }, opt.system);
const gpu = sys.devices.find((d) => d.kind === 'gpu');
if (!gpu?.gpuModel) throw new Error(`${opt.system}: no GPU with a gpuModel`);

interface Row {
  ex: string;
  job: string;
  variant: string;
  measuredMs: number;
  op: PlanOp;
}

/** The job's sparse matrix: a carried Matrix Market file, or a generated one made here by the same rules. */
const matrices = new Map<string, CsrMatrix>();
function matrixOf(arg: string): CsrMatrix {
  const gen = /^gen\/(.+)\.csr$/.exec(arg);
  const key = gen ? gen[1]! : arg;
  let m = matrices.get(key);
  if (!m) {
    if (gen) {
      const spec = GENERATED.find((g) => g.name === gen[1]);
      if (!spec) throw new Error(`${arg}: no generated matrix of that name in bench/gpu/generated.ts`);
      m = generateMatrix(spec);
    } else m = toCsr(loadMatrix(join(work, arg)));
    matrices.clear(); // jobs on one matrix are consecutive: keep one 10^7-entry matrix at a time
    matrices.set(key, m);
  }
  return m;
}

function opOf(ex: string, a: CsrMatrix, k: number | undefined): PlanOp {
  const c = compiledExample(root, ex);
  const { tensors, scalars } = jobBindings(a, k);
  const problem = bindProblem(c.spec, {
    sparse: new Map([['A', features(a, 2)]]),
    dims: boundDims(c.kernel, tensors, scalars),
    scalars,
  });
  if (problem.ops.length !== 1) throw new Error(`${ex}: expected one op, found ${problem.ops.length}`);
  return problem.ops[0]!;
}

function csvRows(file: string): Record<string, string>[] {
  const [head, ...lines] = readFileSync(file, 'utf8').trim().split('\n');
  const keys = head!.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [keys[i]!, v])));
}

/** dype_check's second timing of adaptive-rows, its longest-row figure 0 so that it queues its long-row pass. */
const UNKNOWN_LONGEST = 'adaptive-rows:longest-unknown';
const rows: Row[] = [];
/** Those second timings; none in results of stubs that queued the pass on every call (before ABI version 2). */
const forcedPass: Row[] = [];
const unmeasured: string[] = [];
const csvs = new Set(readdirSync(join(results, 'csv')));
for (const line of readFileSync(join(work, 'jobs.txt'), 'utf8').split('\n')) {
  const [ex, job, ...args] = line.trim().split(/\s+/);
  if (ex !== 'spmv' && ex !== 'spmm') continue;
  const csv = `${ex}-${job}.csv`;
  if (!csvs.has(csv)) {
    unmeasured.push(`${ex} ${job}`);
    continue;
  }
  const a = args.find((x) => x.startsWith('A='))!.slice(2);
  const k = /-K(\d+)$/.exec(job!)?.[1];
  const op = opOf(ex, matrixOf(a), k === undefined ? undefined : Number(k));
  for (const r of csvRows(join(results, 'csv', csv))) {
    if (r['op'] === 'program' || r['check'] !== 'ok') continue;
    const t = { ex, job: job!, variant: r['variant']!, measuredMs: Number(r['median_ms']), op };
    (r['variant'] === UNKNOWN_LONGEST ? forcedPass : rows).push(t);
  }
}
/**
 * Results without the forced-pass timings come from stubs before native ABI version 2, which also predate
 * merge-path SpMM's row kernel taking an output element a thread (codegen/cuda/merge.ts): its thread per row
 * then walked the columns, a cost the catalogue no longer prices. Those timings are left out.
 */
const passAlways = forcedPass.length === 0;
const oldRowKernel = passAlways ? rows.filter((r) => r.ex === 'spmm' && r.variant === 'merge-path') : [];
if (oldRowKernel.length > 0) {
  console.log(
    `left out: ${oldRowKernel.length} merge-path SpMM timings of the row kernel before it took an element a thread`,
  );
  for (const r of oldRowKernel) rows.splice(rows.indexOf(r), 1);
}
if (rows.length === 0) throw new Error('no checked SpMV or SpMM timings to fit');
/** Matrices this small make every schedule its launches (the H200 runs 10^4 entries in about a microsecond). */
const SMALL_NNZ = 200_000;
/** A lane walk this long is far from the launch's own latency (a step is tens to hundreds of ns). */
const MIN_WALK = 1000;

function predict(r: Row, d: DeviceSpec): number {
  const t = implTimes(r.op, d).find((x) => x.impl === r.variant);
  if (!t) throw new Error(`${r.ex} ${r.job}: the catalogue has no GPU variant '${r.variant}'`);
  // Older stubs queued what the catalogue no longer charges (adaptive-rows' pass where no row is long).
  const extra = stubQueued(r) - queuedAfterFirst(r.variant as GpuImpl, r.op);
  return t.ms + callOverheadUs(r.op, d) / 1e3 + (extra * d.gpuModel!.queuedLaunchUs) / 1e3;
}

const before = gpu.gpuModel;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const small = (r: Row): boolean => (r.op.sparse?.nnz ?? Infinity) < SMALL_NNZ;
const timeOf = (ex: string, job: string, variant: string): number | undefined =>
  rows.find((r) => r.ex === ex && r.job === job && r.variant === variant)?.measuredMs;
const jobsOf = (pred: (r: Row) => boolean): [string, string][] => [
  ...new Map(rows.filter(pred).map((r) => [`${r.ex} ${r.job}`, [r.ex, r.job] as [string, string]])).values(),
];

// (1) The per-call floor: on SpMV of at most SMALL_NNZ entries every schedule is its launch; the fastest
// one-launch schedule's time, median over those jobs.
const oneLaunch = (Object.keys(QUEUED_AFTER_FIRST) as GpuImpl[]).filter((i) => QUEUED_AFTER_FIRST[i] === 0);
const floors = jobsOf((r) => r.ex === 'spmv' && small(r)).map(([ex, job]) =>
  Math.min(...oneLaunch.map((v) => timeOf(ex, job, v) ?? Infinity)),
);
const floorUs = median(floors) * 1e3;
// (2) A launch queued after the first. Stubs that take the longest-row figure: adaptive-rows timed with the figure
// 0 against itself with the exact figure, on small SpMV without a long row (the same kernels, the pass's memset and
// launch besides). Older stubs queued the pass on every call: adaptive-rows over warp-per-row on the same small SpMV.
/** What the measured stub queued after its first launch (the catalogue's rule for current stubs). */
const stubQueued = (r: Row): number =>
  passAlways ? QUEUED_AFTER_FIRST[r.variant as GpuImpl] : queuedAfterFirst(r.variant as GpuImpl, r.op);
const smallSpmv = jobsOf((r) => r.ex === 'spmv' && small(r));
const queuedPairs = passAlways
  ? smallSpmv.map(([ex, job]) => [timeOf(ex, job, 'adaptive-rows')!, timeOf(ex, job, 'warp-per-row')!])
  : smallSpmv
      .filter(
        ([ex, job]) => queuedAfterFirst('adaptive-rows', rows.find((r) => r.ex === ex && r.job === job)!.op) === 0,
      )
      .map(([ex, job]) => [
        forcedPass.find((r) => r.ex === ex && r.job === job)!.measuredMs,
        timeOf(ex, job, 'adaptive-rows')!,
      ]);
if (queuedPairs.length === 0)
  throw new Error(`no SpMV job under ${SMALL_NNZ} entries to anchor gpuModel.queuedLaunchUs on`);
const queuedUs = median(queuedPairs.map(([a, b]) => (a! - b!) / QUEUED_AFTER_FIRST['adaptive-rows'])) * 1e3;
// (3) The sustained bandwidth: the largest regular SpMV (row-per-thread, rows of equal length, its gathers in
// the L2), whose time past the floor is its DRAM bytes; the model's bytes at its current bandwidth scaled.
const anchor = rows
  .filter((r) => r.ex === 'spmv' && r.variant === 'row-per-thread' && r.op.sparse!.rowLenCv < 0.5)
  .reduce((a, r) => (r.op.sparse!.nnz > a.op.sparse!.nnz ? r : a));
const workMs = implTimes(anchor.op, gpu).find((t) => t.impl === 'row-per-thread')!.ms;
const bandwidthGBs = Math.round((before.effectiveBandwidthGBs * workMs) / (anchor.measuredMs - floorUs / 1e3));
// (4) A dense kernel's call (launchOverheadUs): the tiled and elementwise kernels of the other examples, whose work
// on these sizes is a fraction of their launch, median (timed whatever their program's check: each is one op).
const denseMs = [...csvs]
  .filter((f) => /^(gcn|pagerank|sssp)-/.test(f))
  .flatMap((f) => csvRows(join(results, 'csv', f)))
  .filter((r) => r['variant'] === 'tiled' || r['variant'] === 'elementwise')
  .map((r) => Number(r['median_ms']));
// (5) One step of a lane's walk (laneStepNs): jobs whose longest lane walk (runtime/catalogue/gpu.ts laneSteps)
// is long and whose bytes, as the model counts them with the anchors above, explain under a quarter of their time
// past the floor and queued launches: that time over the walk's steps, median.
/** The system's GPU with some of its model's constants replaced. */
const withModel = (m: Partial<GpuModelSpec>): DeviceSpec => ({ ...gpu, gpuModel: { ...before, ...m } });
const bytesOnly = withModel({
  effectiveBandwidthGBs: bandwidthGBs,
  sparseFloorUs: floorUs,
  queuedLaunchUs: queuedUs,
  laneStepNs: 0,
  rowChainNs: 0,
  searchStepNs: 0,
});
const walks = rows.flatMap((r) => {
  const steps = laneSteps(r.variant as GpuImpl, r.op);
  const paid = (floorUs + stubQueued(r) * queuedUs) / 1e3;
  const past = r.measuredMs - paid;
  const bytesMs = predict(r, bytesOnly) - paid;
  return steps >= MIN_WALK && bytesMs < past / 4 ? [{ r, steps, ns: (past * 1e6) / steps }] : [];
});
if (walks.length === 0) throw new Error(`no job has a lane walk of ${MIN_WALK} steps that its bytes do not explain`);
const laneStepNs = median(walks.map((w) => w.ns));
// (6) A row's chain under a full GPU (rowChainNs): jobs with many more warps than the GPU holds (MIN_ROUNDS rounds
// of residentWarps) whose bytes explain under a third and whose longest walk under a quarter of their time past the
// floor and queued launches: that time over the rounds, less each round's steps at laneStepNs, median.
const MIN_ROUNDS = 8;
const chains = rows.flatMap((r) => {
  const { warps, steps } = warpRows(r.variant as GpuImpl, r.op);
  const rounds = Math.ceil(warps / before.residentWarps);
  const paid = (floorUs + stubQueued(r) * queuedUs) / 1e3;
  const past = r.measuredMs - paid;
  const bytesMs = predict(r, bytesOnly) - paid;
  const walkMs = (laneSteps(r.variant as GpuImpl, r.op) * laneStepNs) / 1e6;
  if (rounds < MIN_ROUNDS || bytesMs >= past / 3 || walkMs >= past / 4) return [];
  return [{ r, rounds, ns: (past * 1e6) / rounds - steps * laneStepNs }];
});
if (chains.length === 0)
  throw new Error(`no job runs ${MIN_ROUNDS} rounds of resident warps that its bytes do not explain`);
const rowChainNs = median(chains.map((c) => c.ns));
// (7) A step of merge-path's global search (searchStepNs): its SpMV timings, their time past the floor, queued
// launches, bytes and the rounds' walked items, over the rounds' search steps (two binary searches over the rows a
// block), median.
const searches = rows.flatMap((r) => {
  if (r.ex !== 'spmv' || r.variant !== 'merge-path') return [];
  const { warps, steps } = warpRows('merge-path', r.op);
  const rounds = Math.ceil(warps / before.residentWarps);
  const paid = (floorUs + stubQueued(r) * queuedUs) / 1e3;
  const rest = r.measuredMs - paid - (predict(r, bytesOnly) - paid) - (rounds * steps * laneStepNs) / 1e6;
  return [{ r, rounds, ns: (rest * 1e6) / (rounds * mergeSearchSteps(r.op)) }];
});
if (searches.length === 0) throw new Error('no merge-path SpMV timing to anchor gpuModel.searchStepNs on');
const searchStepNs = median(searches.map((c) => c.ns));
const anchors = {
  laneStepNs: Number(laneStepNs.toFixed(0)),
  rowChainNs: Number(rowChainNs.toFixed(0)),
  searchStepNs: Number(searchStepNs.toFixed(0)),
  launchOverheadUs: denseMs.length > 0 ? Number((median(denseMs) * 1e3).toFixed(1)) : undefined,
  sparseFloorUs: Number(floorUs.toFixed(1)),
  queuedLaunchUs: Number(queuedUs.toFixed(1)),
  effectiveBandwidthGBs: bandwidthGBs,
  from: {
    launchOverheadUs: `median of ${denseMs.length} tiled and elementwise kernels of gcn, pagerank and sssp`,
    sparseFloorUs: `median over ${floors.length} SpMV jobs under ${SMALL_NNZ} entries of the fastest one-launch schedule`,
    queuedLaunchUs: passAlways
      ? `median over the same jobs of (adaptive-rows - warp-per-row) / its queued launches (stubs that queued adaptive-rows' long-row pass on every call)`
      : `median over ${queuedPairs.length} of those jobs without a long row of (adaptive-rows with the longest-row figure unknown - with it exact) / the pass's queued operations`,
    laneStepNs: `median over ${walks.length} timings whose lane walks of ${MIN_WALK} steps or more outlast their bytes 4x (${walks
      .map((w) => `${w.r.ex} ${w.r.job} ${w.r.variant} ${w.ns.toFixed(0)} ns`)
      .join('; ')})`,
    rowChainNs: `median over ${chains.length} timings of ${MIN_ROUNDS} or more rounds of ${before.residentWarps} resident warps that their bytes and walks do not explain (${chains
      .map((c) => `${c.r.ex} ${c.r.job} ${c.r.variant} ${c.rounds} rounds ${c.ns.toFixed(0)} ns`)
      .join('; ')})`,
    searchStepNs: `median over ${searches.length} merge-path SpMV timings (${searches
      .map((c) => `${c.r.job} ${c.rounds} round(s) ${c.ns.toFixed(0)} ns`)
      .join('; ')})`,
    effectiveBandwidthGBs: `spmv ${anchor.job} row-per-thread (${anchor.op.sparse!.nnz} entries), ${anchor.measuredMs} ms less the floor`,
  },
};
const after = withModel({
  effectiveBandwidthGBs: bandwidthGBs,
  sparseFloorUs: anchors.sparseFloorUs,
  queuedLaunchUs: anchors.queuedLaunchUs,
  laneStepNs: anchors.laneStepNs,
  rowChainNs: anchors.rowChainNs,
  searchStepNs: anchors.searchStepNs,
});

/** Per job: whether the model's cheapest variant is the fastest measured, and what its choice costs over the fastest. */
function choices(d: DeviceSpec): { right: number; jobs: number; lossGeomean: number } {
  const byJob = new Map<string, Row[]>();
  for (const r of rows) byJob.set(`${r.ex} ${r.job}`, [...(byJob.get(`${r.ex} ${r.job}`) ?? []), r]);
  let right = 0;
  let logLoss = 0;
  for (const rs of byJob.values()) {
    const fastest = rs.reduce((a, b) => (b.measuredMs < a.measuredMs ? b : a));
    const chosen = rs.reduce((a, b) => (predict(b, d) < predict(a, d) ? b : a));
    if (chosen === fastest) right++;
    logLoss += Math.log(chosen.measuredMs / fastest.measuredMs);
  }
  return { right, jobs: byJob.size, lossGeomean: Math.exp(logLoss / byJob.size) };
}
const errors = (d: DeviceSpec): number[] => rows.map((r) => Math.abs(Math.log(predict(r, d) / r.measuredMs)));

if (unmeasured.length > 0) console.log(`no dype_check timings (left out): ${unmeasured.join(', ')}`);
console.log(`${rows.length} checked timings of ${new Set(rows.map((r) => `${r.ex} ${r.job}`)).size} SpMV/SpMM jobs`);
console.log(
  `${'job'.padEnd(24)} ${'variant'.padEnd(16)} ${'measured ms'.padStart(11)} ${'before'.padStart(9)} ${'after'.padStart(9)}`,
);
for (const r of rows)
  console.log(
    `${`${r.ex} ${r.job}`.padEnd(24)} ${r.variant.padEnd(16)} ${r.measuredMs.toFixed(4).padStart(11)} ${predict(r, gpu).toFixed(4).padStart(9)} ${predict(r, after).toFixed(4).padStart(9)}`,
  );
const summary = (name: string, d: DeviceSpec) => {
  const c = choices(d);
  const e = errors(d);
  return {
    model: name,
    queuedLaunchUs: d.gpuModel!.queuedLaunchUs,
    laneStepNs: d.gpuModel!.laneStepNs,
    rowChainNs: d.gpuModel!.rowChainNs,
    searchStepNs: d.gpuModel!.searchStepNs,
    effectiveBandwidthGBs: d.gpuModel!.effectiveBandwidthGBs,
    sparseFloorUs: d.gpuModel!.sparseFloorUs,
    medianErrorFactor: Math.exp(median(e)),
    maxErrorFactor: Math.exp(Math.max(...e)),
    fastestChosen: `${c.right} of ${c.jobs}`,
    chosenOverFastestGeomean: c.lossGeomean,
  };
};
const report = [summary('before', gpu), summary('after', after)];
console.log('anchors:', JSON.stringify(anchors, null, 2));
console.table(report);
writeFileSync(
  join(results, 'fit.json'),
  JSON.stringify(
    {
      system: opt.system,
      unmeasured,
      rows: rows.map((r) => ({
        ex: r.ex,
        job: r.job,
        variant: r.variant,
        measuredMs: r.measuredMs,
        beforeMs: predict(r, gpu),
        afterMs: predict(r, after),
      })),
      anchors,
      report,
    },
    null,
    2,
  ),
);
console.log(`wrote ${join(results, 'fit.json')}`);
