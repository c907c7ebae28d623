/**
 * Cost of the runtime's per-input decision, as shares of one SpMV (wasm
 * backend, 1 thread, f32) on every real matrix with >= 10k stored entries.
 *   (1) The generated gcn guards alone (straight-line code from
 *       codegen/runtime; guards built from four real graphs on paper-1g1f):
 *       median ns per call over batches.
 *   (2) For a pattern the runtime has not seen: the features the guards
 *       need (tier 0 and the sampled row statistics; the locality score only
 *       when the path tests it: runtime/features/quick.ts), the feature
 *       record, the guards and the range check: the aim is <= 2% (median),
 *       <= 5% (max), read from the stream share (streamShare: what the step
 *       adds to each SpMV of a stream of new patterns, the timer outside). Beside it: every sampled feature (locality read), the
 *       exact tier 0+1 pass it replaced, and the runtime's whole decision
 *       (choose, decide, the cost model of the running partition) for a new
 *       pattern and for the same pattern again (alternating with new ones,
 *       and as a pure repeat right after an SpMV).
 *   (3) How often the guards pick the same partition from sampled as from
 *       exact features.
 *   (4) The whole decision in a stream of new patterns: --stream N decides N
 *       new patterns back to back on each of the --stream-matrices (default
 *       whitaker3, bcsstk13), us per decision (what V8's collections add
 *       included); then N decisions on the matrix's own pattern in new
 *       arrays each time (a CSR rebuilt per call), which the runtime finds
 *       again by its features' values. A new pattern is the matrix with its
 *       last k entries dropped, k cycling over more values than the
 *       runtime's memo keeps.
 *   npm run build && node --expose-gc dist/bench/guards.js
 *     [--system paper-1g1f] [--profiles cora.cites,ca-GrQc.mtx,facebook_combined.txt,jazz.mtx]
 *     [--stream 10000] [--stream-matrices whitaker3.mtx,bcsstk13.mtx] [--floor]
 * --floor times the same step on bench/bare-scan.ts's statistics (the sample's rows read, nothing else: no search
 * for long rows, no longest 1%, the shape unchecked), a bound on what any statistics from this sample leave of
 * the step, saved as bench/results/guards-floor.json.
 * The held-out case of test/guards/heldout.test.ts: --system paper-2g2f
 * --profiles ca-GrQc.mtx,bcsstk33.mtx,luxembourg_osm.mtx,dnn_n1024-l1.mtx.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { emitRuntimeTs } from '../codegen/runtime/emit-ts.js';
import { emitWasm, wasmManifest } from '../codegen/wasm/emit.js';
import { programHash } from '../codegen/native/hash.js';
import { Chooser } from '../runtime/engine/choose.js';
import { MEMO_PROBLEMS } from '../runtime/engine/memo.js';
import { Decider } from '../runtime/engine/decide.js';
import type { RuntimeConfig } from '../runtime/engine/types.js';
import { quickFeatures, SampledFeatures } from '../runtime/features/quick.js';
import { featureRecord, sparseFeaturesOf } from '../runtime/guards/index.js';
import { planOptions } from '../runtime/guards/build.js';
import { guardStep as compiledStep } from '../runtime/guards/step.js';
import type { GuardNode } from '../runtime/guards/types.js';
import { featureView } from '../runtime/guards/view.js';
import { toCsr } from '../runtime/io/convert.js';
import { isEdgeListPath, loadMatrix } from '../runtime/io/load.js';
import type { Binding } from '../runtime/plan/bind.js';
import type { SparseFeatures } from '../runtime/plan/types.js';
import { SwitchPolicy } from '../runtime/policy/policy.js';
import type { CsrMatrix } from '../runtime/tensor.js';
import { createWasmExecutor } from '../runtime/wasm/executor.js';
import { bareRowStats } from './bare-scan.js';
import {
  checkGcnParams,
  decisionsOn as gcnDecisions,
  GCN_PARAMS,
  type DecisionClasses,
  type Decisions,
} from './gcn-decisions.js';
import { gcnDims, gcnGuards, lowered, matricesDir as dir, newPatternStep, root, spmvInputs } from './gcn-guards.js';

const compile = (file: string) => lowered(file).kernels[0]!;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const files = readdirSync(dir)
  .filter((f) => f.endsWith('.mtx') || isEdgeListPath(f))
  .sort();
const mats = new Map<string, CsrMatrix>();
for (const f of files) mats.set(f, toCsr(loadMatrix(join(dir, f))));

const { values: opt } = parseArgs({
  options: {
    system: { type: 'string', default: 'paper-1g1f' },
    profiles: { type: 'string', default: 'cora.cites,ca-GrQc.mtx,facebook_combined.txt,jazz.mtx' },
    stream: { type: 'string', default: '0' },
    'stream-matrices': { type: 'string', default: 'whitaker3.mtx,bcsstk13.mtx' },
    floor: { type: 'boolean', default: false },
  },
});
/** --floor: the step's statistics from bench/bare-scan.ts (their sample's reads alone), a bound on what any statistics from this sample would leave of the step. */
const FLOOR = opt.floor;
/** A new pattern's features as the step takes them: the runtime's, or with --floor the bare scan's record. */
const newFeatures = (m: CsrMatrix): SparseFeatures => (FLOOR ? bareRowStats(m) : new SampledFeatures(m));
const STREAM = Number(opt.stream);
if (!Number.isInteger(STREAM) || STREAM < 0) throw new Error(`--stream ${opt.stream}: expected a count of decisions`);
const bindWith = (f: SparseFeatures, n: number): Binding => ({
  sparse: new Map([['A', f]]),
  dims: gcnDims(n),
  scalars: new Map(),
});
const profileFiles = opt.profiles.split(',');
for (const f of profileFiles) if (!mats.has(f)) throw new Error(`--profiles: no matrix ${f} in the shared matrices`);
// The generated guards of gcn, as the runtime target writes them.
const { module: gcnModule, kernel: gcn, spec, system, plan } = gcnGuards(opt.system, profileFiles, (f) => mats.get(f)!);
const manifest = wasmManifest(gcn, [], true);
const ts = emitRuntimeTs(
  'gcn',
  'examples/gcn.dy',
  programHash(gcnModule),
  [{ kernel: gcn, spec, objective: 'throughput', plans: { throughput: plan }, manifest }],
  'dype/runtime',
);
const body = /export function gcnGuard_throughput\(f: GuardFeatures\): number \{\n([\s\S]*?)\n\}\n/.exec(ts)![1]!;
const guard = new Function('f', body) as (f: Record<string, number>) => number;
const square = [...mats].filter(([, m]) => m.rows === m.cols);
const records = square.map(([, m]) => featureRecord(bindWith(sparseFeaturesOf(m, 2), m.rows)));
const tested = [...new Set([...body.matchAll(/f\["([^"]+)"\]/g)].map((x) => x[1]!))];

// The runtime's chooser and switching policy over the same guards (every partition taken as runnable: this times decisions, not devices).
const cfg: RuntimeConfig = {
  program: 'gcn',
  programHash: programHash(gcnModule),
  kernel: gcn.name,
  manifest,
  spec,
  objective: 'throughput',
  guards: { throughput: plan },
  params: GCN_PARAMS,
  guard: { throughput: guard },
};
checkGcnParams(gcn);
const popts = planOptions(system, plan);
const rt: DecisionClasses = { Chooser, Decider, SwitchPolicy, memoProblems: MEMO_PROBLEMS };
const decisionsOn = (m: CsrMatrix): Decisions => gcnDecisions(rt, cfg, system, popts, m);

// (1) guards alone: batches of calls cycling over the records.
const BATCH = 200_000;
let sink = 0;
const batches: number[] = [];
for (let b = 0; b < 21; b++) {
  const t0 = performance.now();
  for (let i = 0; i < BATCH; i++) sink += guard(records[i % records.length]!);
  batches.push(((performance.now() - t0) * 1e6) / BATCH);
}
const guardNs = median(batches.slice(1));
const depth = (body.match(/if \(/g) ?? []).length;

// (2) per matrix with >= 10k nnz.
const spmv = compile('spmv.dy');
const wasm = await emitWasm(spmv);
const exec = await createWasmExecutor(wasm.binary, wasm.manifest, { threads: 1 });
/** Medians of `a` and of each of `others`, timed in turn within each repetition, so load from other processes hits all alike. */
const lastMins: number[] = [];
const BATCHED = 10;
const timeAlong = (a: () => unknown, others: (() => unknown)[], reps: number): number[] => {
  for (const f of [a, ...others]) f();
  const xs: number[][] = [a, ...others].map(() => []);
  for (let r = 0; r < reps; r++)
    [a, ...others].forEach((f, i) => {
      const t0 = performance.now();
      f();
      xs[i]!.push(performance.now() - t0);
    });
  // The minimum too: on a loaded machine it is the closest to each code's own cost (the median carries the other processes' share).
  lastMins.splice(0, lastMins.length, ...xs.map((x) => Math.min(...x)));
  return xs.map(median);
};
/**
 * What `extra` adds to each run of `run` in a stream of inputs: blocks of runs with and without it before each
 * run, timed whole and in turn; the median over the pairs of (with - without) / without. The timer sits outside
 * the blocks, so its own cost (a few microseconds cold, between kernels) is not counted, while the caches the
 * kernel leaves cold for the step (and the step for the kernel) are.
 */
/**
 * What `step` costs run right after `run`, as it runs between kernels: the median over `n` alternations of one run
 * and one timed step (process.hrtime, a few tens of nanoseconds), less the median of an empty function timed alike,
 * ns. Finer than streamShare's blocks (their sums carry the kernel's own spread), the timer's resolution aside.
 */
const AFTER_KERNEL = 1500;
const noop = (): number => 0;
const afterKernelNs = (run: () => unknown, step: () => unknown, n: number): number => {
  const xs: number[] = [];
  const zero: number[] = [];
  for (let i = 0; i < n; i++) {
    run();
    let t0 = process.hrtime.bigint();
    step();
    xs.push(Number(process.hrtime.bigint() - t0));
    run();
    t0 = process.hrtime.bigint();
    noop();
    zero.push(Number(process.hrtime.bigint() - t0));
  }
  return median(xs) - median(zero);
};
const streamShare = (run: () => unknown, extra: () => unknown, runMs: number, pairs: number): number => {
  const n = Math.max(8, Math.ceil(4 / runMs));
  const ratios: number[] = [];
  const plain = (): number => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) run();
    return performance.now() - t0;
  };
  const withExtra = (): number => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      extra();
      run();
    }
    return performance.now() - t0;
  };
  // The blocks' order alternates between pairs: a host whose load rises or falls over a pair would otherwise add
  // its drift to one side every time.
  for (let p = 0; p < pairs; p++) {
    const first = p % 2 === 0;
    const a = first ? plain() : withExtra();
    const b = first ? withExtra() : plain();
    const without = first ? a : b;
    ratios.push(((first ? b : a) - without) / without);
  }
  return median(ratios) * 100;
};
const view = featureView({ sparse: ['A'], dims: ['n', 'f', 'h', 'c'], scalars: [] });
/** The binding as the runtime's bindInputs builds it for every call, same pattern or not (runtime/engine/inputs.ts: maps filled by set). */
const bindAsRuntime = (f: SparseFeatures, n: number): Binding => {
  const sparse = new Map<string, SparseFeatures>();
  sparse.set('A', f);
  const dims = new Map<string, number>();
  dims.set('n', n);
  dims.set('f', 64);
  dims.set('h', 64);
  dims.set('c', 16);
  return { sparse, dims, scalars: new Map() };
};
// A new pattern's step as the chooser takes it (bench/gcn-guards.ts); the binding every call builds is timed apart (bindAsRuntime).
const guardStep = newPatternStep(plan);
// A runtime decides per input, so the feature code it runs is optimised by the JIT: warm it on every matrix first.
for (let i = 0; i < 300; i++)
  for (const [, m] of mats)
    if (m.values.length >= 10_000)
      sink +=
        guardStep(newFeatures(m), m) +
        quickFeatures(m).rowLenCv +
        bindAsRuntime(m as unknown as SparseFeatures, 1).dims.size;
