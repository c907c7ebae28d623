/**
 * Matrix Market entries to CSR at scale (runtime/io/convert.ts toCsr, with
 * its duplicate check), and a CSR pattern's column-major grouping (what a
 * transposed access lays out, runtime/entry-order.ts), against scipy's
 * coo_matrix(...).tocsr() on the same entries in the same run. A generated
 * power-law matrix (default 1M rows, about 9 entries a row, rows up to
 * 50k) in the entry orders files come in: by row, by column (SuiteSparse),
 * symmetric storage expanded (a lower triangle by column, each entry
 * followed by its mirror), and shuffled. Medians of RUNS runs; prints a
 * table and writes bench/results/convert-scale.json. `--against DIR`
 * times another build's toCsr (a worktree's dist) on the same entries too,
 * the two builds' runs alternating.
 *   npm run build && node dist/bench/convert-scale.js [ROWS] [RUNS] [--against DIR]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { groupedBy } from '../runtime/entry-order.js';
import { toCsr } from '../runtime/io/convert.js';
import type { MtxCoordinate } from '../runtime/io/mtx-data.js';
import { Rng } from '../runtime/random.js';

const args = process.argv.slice(2);
const at = args.indexOf('--against');
const against = at >= 0 ? args.splice(at, 2)[1] : undefined;
const ROWS = Number(args[0] ?? 1_000_000);
const RUNS = Number(args[1] ?? 5);
type ToCsr = typeof toCsr;
const other: ToCsr | undefined = against
  ? ((await import(pathToFileURL(join(resolve(against), 'runtime', 'io', 'convert.js')).href)) as { toCsr: ToCsr })
      .toCsr
  : undefined;
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Distinct (row, col) pairs, sorted by row then column, row lengths Pareto-distributed (shape 1.5). */
function powerLaw(n: number, seed: number): { ri: Int32Array; ci: Int32Array } {
  const rng = new Rng(seed);
  const lens = Array.from({ length: n }, () =>
    Math.min(50_000, Math.floor(3 / Math.pow(1 - rng.uniform(0, 1), 1 / 1.5))),
  );
  const ri: number[] = [];
  const ci: number[] = [];
  for (let r = 0; r < n; r++) {
    const cols = new Set<number>();
    while (cols.size < Math.min(lens[r]!, n)) cols.add(rng.int(n));
    for (const c of [...cols].sort((a, b) => a - b)) {
      ri.push(r);
      ci.push(c);
    }
  }
  return { ri: Int32Array.from(ri), ci: Int32Array.from(ci) };
}

function coordinate(n: number, ri: Int32Array, ci: Int32Array, symmetry: 'general' | 'symmetric'): MtxCoordinate {
  const values = new Float64Array(ri.length);
  for (let k = 0; k < values.length; k++) values[k] = ((k * 2654435761) % 1000) / 1000 - 0.5;
  return {
    kind: 'coordinate',
    rows: n,
    cols: n,
    field: 'real',
    symmetry,
    rowIdx: ri,
    colIdx: ci,
    values,
    lines: new Int32Array(ri.length),
  };
}

function permuted(ri: Int32Array, ci: Int32Array, perm: Int32Array): [Int32Array, Int32Array] {
  return [Int32Array.from(perm, (e) => ri[e]!), Int32Array.from(perm, (e) => ci[e]!)];
}

function cases(n: number): [string, MtxCoordinate][] {
  const { ri, ci } = powerLaw(n, 20261206);
  const idx = Int32Array.from({ length: ri.length }, (_, i) => i);
  const byCol = idx.slice().sort((a, b) => ci[a]! - ci[b]! || ri[a]! - ri[b]!);
  const rng = new Rng(7);
  const shuffled = idx.slice();
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  // Symmetric storage: the lower triangle (r >= c) by column, each off-diagonal entry followed by its mirror.
  const low = [...byCol].filter((e) => ri[e]! >= ci[e]!);
  const sr: number[] = [];
  const sc: number[] = [];
  for (const e of low) {
    sr.push(ri[e]!);
    sc.push(ci[e]!);
    if (ri[e] !== ci[e]) {
      sr.push(ci[e]!);
      sc.push(ri[e]!);
    }
  }
  return [
    ['by row', coordinate(n, ri, ci, 'general')],
    ['by column', coordinate(n, ...permuted(ri, ci, byCol), 'general')],
    ['symmetric', coordinate(n, Int32Array.from(sr), Int32Array.from(sc), 'symmetric')],
    ['shuffled', coordinate(n, ...permuted(ri, ci, shuffled), 'general')],
  ];
}

