/**
 * Whether the sampled row statistics change what the planner picks on
 * power-law graphs (bench/power-law-rows.ts patterns, seeds 0-9): gcn and
 * SpMV planned on paper-1g1f, paper-2g2f and h200-cpu (its GPU model
 * anchored on measurements) for the throughput objective
 * from the sampled statistics (this build's, and with --against DIR another
 * build's), the pick priced on the problem the exact statistics give, its
 * loss against that problem's optimum; and each op's implementation on
 * each device (the one its dispatch runs: row-per-thread, warp-per-row,
 * ... on a GPU) picked from the sampled statistics, priced with the exact
 * ones, its loss against the fastest. The pattern's other features are
 * held the same for every variant (no columns are drawn: locality 0 and
 * band 1, as for random columns; the exact change share).
 *   npm run build && node dist/bench/power-law-picks.js [--against DIR]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { plannedSpec } from '../codegen/implementations.js';
import { sampledRowStats, type RowStats } from '../runtime/features/quick.js';
import { rowLengthStats } from '../runtime/features/tier1.js';
import { choiceKey, scoreChoices } from '../runtime/guards/build.js';
import { bindProblem } from '../runtime/plan/bind.js';
import { fastestVariant, variantTimes } from '../runtime/plan/cost.js';
import { choicesOf, objectiveValue, planPareto } from '../runtime/plan/dp.js';
import { DEFAULT_ENERGY_SCOPE, DEFAULT_STREAM_LENGTH } from '../runtime/plan/figures.js';
import type { PlanSpec, SparseFeatures } from '../runtime/plan/types.js';
import { loadSystemFile } from '../runtime/system/load.js';
import type { CsrMatrix } from '../runtime/tensor.js';
import { gcnDims, lowered, root } from './gcn-guards.js';
import { POWER_LAW_PATTERNS, powerLawName, powerLawRows } from './power-law-rows.js';

const { values: opt } = parseArgs({ options: { against: { type: 'string' } } });
type StatsOf = (m: CsrMatrix, seed: number) => RowStats;
const builds: [string, StatsOf][] = [['this build', sampledRowStats]];
if (opt.against !== undefined) {
  const url = pathToFileURL(join(resolve(opt.against), 'runtime', 'features', 'quick.js')).href;
  builds.push([`--against ${opt.against}`, ((await import(url)) as { sampledRowStats: StatsOf }).sampledRowStats]);
}
const SEEDS = 10;
const popts = {
  objective: 'throughput' as const,
  energyScope: DEFAULT_ENERGY_SCOPE,
  streamLength: DEFAULT_STREAM_LENGTH,
};
const examples: { name: string; spec: PlanSpec; dims: (n: number) => Map<string, number> }[] = [
  'spmv.dy',
  'gcn.dy',
].map((file) => {
  const m = lowered(file);
  return {
    name: file.replace('.dy', ''),
    spec: plannedSpec(m, file, m.kernels[0]!.name),
    dims:
      file === 'gcn.dy'
        ? gcnDims
        : (n: number) =>
            new Map([
              ['m', n],
              ['n', n],
            ]),
  };
});
const systems = ['paper-1g1f', 'paper-2g2f', 'h200-cpu'].map((s) => loadSystemFile(join(root, 'systems', `${s}.json`)));

/** The planner's record: `rows` the statistics, the rest held the same for every variant. */
const featuresOf = (
  s: Omit<SparseFeatures, 'localityScore' | 'bandwidthEstimateNorm'>,
  change: number,
): SparseFeatures => ({
  rows: s.rows,
  cols: s.cols,
  nnz: s.nnz,
  rowLenMean: s.rowLenMean,
  rowLenMax: s.rowLenMax,
  rowLenCv: s.rowLenCv,
  emptyRowFraction: s.emptyRowFraction,
  top1PctNnzShare: s.top1PctNnzShare,
  localityScore: 0,
  rowLenChangeFraction: change,
  bandwidthEstimateNorm: 1,
});

const rows: Record<string, string | number>[] = [];
console.log(
  [
    'pattern',
    'kernel',
    'system',
    'build',
    'same partition',
    'worst loss %',
    'same implementation',
    'worst loss %',
  ].join('\t'),
);
for (const p of POWER_LAW_PATTERNS) {
  const m = powerLawRows(p);
  const exactStats = rowLengthStats(m.rowPtr, m.rows);
  const exact = featuresOf(
    { ...exactStats, rows: m.rows, cols: m.cols, nnz: m.rowPtr[m.rows]! },
    exactStats.rowLenChangeFraction,
  );
  for (const ex of examples)
    for (const sys of systems) {
      const bind = (f: SparseFeatures) =>
        bindProblem(ex.spec, { sparse: new Map([['A', f]]), dims: ex.dims(m.rows), scalars: new Map() });
      const exactP = bind(exact);
      const best = planPareto(sys, exactP, popts).pareto[0];
      if (!best) throw new Error(`${powerLawName(p)}: no mapping of ${ex.name} on ${sys.name}`);
      const optimum = objectiveValue(best, popts.objective);
      const bestKey = choiceKey(choicesOf(exactP, best));
      for (const [build, stats] of builds) {
        let same = 0;
        let worst = 0;
        let implSame = 0;
        let implPicks = 0;
        let implWorst = 0;
        for (let seed = 0; seed < SEEDS; seed++) {
          const sp = bind(featuresOf(stats(m, seed), exact.rowLenChangeFraction!));
          const pick = planPareto(sys, sp, popts).pareto[0];
          if (!pick) throw new Error(`${powerLawName(p)}, seed ${seed}: no mapping of ${ex.name} on ${sys.name}`);
          const c = choicesOf(sp, pick);
          if (choiceKey(c) === bestKey) same++;
          worst = Math.max(worst, scoreChoices(sys, exactP, c, popts) / optimum - 1);
          sp.ops.forEach((op, i) => {
            for (const d of sys.devices) {
              const picked = fastestVariant(op, d);
              const fastest = fastestVariant(exactP.ops[i]!, d);
              if (!picked || !fastest) continue;
              const priced = variantTimes(exactP.ops[i]!, d).find((v) => v.variant === picked.variant)!.ms;
              implPicks++;
              if (picked.variant === fastest.variant) implSame++;
              implWorst = Math.max(implWorst, priced / fastest.ms - 1);
            }
          });
        }
        const row = {
          pattern: powerLawName(p),
          kernel: ex.name,
          system: sys.name,
          build,
          samePartition: same,
          worstLossPct: worst * 100,
          sameImplementation: implSame,
          implementationPicks: implPicks,
          worstImplementationLossPct: implWorst * 100,
        };
        rows.push(row);
        console.log(
          [
            row.pattern,
            row.kernel,
            row.system,
            build,
            `${same} / ${SEEDS}`,
            (worst * 100).toFixed(1),
            `${implSame} / ${implPicks}`,
            (implWorst * 100).toFixed(1),
          ].join('\t'),
        );
      }
    }
}
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'power-law-picks.json'),
  JSON.stringify(
    {
      command: `node dist/bench/power-law-picks.js${opt.against === undefined ? '' : ` --against ${opt.against}`}`,
      date: new Date().toISOString(),
      rows,
    },
    null,
    2,
  ),
);
