/**
 * How far the runtime's sampled features (runtime/features/quick.ts: row
 * statistics from at most 16 blocks of 16 rows, the locality score from the
 * first entries of those rows, the band from their first and last columns)
 * lie from the exact ones (tier 1 over every row pointer, tier 2's locality
 * and band from its own sample of 1024 rows), on every real matrix
 * whose rows exceed the sample (smaller ones are read whole and exact).
 * Per matrix and feature the error, then per feature the median and the
 * 90th percentile over the matrices; the row pointers the sampled row
 * statistics read (mean over ten seeds); the times of both. Then the row
 * statistics on generated power-law patterns of 10^5-10^6 rows (bench/
 * power-law-rows.ts) and on a drift without long rows, against exact tier 1:
 * rowLenMax as sampled / exact, rowLenCv's relative error, the top-1%
 * share's absolute error, median and worst over seeds 0-9, and the row
 * pointers read; with --against DIR, another build's (its dist/) beside.
 *   npm run build && node dist/bench/features-sampled.js [--against DIR]
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { quickBlocks, quickFeatures, sampledRowStats } from '../runtime/features/quick.js';
import { sparseFeaturesOf } from '../runtime/guards/index.js';
import { toCsr } from '../runtime/io/convert.js';
import { isEdgeListPath, loadMatrix } from '../runtime/io/load.js';
import type { SparseFeatures } from '../runtime/plan/types.js';
import type { CsrMatrix } from '../runtime/tensor.js';
import { rowLengthStats } from '../runtime/features/tier1.js';
import {
  POWER_LAW_PATTERNS,
  powerLawName,
  powerLawRows,
  rowPointerPattern,
  type PowerLawRows,
} from './power-law-rows.js';
import { countReads } from './read-count.js';

const { values: opt } = parseArgs({ options: { against: { type: 'string' } } });
type RowStatsOf = typeof sampledRowStats;
const otherStats: RowStatsOf | undefined =
  opt.against === undefined
    ? undefined
    : (
        (await import(pathToFileURL(join(resolve(opt.against), 'runtime', 'features', 'quick.js')).href)) as {
          sampledRowStats: RowStatsOf;
        }
      ).sampledRowStats;

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = join(root, '..', 'shared', 'data', 'matrices');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.mtx') || isEdgeListPath(f))
  .sort();

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const quantile = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
/** Median of several timed calls, in microseconds. */
const time = (f: () => unknown, runs = 9): number => {
  const ts: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    f();
    ts.push((performance.now() - t0) * 1000);
  }
  return median(ts);
};

/** Relative error for the scale-free statistics, absolute for shares and scores in [0, 1]; rowLenMax as sampled / exact (a lower bound). */
const FEATURES: { key: keyof SparseFeatures; how: 'relative' | 'absolute' | 'ratio' }[] = [
  { key: 'rowLenCv', how: 'relative' },
  { key: 'emptyRowFraction', how: 'absolute' },
  { key: 'top1PctNnzShare', how: 'absolute' },
  { key: 'localityScore', how: 'absolute' },
  { key: 'rowLenChangeFraction', how: 'absolute' },
  { key: 'bandwidthEstimateNorm', how: 'absolute' },
  { key: 'rowLenMax', how: 'ratio' },
];
const errorOf = (how: 'relative' | 'absolute' | 'ratio', sampled: number, exact: number): number =>
  how === 'relative'
    ? exact === 0
      ? Math.abs(sampled)
      : Math.abs(sampled - exact) / exact
    : how === 'absolute'
      ? Math.abs(sampled - exact)
      : exact === 0
        ? 1
        : sampled / exact;

/**
 * Row pointers the sampled row statistics read (the sample, the blocks read again for the longest rows, the searches
 * for long rows), the mean over seeds 0-9: counted through a proxy of the row pointers, so not timed.
 */
const SEEDS = 10;
const readsOf = (m: CsrMatrix): number => {
  const counted = countReads(m);
  for (let seed = 0; seed < SEEDS; seed++) sampledRowStats(counted.m, seed);
  return counted.reads() / SEEDS;
};

const rows: Record<string, number | string>[] = [];
for (const f of files) {
  const m = toCsr(loadMatrix(join(dir, f)));
  if (quickBlocks(m.rows, m.values.length) === 0) continue;
  const exact = sparseFeaturesOf(m, 2);
  const q = quickFeatures(m);
  const row: Record<string, number | string> = {
    matrix: f,
    rows: m.rows,
    nnz: m.values.length,
    sampledRows: q.sampledRows,
  };
  for (const { key, how } of FEATURES) row[key] = errorOf(how, q[key] as number, exact[key] as number);
  row.rowPtrReads = readsOf(m);
  row.exactUs = time(() => sparseFeaturesOf(m, 1));
  row.sampledUs = time(() => quickFeatures(m));
  rows.push(row);
}

const fmt = (x: number | string): string =>
  typeof x === 'string' ? x : Number.isInteger(x) ? String(x) : x.toPrecision(3);