interface Row {
  matrix: string;
  rows: number;
  nnz: number;
  spmvUs: number;
  /** The features the path needs, record, guards, range check; a pattern not seen before. */
  guardStepUs: number;
  sharePct: number;
  /** The same share from the minimum times over the repetitions (SpMV and the step alike). */
  shareMinPct: number;
  /** The step's share in a stream of new patterns, one SpMV each (streamShare: no timer inside). */
  streamSharePct: number;
  /** The step right after an SpMV, median over AFTER_KERNEL single timed calls (afterKernelNs), ns, and as a share. */
  afterKernelNs: number;
  afterKernelSharePct: number;
  /** Building the call's binding (every call does, same pattern or not), in the same stream: not part of the step. */
  bindSharePct: number;
  /** Per step in batches of BATCHED new patterns (the sampled rows warm after the first). */
  batchedUs: number;
  batchedSharePct: number;
  /** Whether the path read the locality score. */
  localityRead: boolean;
  /** Whether the step read any row (the sampled row statistics). */
  rowsRead: boolean;
  allSampledUs: number;
  exactT01Us: number;
  exactT01SharePct: number;
  decisionNewUs: number;
  decisionNewSharePct: number;
  decisionSameUs: number;
  decisionSameSharePct: number;
  /** The whole decision for the same inputs every time, right after an SpMV (a runtime of its own, no new pattern between): ns. */
  decisionRepeatNs: number;
  decisionRepeatSharePct: number;
}
const rows: Row[] = [];
for (const [name, m] of mats) {
  if (m.values.length < 10_000) continue;
  const inputs = spmvInputs(m);
  const decisions = decisionsOn(m);
  let localityRead = false;
  let rowsRead = false;
  // gcn's A is n x n: the whole decision is timed on square matrices only.
  const sq = m.rows === m.cols;
  // With --expose-gc: a full collection first, so the previous matrix's garbage is not collected inside these timings.
  (globalThis as { gc?: () => void }).gc?.();
  const [spmvMs, step, batched, all, t01] = timeAlong(
    () => exec.execute(inputs),
    [
      () => {
        const f = newFeatures(m);
        sink += guardStep(f, m);
        localityRead = f instanceof SampledFeatures ? f.localityTaken : false;
        rowsRead = f instanceof SampledFeatures ? f.rowStatsTaken : true;
      },
      // Ten new patterns' steps back to back: a single call of a few microseconds carries the timer's and the call site's own overhead.
      () => {
        for (let i = 0; i < BATCHED; i++) sink += guardStep(newFeatures(m), m);
      },
      () => (sink += guardStep(quickFeatures(m), m)),
      () => (sink += guard(featureRecord(bindWith(sparseFeaturesOf(m, 1), m.rows)))),
    ],
    41,
  );
  const mins = [...lastMins];
  const streamSharePct = streamShare(
    () => exec.execute(inputs),
    () => (sink += guardStep(newFeatures(m), m)),
    spmvMs!,
    31,
  );
  const afterNs = afterKernelNs(
    () => exec.execute(inputs),
    () => (sink += guardStep(newFeatures(m), m)),
    AFTER_KERNEL,
  );
  const bindSharePct = streamShare(
    () => exec.execute(inputs),
    () => (sink += bindAsRuntime(m as unknown as SparseFeatures, m.rows).dims.size),
    spmvMs!,
    31,
  );
  // The whole decisions apart: a new pattern out of the guards' ranges runs the DP, whose garbage would land in the small steps' timings as collections.
  const [, dNew = NaN, dSame = NaN] = sq
    ? timeAlong(
        () => exec.execute(inputs),
        [() => (sink += decisions.decide('new')), () => (sink += decisions.decide('same'))],
        41,
      )
    : [];
  // A pure repeat (the same graph, the common case), each decision right after an SpMV, on a runtime that has seen no
  // other pattern: the column before alternates with new patterns, whose decisions may switch the running partition.
  const repeat = sq ? decisionsOn(m) : undefined;
  const dRepeatNs = repeat
    ? afterKernelNs(
        () => exec.execute(inputs),
        () => (sink += repeat.decide('same')),
        AFTER_KERNEL,
      )
    : NaN;
  const pct = (ms: number): number => (ms / spmvMs!) * 100;
  const shareMinPct = (mins[1]! / mins[0]!) * 100;
  const batchedUs = (batched! / BATCHED) * 1e3;
  rows.push({
    matrix: name,
    rows: m.rows,
    nnz: m.values.length,
    spmvUs: spmvMs! * 1e3,
    guardStepUs: step! * 1e3,
    sharePct: pct(step!),
    shareMinPct,
    streamSharePct,
    afterKernelNs: afterNs,
    afterKernelSharePct: (afterNs / 1e6 / spmvMs!) * 100,
    bindSharePct,
    batchedUs,
    batchedSharePct: pct(batched! / BATCHED),
    localityRead,
    rowsRead,
    allSampledUs: all! * 1e3,
    exactT01Us: t01! * 1e3,
    exactT01SharePct: pct(t01!),
    decisionNewUs: dNew! * 1e3,
    decisionNewSharePct: pct(dNew!),
    decisionSameUs: dSame! * 1e3,
    decisionSameSharePct: pct(dSame!),
    decisionRepeatNs: dRepeatNs,
    decisionRepeatSharePct: pct(dRepeatNs / 1e6),
  });
}
exec.close();

