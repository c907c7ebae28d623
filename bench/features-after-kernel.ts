/**
 * What a new pattern's sampled row statistics (runtime/features/quick.ts
 * `sampledRowStats`) cost where the runtime takes them: right after a
 * kernel, the caches and branch predictors left to the kernel. Per matrix,
 * one call timed right after each 1-thread wasm SpMV (f32) of the same
 * matrix, on a fresh view of its arrays (a pattern the runtime has not
 * seen); the median of each round of 200 such calls less an empty function
 * timed alike; over 15 rounds (the variants' order rotating between them)
 * the minimum and the median of those medians, ns. With --against DIR
 * (another build's dist folder, e.g. a git worktree's) its statistics are
 * timed in the same process, each call after its own SpMV, so both meet
 * the same host. With --step, this build's whole new-pattern step on gcn's
 * guards (bench/gcn-guards.ts, paper-1g1f) as well: `features`, a
 * SampledFeatures and the two row statistics a cost-model leaf reads;
 * `step`, the compiled guard step over the call's binding holding it, as
 * the chooser takes it; `step on the record`, the same step over the plain
 * record sampledRowStats returns (what a step that read the statistics as
 * one record would cost; the step reads no field the record lacks); with
 * --against as well, `step, --against`: the other build's whole step (its
 * features class, guards and step), in the same process.
 * With --floor, bench/bare-scan.ts's bare read of the same sample as well.
 *   npm run build && node dist/bench/features-after-kernel.js [--against DIR] [--step] [--floor] [matrix ...]
 * (default: adder_dcop_05.mtx cage8.mtx whitaker3.mtx bcsstk13.mtx
 * facebook_combined.txt bayer10.mtx fidapex6.mtx luxembourg_osm.mtx
 * Groebner_id2003_aug.mtx).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { emitWasm } from '../codegen/wasm/emit.js';
import { SampledFeatures, sampledRowStats } from '../runtime/features/quick.js';
import type { SparseFeatures } from '../runtime/plan/types.js';
import type { CsrMatrix } from '../runtime/tensor.js';
import { createWasmExecutor } from '../runtime/wasm/executor.js';
import { bareRowStats } from './bare-scan.js';
import { gcnGuards, lowered, matrix, newPatternStep, root, spmvInputs } from './gcn-guards.js';

const ROUNDS = 15;
const PER_ROUND = 200;
const WARM = 3000;

const { values: opt, positionals } = parseArgs({
  options: {
    against: { type: 'string' },
    step: { type: 'boolean', default: false },
    floor: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const names = positionals.length
  ? positionals
  : [
      'adder_dcop_05.mtx',
      'cage8.mtx',
      'whitaker3.mtx',
      'bcsstk13.mtx',
      'facebook_combined.txt',
      'bayer10.mtx',
      'fidapex6.mtx',
      'luxembourg_osm.mtx',
      'Groebner_id2003_aug.mtx',
    ];

type Stats = (m: CsrMatrix) => { rowLenCv: number };
/** A timed call on a new pattern `m` (fresh views of `of`'s arrays). */
type Timed = (m: CsrMatrix, of: CsrMatrix) => number;
const variants: [string, Timed][] = [['this build', (m) => sampledRowStats(m).rowLenCv]];
if (opt.against !== undefined) {
  const url = pathToFileURL(join(resolve(opt.against), 'runtime', 'features', 'quick.js')).href;
  const other = (await import(url)) as { sampledRowStats?: Stats };
  const stats = other.sampledRowStats;
  if (typeof stats !== 'function')
    throw new Error(`--against ${opt.against}: no sampledRowStats in runtime/features/quick.js there`);
  variants.push([`--against ${opt.against}`, (m) => stats(m).rowLenCv]);
}
// The sample's reads alone (bench/bare-scan.ts): what is left of the statistics' cost is their own work.
if (opt.floor) variants.push(['bare scan', (m) => bareRowStats(m).rowLenCv]);
if (opt.step) {
  const step = newPatternStep(gcnGuards().plan);
  variants.push(
    [
      'features',
      (m) => {
        const f = new SampledFeatures(m);
        return f.rowLenCv + f.top1PctNnzShare;
      },
    ],
    ['step', (m, of) => step(new SampledFeatures(m), of)],
    // The record lacks the lazily taken features (locality, row changes, band), which gcn's step does not read.
    ['step on the record', (m, of) => step(sampledRowStats(m) as unknown as SparseFeatures, of)],
  );
  if (opt.against !== undefined) {
    const at = (...p: string[]): string => pathToFileURL(join(resolve(opt.against!), ...p)).href;
    const { SampledFeatures: Other } = (await import(at('runtime', 'features', 'quick.js'))) as {
      SampledFeatures: typeof SampledFeatures;
    };
    const guards = (await import(at('bench', 'gcn-guards.js'))) as {
      gcnGuards?: typeof gcnGuards;
      newPatternStep?: typeof newPatternStep;
    };
    if (guards.gcnGuards === undefined || guards.newPatternStep === undefined)
      throw new Error(`--against ${opt.against}: no gcnGuards or newPatternStep in bench/gcn-guards.js there`);
    const otherStep = guards.newPatternStep(guards.gcnGuards().plan);
    variants.push(['step, --against', (m, of) => otherStep(new Other(m), of)]);
  }
}