const cols = [
  'matrix',
  'rows',
  'nnz',
  'sampledRows',
  ...FEATURES.map((x) => x.key),
  'rowPtrReads',
  'exactUs',
  'sampledUs',
];
console.log(cols.join('\t'));
for (const r of rows) console.log(cols.map((c) => fmt(r[c]!)).join('\t'));
const summary = Object.fromEntries(
  FEATURES.map(({ key, how }) => {
    const xs = rows.map((r) => r[key] as number);
    return [
      key,
      {
        error: how,
        median: median(xs),
        p90: quantile(xs, 0.9),
        worst: how === 'ratio' ? Math.min(...xs) : Math.max(...xs),
      },
    ];
  }),
);
console.log(
  '\nper feature over the matrices (relative: |s - e| / e; absolute: |s - e|; ratio: sampled / exact, a lower bound):',
);
for (const [k, v] of Object.entries(summary))
  console.log(`${k}\t${v.error}\tmedian ${fmt(v.median)}\tp90 ${fmt(v.p90)}\tworst ${fmt(v.worst)}`);
console.log(
  `row pointers read by the row statistics (mean over seeds 0-${SEEDS - 1}), summed over the matrices: ${fmt(rows.reduce((a, r) => a + (r.rowPtrReads as number), 0))}`,
);
console.log(
  `time, median over matrices: exact tier 1 ${fmt(median(rows.map((r) => r.exactUs as number)))} us, sampled ${fmt(median(rows.map((r) => r.sampledUs as number)))} us`,
);

/** Rows drifting from `from` to `to` entries along the matrix: no long row to find, every gap astray of the mean. */
function drift(rows: number, from: number, to: number): CsrMatrix {
  const rowPtr = new Int32Array(rows + 1);
  for (let r = 0; r < rows; r++) rowPtr[r + 1] = rowPtr[r]! + from + Math.floor(((to - from + 1) * r) / rows);
  return rowPointerPattern(rowPtr, rows);
}

const generated: [string, CsrMatrix][] = [
  ...POWER_LAW_PATTERNS.map((p: PowerLawRows): [string, CsrMatrix] => [powerLawName(p), powerLawRows(p)]),
  ['drift 20-30, 1M rows', drift(1_000_000, 20, 30)],
];

interface RowErrors {
  maxRatio: { median: number; worst: number };
  cvError: { median: number; worst: number };
  top1Error: { median: number; worst: number };
  rowPtrReads: number;
}
function rowErrors(m: CsrMatrix, stats: RowStatsOf): RowErrors {
  const exact = rowLengthStats(m.rowPtr, m.rows);
  const ratio: number[] = [];
  const cv: number[] = [];
  const top: number[] = [];
  const counted = countReads(m);
  for (let seed = 0; seed < SEEDS; seed++) {
    const s = stats(counted.m, seed);
    ratio.push(errorOf('ratio', s.rowLenMax, exact.rowLenMax));
    cv.push(errorOf('relative', s.rowLenCv, exact.rowLenCv));
    top.push(errorOf('absolute', s.top1PctNnzShare, exact.top1PctNnzShare));
  }
  return {
    maxRatio: { median: median(ratio), worst: Math.min(...ratio) },
    cvError: { median: median(cv), worst: Math.max(...cv) },
    top1Error: { median: median(top), worst: Math.max(...top) },
    rowPtrReads: counted.reads() / SEEDS,
  };
}
const pair = (x: { median: number; worst: number }): string => `${fmt(x.median)} / ${fmt(x.worst)}`;
const builds: [string, RowStatsOf][] = [
  ['this build', sampledRowStats],
  ...(otherStats ? [[`--against ${opt.against}`, otherStats] as [string, RowStatsOf]] : []),
];
console.log(
  `\ngenerated patterns, row statistics over seeds 0-${SEEDS - 1} (median / worst): rowLenMax sampled / exact, rowLenCv |s - e| / e, top1PctNnzShare |s - e|, row pointers read (mean)`,
);
console.log(['pattern', 'nnz', 'build', 'rowLenMax', 'rowLenCv', 'top1PctNnzShare', 'rowPtrReads'].join('\t'));
const patterns: Record<string, unknown>[] = [];
for (const [name, m] of generated) {
  const nnz = m.rowPtr[m.rows]!;
  for (const [build, stats] of builds) {
    const e = rowErrors(m, stats);
    console.log(
      [name, nnz, build, pair(e.maxRatio), pair(e.cvError), pair(e.top1Error), fmt(e.rowPtrReads)].join('\t'),
    );
    patterns.push({ pattern: name, nnz, build, ...e });
  }
}

mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'features-sampled.json'),
  JSON.stringify(
    {
      command: `node dist/bench/features-sampled.js${opt.against === undefined ? '' : ` --against ${opt.against}`}`,
      summary,
      matrices: rows,
      patterns,
    },
    null,
    2,
  ),
);
