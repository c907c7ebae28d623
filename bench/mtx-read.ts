/**
 * Read speed of runtime/io over the shared test matrices: loadMatrix (file
 * read + parse + duplicate check) and the parse alone (bytes in memory) on
 * every file in ../shared/data/matrices, median of 5 runs each after one
 * warm-up pass over all files. Prints a table and writes
 * bench/results/mtx-read.json. Run from the repository root:
 *   npx tsc -p tsconfig.json && node dist/bench/mtx-read.js
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEdgeList } from '../runtime/io/edgelist.js';
import { isEdgeListPath, loadMatrix } from '../runtime/io/load.js';
import { parseMatrixMarket } from '../runtime/io/mtx-read.js';

const RUNS = 5;

/** The nearest directory at or above `start` holding this project's package.json. */
function findRepoRoot(start: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'dype') return dir;
      } catch {
        // not a readable package.json; keep looking
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

const repoRoot = findRepoRoot(dirname(fileURLToPath(import.meta.url))) ?? findRepoRoot(process.cwd()) ?? process.cwd();
const matrixDir = resolve(repoRoot, '../shared/data/matrices');
if (!existsSync(matrixDir)) {
  console.error(`mtx-read bench: no matrix directory at ${matrixDir}`);
  process.exit(1);
}

interface Row {
  file: string;
  bytes: number;
  nnz: number;
  /** loadMatrix: read the file and parse it. */
  ms: number;
  mbPerS: number;
  /** Parsing bytes already in memory. */
  parseMs: number;
  parseMBPerS: number;
}

function medianMs(run: () => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[RUNS >> 1]!;
}

const round = (x: number): number => Math.round(x * 1000) / 1000;
const mbPerS = (bytes: number, ms: number): number => bytes / 1e6 / (ms / 1e3);

const files = readdirSync(matrixDir)
  .filter((f) => f.endsWith('.mtx') || f.endsWith('.cites') || f.endsWith('.txt'))
  .sort();
// One untimed pass over every file first, so that the JIT has compiled the readers.
for (const file of files) loadMatrix(join(matrixDir, file));

const rows: Row[] = [];
for (const file of files) {
  const path = join(matrixDir, file);
  const bytes = statSync(path).size;
  const first = loadMatrix(path);
  const nnz = first.kind === 'coordinate' ? first.values.length : first.data.length;
  const ms = medianMs(() => loadMatrix(path));
  const text = readFileSync(path);
  const parse = isEdgeListPath(path) ? parseEdgeList : parseMatrixMarket;
  const parseMs = medianMs(() => parse(text, path));
  rows.push({
    file,
    bytes,
    nnz,
    ms: round(ms),
    mbPerS: round(mbPerS(bytes, ms)),
    parseMs: round(parseMs),
    parseMBPerS: round(mbPerS(bytes, parseMs)),
  });
}

const totalBytes = rows.reduce((s, r) => s + r.bytes, 0);
const totalMs = rows.reduce((s, r) => s + r.ms, 0);
const totalParseMs = rows.reduce((s, r) => s + r.parseMs, 0);
const aggregate = mbPerS(totalBytes, totalMs);
const aggregateParse = mbPerS(totalBytes, totalParseMs);

const pad = (s: string | number, n: number): string => String(s).padStart(n);
const line = (cells: (string | number)[]): string =>
  cells[0]!.toString().padEnd(26) + [10, 9, 9, 8, 10, 12].map((w, i) => pad(cells[i + 1]!, w)).join('');
console.log(line(['file', 'bytes', 'nnz', 'ms', 'MB/s', 'parse ms', 'parse MB/s']));
for (const r of rows) {
  console.log(
    line([
      r.file,
      r.bytes,
      r.nnz,
      r.ms.toFixed(2),
      r.mbPerS.toFixed(1),
      r.parseMs.toFixed(2),
      r.parseMBPerS.toFixed(1),
    ]),
  );
}
console.log(
  line([
    'all files',
    totalBytes,
    '',
    totalMs.toFixed(2),
    aggregate.toFixed(1),
    totalParseMs.toFixed(2),
    aggregateParse.toFixed(1),
  ]),
);
console.log(
  `aggregate: ${aggregate.toFixed(1)} MB/s read + parse, ${aggregateParse.toFixed(1)} MB/s parse only ` +
    `(1 MB = 10^6 bytes; median of ${RUNS} runs per file)`,
);

const outDir = join(repoRoot, 'bench', 'results');
mkdirSync(outDir, { recursive: true });
const result = {
  bench: 'mtx-read',
  what: 'ms: loadMatrix (file read + parse + duplicate check); parseMs: parsing bytes already in memory',
  runsPerFile: RUNS,
  statistic: 'median',
  node: process.version,
  date: new Date().toISOString(),
  files: rows,
  totalBytes,
  totalMs: round(totalMs),
  aggregateMBPerS: round(aggregate),
  totalParseMs: round(totalParseMs),
  aggregateParseMBPerS: round(aggregateParse),
};
writeFileSync(join(outDir, 'mtx-read.json'), `${JSON.stringify(result, null, 2)}\n`);
console.log(`wrote ${join('bench', 'results', 'mtx-read.json')}`);