// (4) The whole decision in a stream of new patterns, back to back (collections included), and in a stream of the
// same pattern in new arrays each time.
const stream: {
  matrix: string;
  decisions: number;
  usPerDecision: number;
  path: string;
  usPerDecisionCopies: number;
  copiesReused: number;
}[] = [];
const streamOf = (decide: () => number): number => {
  for (let i = 0; i < Math.min(200, STREAM); i++) sink += decide();
  (globalThis as { gc?: () => void }).gc?.();
  const t0 = performance.now();
  for (let i = 0; i < STREAM; i++) sink += decide();
  return ((performance.now() - t0) * 1e3) / STREAM;
};
for (const name of STREAM > 0 ? opt['stream-matrices'].split(',') : []) {
  const m = mats.get(name);
  if (!m || m.rows !== m.cols) throw new Error(`--stream-matrices: ${name} is not a square shared matrix`);
  const { decide, chooser, inputs } = decisionsOn(m);
  const us = streamOf(() => decide('new'));
  const path = chooser.choose(inputs('new')).path.join(' / ');
  const copies = decisionsOn(m);
  const usCopies = streamOf(() => copies.decide('copy'));
  let reused = 0;
  for (let i = 0; i < 100; i++) if (!copies.chooser.choose(copies.inputs('copy')).fresh) reused++;
  stream.push({
    matrix: name,
    decisions: STREAM,
    usPerDecision: us,
    path,
    usPerDecisionCopies: usCopies,
    copiesReused: reused,
  });
}