const spmvModule = lowered('spmv.dy');
const wasm = await emitWasm(spmvModule.kernels[0]!);
const exec = await createWasmExecutor(wasm.binary, wasm.manifest, { threads: 1 });

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const mats = names.map((n) => [n, matrix(n)] as const);
/** A new pattern over the same arrays: a fresh object and row-pointer view, which no cache has seen. */
const fresh = (m: CsrMatrix): CsrMatrix => ({ ...m, rowPtr: m.rowPtr.subarray(0) });
const noop: Timed = () => 0;
let sink = 0;
for (let w = 0; w < WARM; w++) for (const [, m] of mats) for (const [, f] of variants) sink += f(fresh(m), m);

const results: { matrix: string; spmvUs: number; ns: Record<string, { min: number; median: number }> }[] = [];
for (const [name, m] of mats) {
  const inputs = spmvInputs(m);
  const slots: [string, Timed][] = [['', noop], ...variants];
  const rounds = slots.map((): number[] => []);
  const spmv: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const ns = slots.map((): number[] => []);
    for (let i = 0; i < PER_ROUND; i++)
      for (let k = 0; k < slots.length; k++) {
        // The variants' order rotates between rounds (the empty function stays first): a slot's place in the cycle is not its cost.
        const s = k === 0 ? 0 : 1 + ((k - 1 + round) % variants.length);
        const t = process.hrtime.bigint();
        exec.execute(inputs);
        const t0 = process.hrtime.bigint();
        sink += slots[s]![1](fresh(m), m);
        ns[s]!.push(Number(process.hrtime.bigint() - t0));
        if (s === 0) spmv.push(Number(t0 - t));
      }
    const zero = median(ns[0]!);
    ns.forEach((xs, s) => rounds[s]!.push(median(xs) - zero));
  }
  const row = {
    matrix: name,
    spmvUs: median(spmv) / 1e3,
    ns: Object.fromEntries(
      variants.map(([label], v) => [label, { min: Math.min(...rounds[v + 1]!), median: median(rounds[v + 1]!) }]),
    ),
  };
  results.push(row);
  console.log(
    `${name.padEnd(26)} SpMV ${row.spmvUs.toFixed(1).padStart(6)} us  ` +
      variants
        .map(([label]) => `${label}: ${row.ns[label]!.min.toFixed(0)} / ${row.ns[label]!.median.toFixed(0)} ns`)
        .join('  '),
  );
}
exec.close();
console.log(`(min / median over ${ROUNDS} rounds of the median of ${PER_ROUND} calls after an SpMV; sink ${sink % 7})`);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'features-after-kernel.json'),
  JSON.stringify(
    { command: `node dist/bench/features-after-kernel.js ${process.argv.slice(2).join(' ')}`.trim(), results },
    null,
    2,
  ),
);