/** Medians of each function's runs, the functions taking turns run by run. */
function medians(...fns: (() => void)[]): number[] {
  fns.forEach((f) => f());
  const t = fns.map((): number[] => []);
  for (let i = 0; i < RUNS; i++)
    fns.forEach((f, j) => {
      const t0 = performance.now();
      f();
      t[j]!.push(performance.now() - t0);
    });
  return t.map((x) => x.sort((a, b) => a - b)[x.length >> 1]!);
}

function scipyMs(m: MtxCoordinate): number | null {
  const file = join(tmpdir(), `dype-convert-scale-${process.pid}.bin`);
  const nnz = m.rowIdx.length;
  const buf = Buffer.alloc(16 * nnz);
  Buffer.from(m.rowIdx.buffer, m.rowIdx.byteOffset, 4 * nnz).copy(buf, 0);
  Buffer.from(m.colIdx.buffer, m.colIdx.byteOffset, 4 * nnz).copy(buf, 4 * nnz);
  Buffer.from(m.values.buffer, m.values.byteOffset, 8 * nnz).copy(buf, 8 * nnz);
  writeFileSync(file, buf);
  try {
    const script = join(root, 'bench', 'convert-scale', 'scipy_convert.py');
    const r = spawnSync('python3', [script, file, String(m.rows), String(m.cols), String(RUNS)], { encoding: 'utf8' });
    if (r.status !== 0) return null;
    return (JSON.parse(r.stdout) as { median_ms: number }).median_ms;
  } finally {
    rmSync(file, { force: true });
  }
}

const rows: Record<string, unknown>[] = [];
console.log(`power-law ${ROWS} rows; medians of ${RUNS} runs; ${new Date().toISOString()}`);
console.log(
  `order        nnz        toCsr ms  scipy tocsr ms  toCsr/scipy  by-column grouping ms${other ? `  ${against} toCsr ms  it/this` : ''}`,
);
for (const [name, m] of cases(ROWS)) {
  const [ms, otherMs] = medians(() => void toCsr(m, name), ...(other ? [() => void other(m, name)] : []));
  const csr = toCsr(m, name);
  const ri = new Int32Array(csr.colIdx.length);
  for (let r = 0; r < csr.rows; r++) ri.fill(r, csr.rowPtr[r]!, csr.rowPtr[r + 1]!);
  const [groupMs] = medians(
    () => void groupedBy({ rows: csr.rows, cols: csr.cols, ri, ci: csr.colIdx, order: 'row' }, 'col'),
  );
  const sc = scipyMs(m);
  console.log(
    `${name.padEnd(12)} ${String(m.rowIdx.length).padStart(9)} ${ms!.toFixed(1).padStart(10)} ${sc === null ? '     (no scipy)' : sc.toFixed(1).padStart(15)} ${sc === null ? '' : `${(ms! / sc).toFixed(2)}x`.padStart(12)} ${groupMs!.toFixed(1).padStart(22)}${otherMs === undefined ? '' : `${otherMs.toFixed(1).padStart(12 + against!.length)} ${(otherMs / ms!).toFixed(2).padStart(7)}x`}`,
  );
  rows.push({
    order: name,
    nnz: m.rowIdx.length,
    to_csr_ms: ms,
    scipy_tocsr_ms: sc,
    ratio_to_scipy: sc === null ? null : ms! / sc,
    by_column_grouping_ms: groupMs,
    ...(otherMs === undefined ? {} : { against, against_to_csr_ms: otherMs }),
  });
}
const out = join(root, 'bench', 'results');
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, 'convert-scale.json'),
  JSON.stringify(
    {
      rows: ROWS,
      runs: RUNS,
      timedInTurn: true,
      statistic: 'median',
      node: process.version,
      date: new Date().toISOString(),
      results: rows,
    },
    null,
    2,
  ),
);