const leaves = (n: GuardNode): string[] =>
  'leaf' in n
    ? [
        `partition ${n.leaf}${n.also ? ` or ${n.also.join(', ')} (cost model)` : ''}: checks ${n.checks?.join(', ') || 'tier 0 only'}`,
      ]
    : [...leaves(n.le), ...leaves(n.gt)];
console.log(`leaves: ${leaves(plan.tree).join('; ')}`);
console.log(
  `guards alone (gcn, ${plan.partitions.length} partitions, ${depth} tests in the code, testing ${tested.join(', ')}): median ${guardNs.toFixed(1)} ns per call over ${records.length} feature records (sink ${sink % 7})`,
);
console.log('');
console.log(
  "                                           |  new pattern: guards' features  | stream  after SpMV   bind | batched x10 | all sampled | exact t0+1+guards |   runtime decision, new   |   runtime decision, same | repeat after SpMV",
);
console.log(
  'matrix                      rows       nnz  SpMV us |      us  share %      read | share %     ns      %      % |  us share % |          us |       us  share % |        us  share %        |        us  share % |     ns  share %',
);
for (const r of rows)
  console.log(
    `${r.matrix.padEnd(24)} ${String(r.rows).padStart(7)} ${String(r.nnz).padStart(9)} ${r.spmvUs.toFixed(1).padStart(8)} | ${r.guardStepUs.toFixed(2).padStart(7)} ${r.sharePct.toFixed(2).padStart(8)} ${(r.rowsRead ? (r.localityRead ? 'rows+loc' : 'rows') : '-').padStart(9)} | ${r.streamSharePct.toFixed(2).padStart(7)} ${r.afterKernelNs.toFixed(0).padStart(6)} ${r.afterKernelSharePct.toFixed(2).padStart(6)} ${r.bindSharePct.toFixed(2).padStart(6)} | ${r.batchedUs.toFixed(2).padStart(4)} ${r.batchedSharePct.toFixed(2).padStart(6)} | ${r.allSampledUs.toFixed(2).padStart(11)} | ${r.exactT01Us.toFixed(1).padStart(8)} ${r.exactT01SharePct.toFixed(2).padStart(8)} | ${r.decisionNewUs.toFixed(1).padStart(9)} ${r.decisionNewSharePct.toFixed(2).padStart(8)}        | ${r.decisionSameUs.toFixed(1).padStart(9)} ${r.decisionSameSharePct.toFixed(2).padStart(8)} | ${r.decisionRepeatNs.toFixed(0).padStart(6)} ${r.decisionRepeatSharePct.toFixed(2).padStart(8)}`,
  );
const col = (k: keyof Row): number[] => rows.map((r) => r[k] as number);
const summary = (k: keyof Row): { median: number; max: number; of: number } => {
  const xs = col(k).filter((x) => !Number.isNaN(x));
  return { median: median(xs), max: Math.max(...xs), of: xs.length };
};
const s = {
  guardStep: summary('sharePct'),
  guardStepMin: summary('shareMinPct'),
  guardStepStream: summary('streamSharePct'),
  afterKernel: summary('afterKernelSharePct'),
  bindStream: summary('bindSharePct'),
  guardStepBatched: summary('batchedSharePct'),
  exactT01: summary('exactT01SharePct'),
  decisionNew: summary('decisionNewSharePct'),
  decisionSame: summary('decisionSameSharePct'),
  decisionRepeat: summary('decisionRepeatSharePct'),
};
const line = (what: string, x: { median: number; max: number; of: number }): string =>
  `${what}: median ${x.median.toFixed(2)}%, max ${x.max.toFixed(2)}% (${x.of} matrices)`;
console.log(
  `\nas a share of one SpMV (1 thread)${FLOOR ? ' -- --floor: the step on bench/bare-scan.ts\u2019s statistics (their sample read, nothing else), not the runtime\u2019s' : ''}:`,
);
console.log(
  `  ${line('new pattern, the guards\u2019 features + the compiled guard step (tree and range checks)', s.guardStep)} (aim: 2% median, 5% max)`,
);
console.log(`  ${line('the same from the minimum times over the repetitions', s.guardStepMin)}`);
console.log(
  `  ${line('the same in a stream of new patterns, one SpMV each (timer outside; the aim is read here)', s.guardStepStream)}`,
);
console.log(
  `  ${line(`the same right after an SpMV, single timed calls (median of ${AFTER_KERNEL}, the timer's own time taken off)`, s.afterKernel)}`,
);
console.log(
  `  ${line('building the call\u2019s binding (every call, same pattern or not; not in the step), in the same stream', s.bindStream)}`,
);
console.log(`  ${line(`the same per step in batches of ${BATCHED} new patterns`, s.guardStepBatched)}`);
console.log(`  ${line('exact tier 0+1 + guards (what it replaced)', s.exactT01)}`);
console.log(`  ${line('the runtime\u2019s whole decision, new pattern', s.decisionNew)}`);
console.log(
  `  ${line('the runtime\u2019s whole decision, the same pattern again (alternating with new patterns)', s.decisionSame)}`,
);
console.log(
  `  ${line(`the runtime\u2019s whole decision, a pure repeat right after an SpMV (median of ${AFTER_KERNEL})`, s.decisionRepeat)}`,
);
// The guards' pick with sampled features against exact ones, over every square real matrix.
// And the compiled step's verdict (the leaf, and whether its range checks pass), which decides a re-plan.
const rawStep = compiledStep(plan);
let agree = 0;
let sameVerdict = 0;
for (const [, m] of square) {
  const sampled = bindWith(newFeatures(m), m.rows);
  const exact = bindWith(sparseFeaturesOf(m, 2), m.rows);
  if (guard(view(sampled)) === guard(featureRecord(exact))) agree++;
  if (rawStep(sampled) === rawStep(exact)) sameVerdict++;
}
console.log(
  `the guards pick the same partition from ${FLOOR ? 'the bare scan\u2019s' : 'sampled'} as from exact features on ${agree} of ${square.length} square real matrices, and give the same leaf and range verdict on ${sameVerdict}`,
);
for (const x of stream)
  console.log(
    `the whole decision in a stream of ${x.decisions} new patterns of ${x.matrix}: ${x.usPerDecision.toFixed(1)} us each (${x.path}); its pattern in new arrays each time: ${x.usPerDecisionCopies.toFixed(1)} us each (${x.copiesReused} of 100 took the kept choice)`,
  );
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', FLOOR ? 'guards-floor.json' : 'guards.json'),
  JSON.stringify(
    {
      guardNsMedian: guardNs,
      guardTests: depth,
      guardFeatures: tested,
      partitions: plan.partitions.length,
      records: records.length,
      system: opt.system,
      statistics: FLOOR ? 'bench/bare-scan.ts (--floor)' : 'runtime/features/quick.ts SampledFeatures',
      profiles: profileFiles,
      decisionStream: stream,
      shares: s,
      guardAgreement: { same: agree, sameVerdict, of: square.length },
      matrices: rows,
    },
    null,
    2,
  ),
);
