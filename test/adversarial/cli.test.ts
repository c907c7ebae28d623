/**
 * Adversarial Matrix Market inputs through `dype run` and `dype run
 * --project` (issue 14 item 4), in a fresh temporary directory: each gives
 * a run whose partition is stated (exit 0, outputs equal y = A x) or one
 * clear error with its DY code naming the file or input (exit 1, no stack
 * trace, no output file): one dense row among empty and short rows, every
 * row empty, 1 x 1, 0 x 0, 2^31 - 1 declared columns (spmv refuses the x it
 * would need; a kernel that needs no vector that long runs), infinite
 * values (carried through as IEEE 754 says, counted in the report), NaN
 * text, negative and zero sizes. The entry count mismatches are in
 * test/cli/bad-input.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walkTree } from '../../runtime/guards/tree.js';
import type { GuardNode } from '../../runtime/guards/types.js';
import {
  cleanup,
  cpuRuntimeCompileArgs,
  example,
  freshDir,
  listDir,
  MM_COORD_REAL,
  runCliAsync,
  stackFrames,
  writeLines,
  type CliResult,
} from '../helpers/cli.js';
import { denseRowMatrix } from './inputs.js';

const SPMV = example('spmv.dy');
const GCN = example('gcn.dy');
const M = join(import.meta.dirname, '..', '..', '..', 'shared', 'data', 'matrices');
const HAVE_DATA = existsSync(M);
const HAVE_GXX = HAVE_DATA && spawnSync('g++', ['--version']).status === 0;

const dir = freshDir('dype-adversarial-');
afterAll(() => cleanup(dir));

/** Writes a coordinate file into the working directory of the runs; returns its name there. */
const coord = (name: string, size: string, entries: readonly string[]): string => (
  writeLines(dir, name, [MM_COORD_REAL, size, ...entries]),
  name
);

/** A square matrix as coordinate lines. */
function mtxOf(name: string, m: ReturnType<typeof denseRowMatrix>): string {
  const lines: string[] = [];
  for (let r = 0; r < m.rows; r++)
    for (let k = m.rowPtr[r]!; k < m.rowPtr[r + 1]!; k++) lines.push(`${r + 1} ${m.colIdx[k]! + 1} ${m.values[k]!}`);
  return coord(name, `${m.rows} ${m.cols} ${m.values.length}`, lines);
}

const FILES = {
  // Row 3 holds every column; rows 1, 2 and 4 are empty; row 5 has one entry.
  denseRow: () => coord('dense-row.mtx', '5 5 6', ['3 1 1', '3 2 2', '3 3 3', '3 4 4', '3 5 5', '5 5 3']),
  empty: () => coord('empty.mtx', '5 5 0', []),
  one: () => coord('one.mtx', '1 1 1', ['1 1 2.5']),
  zero: () => coord('zero.mtx', '0 0 0', []),
  wide: () => coord('wide.mtx', '3 2147483647 4', ['1 1 1', '2 2147483647 2', '3 5 3', '3 1001 4']),
  tall: () => coord('tall.mtx', '2147483647 3 2', ['1 1 1', '2147483647 3 2']),
  tooWide: () => coord('too-wide.mtx', '3 2147483648 1', ['1 1 1']),
  // y = A x with x = 1: inf, inf + -inf = NaN, 2.
  inf: () => coord('inf.mtx', '3 3 6', ['1 1 inf', '1 2 +Infinity', '1 3 1', '2 1 inf', '2 2 -inf', '3 3 2']),
};

/** Output y of a run as numbers ("inf", "-inf", "nan" as JavaScript reads them). */
const values = (path: string): number[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('%'))
    .slice(1)
    .map((t) => (t === 'inf' ? Infinity : t === '-inf' ? -Infinity : t === 'nan' ? NaN : Number(t)));

function clean(r: CliResult): void {
  const all = r.stdout + r.stderr;
  expect(stackFrames(all), all).toEqual([]);
  expect(all).not.toMatch(/internal error|This is a bug in dype/i);
}

/** Runs the CLI in `dir` expecting exit 1 and one error line matching `first`; no output file, whole or partial. */
async function fails(args: readonly string[], first: RegExp): Promise<void> {
  const out = `never-${++failures}.mtx`;
  const r = await runCliAsync([...args, '--out', `y=${out}`], { cwd: dir });
  expect(r.status, r.stderr).toBe(1);
  clean(r);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr.trim()).toMatch(first);
  expect(listDir(dir).filter((f) => f.includes(out))).toEqual([]);
}
let failures = 0;

async function runs(args: readonly string[]): Promise<CliResult> {
  const r = await runCliAsync(args, { cwd: dir, timeoutMs: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  clean(r);
  return r;
}

describe('dype run', () => {
  it.concurrent('one dense row among empty rows: spmv and gcn run, features finite', async () => {
    const A = FILES.denseRow();
    const r = await runs([
      'run',
      SPMV,
      '--input',
      `A=${A}`,
      '--input',
      'x=@ones',
      '--out',
      'y=dense-row-y.mtx',
      '--json',
    ]);
    const j = JSON.parse(r.stdout) as { features: { A: Record<string, number | string> } };
    for (const [k, v] of Object.entries(j.features.A))
      if (k !== 'format' && k !== 'source') expect(Number.isFinite(v), k).toBe(true);
    expect(j.features.A).toMatchObject({ row_len_max: 5, empty_row_fraction: 0.6 });
    expect(values(join(dir, 'dense-row-y.mtx'))).toEqual([0, 0, 15, 0, 3]);
    await runs([
      'run',
      GCN,
      '--input',
      `A=${A}`,
      '--input',
      'X=@random',
      '--input',
      'W1=@random',
      '--input',
      'W2=@random',
      '--param',
      'f=4',
      '--param',
      'h=4',
      '--param',
      'c=4',
    ]);
  });

  it.concurrent('every row empty, 1 x 1 and 0 x 0: spmv runs and says what it computed', async () => {
    await runs(['run', SPMV, '--input', `A=${FILES.empty()}`, '--input', 'x=@ones', '--out', 'y=empty-y.mtx']);
    expect(values(join(dir, 'empty-y.mtx'))).toEqual([0, 0, 0, 0, 0]);
    await runs([
      'run',
      SPMV,
      '--input',
      `A=${FILES.one()}`,
      '--input',
      'x=@const:2',
      '--out',
      'y=one-y.mtx',
      '--backend',
      'reference',
    ]);
    expect(values(join(dir, 'one-y.mtx'))).toEqual([5]);
    const z = await runs(['run', SPMV, '--input', `A=${FILES.zero()}`, '--input', 'x=@ones', '--out', 'y=zero-y.mtx']);
    expect(z.stdout).toMatch(/output y {6}0: no values -> zero-y\.mtx/);
    expect(values(join(dir, 'zero-y.mtx'))).toEqual([]);
  });

  it.concurrent(
    '2^31 - 1 columns: spmv refuses the x it needs (DY3031); a kernel without that vector runs',
    async () => {
      const A = FILES.wide();
      await fails(
        ['run', SPMV, '--input', `A=${A}`, '--input', 'x=@ones'],
        /^--input x: error DY3031: @ones for dense<f32>\[2147483647\] would hold 2147483647 elements; at most 268435456 fit$/,
      );
      writeLines(dir, 'rowsum.dy', [
        'kernel rowsum(A: csr<f32>[m, n]) -> (y: dense<f32>[m]) {',
        '  y[i] = A[i, j];',
        '}',
      ]);
      const r = await runs(['run', 'rowsum.dy', '--input', `A=${A}`, '--out', 'y=wide-y.mtx', '--json']);
      const j = JSON.parse(r.stdout) as {
        features: { A: { cols: number; density: number } };
        dims: Record<string, number>;
      };
      expect(j.features.A.cols).toBe(2147483647);
      expect(j.dims['n']).toBe(2147483647);
      expect(Number.isFinite(j.features.A.density)).toBe(true);
      expect(values(join(dir, 'wide-y.mtx'))).toEqual([1, 2, 7]);
      await fails(
        ['run', 'rowsum.dy', '--input', `A=${FILES.tall()}`],
        /^tall\.mtx:2: error DY3031: 2147483647 x 3 has too many rows for compressed storage \(at most 268435455\)$/,
      );
      await fails(
        ['run', 'rowsum.dy', '--input', `A=${FILES.tooWide()}`],
        /^too-wide\.mtx:2: error DY3002: the column count 2147483648 exceeds the largest supported size 2147483647$/,
      );
    },
  );

  it.concurrent('infinite values run and are counted; NaN text is refused with its line', async () => {
    const r = await runs(['run', SPMV, '--input', `A=${FILES.inf()}`, '--input', 'x=@ones', '--out', 'y=inf-y.mtx']);
    expect(r.stdout).toMatch(/output y {6}3: sum 2, min 2, max 2, 2 non-finite \(NaN or infinite\) -> inf-y\.mtx/);
    expect(values(join(dir, 'inf-y.mtx'))).toEqual([Infinity, NaN, 2]);
    // A decimal beyond float64 is refused, not read as an infinity (inf is written inf).
    coord('e400.mtx', '2 2 2', ['1 1 1', '2 2 1e400']);
    await fails(
      ['run', SPMV, '--input', 'A=e400.mtx', '--input', 'x=@ones'],
      /^e400\.mtx:4: error DY3008: the value "1e400" is beyond float64's range \(write inf for an infinity\)$/,
    );
    for (const [name, token] of [
      ['nan1.mtx', 'nan'],
      ['nan2.mtx', 'NaN'],
      ['nan3.mtx', '-nan'],
    ] as const) {
      coord(name, '2 2 2', ['1 1 1', `2 2 ${token}`]);
      await fails(
        ['run', SPMV, '--input', `A=${name}`, '--input', 'x=@ones'],
        new RegExp(
          `^${name.replace('.', '\\.')}:4: error DY3006: the value is NaN \\("${token}"\\); expected a number \\(inf and -inf are allowed\\)$`,
        ),
      );
    }
  });

  it.concurrent('negative and zero sizes: one DY3002 at the size line', async () => {
    coord('neg.mtx', '-3 3 1', ['1 1 1']);
    await fails(
      ['run', SPMV, '--input', 'A=neg.mtx', '--input', 'x=@ones'],
      /^neg\.mtx:2: error DY3002: expected the size line "rows cols entries" \(three non-negative integers\), found "-3 3 1"$/,
    );
    coord('zero-entries.mtx', '0 0 1', ['1 1 1']);
    await fails(
      ['run', SPMV, '--input', 'A=zero-entries.mtx', '--input', 'x=@ones'],
      /^zero-entries\.mtx:2: error DY3002: the size line declares 1 entries, more than the 0 positions of a 0 x 0 matrix$/,
    );
    coord('zero-cols.mtx', '3 0 1', ['1 1 1']);
    await fails(
      ['run', SPMV, '--input', 'A=zero-cols.mtx', '--input', 'x=@ones'],
      /^zero-cols\.mtx:2: error DY3002: the size line declares 1 entries, more than the 0 positions of a 3 x 0 matrix$/,
    );
  });
});

interface ProjectJson {
  partition: { id?: number; label: string; source: string };
  features: { A: Record<string, number> };
  dims: Record<string, number>;
  summary: { y?: { nonfinite: number }; Y?: { nonfinite: number } };
}

/** The guard record of a run's exact features (the CLI reports them, snake_case), as the tree reads it (camelCase). */
function record(j: ProjectJson): Record<string, number> {
  const camel = (k: string): string => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  const r: Record<string, number> = {};
  for (const [k, v] of Object.entries(j.features.A)) if (typeof v === 'number') r[`A.${camel(k)}`] = v;
  for (const [k, v] of Object.entries(j.dims)) r[`dim.${k}`] = v;
  for (const k of ['A.rows', 'A.nnz', 'A.rowLenMax', 'A.rowLenCv', 'A.top1PctNnzShare', 'A.emptyRowFraction'])
    expect(r[k], k).toBeTypeOf('number');
  return r;
}

interface PlanJson {
  kernels: Record<
    string,
    {
      objective: string;
      guards: Record<string, { tree: GuardNode; ranges: Record<string, [number, number]> }>;
      partitionIds: Record<string, number[]>;
    }
  >;
}

/**
 * The partitions (ids of plan.json's table) the initial objective's tree
 * leaves open for a record, its leaf first, and whether the record is in
 * that objective's ranges.
 */
function exactPick(planPath: string, kernel: string, rec: Record<string, number>): { ids: number[]; inRange: boolean } {
  const k = (JSON.parse(readFileSync(planPath, 'utf8')) as PlanJson).kernels[kernel]!;
  const g = k.guards[k.objective]!;
  const table = k.partitionIds[k.objective]!;
  const w = walkTree(g.tree, (key) => rec[key]) as { leaf: number; also?: number[] };
  const inRange = Object.entries(g.ranges).every(
    ([key, [lo, hi]]) =>
      rec[key] === undefined || (rec[key]! >= lo - Math.abs(lo) * 1e-9 && rec[key]! <= hi + Math.abs(hi) * 1e-9),
  );
  return { ids: [w.leaf, ...(w.also ?? [])].map((i) => table[i]!), inRange };
}

describe.skipIf(!HAVE_DATA)('dype run --project (spmv: its partitions all run on the CPU)', () => {
  const out = join(dir, 'spmv-project');
  beforeAll(async () => {
    // A CPU-only system: on paper-1g1f, small sampled inputs (a 198-row op runs on one of its 64 threads) go to the GPU.
    const c = await runCliAsync(cpuRuntimeCompileArgs(SPMV, out, [join(M, 'cage8.mtx'), join(M, 'jazz.mtx')]), {
      timeoutMs: 120_000,
    });
    expect(c.status, c.stderr).toBe(0);
  }, 130_000);

  it.concurrent(
    'dense row, empty, 1 x 1, 0 x 0, infinite values: the guards decide, explained; y = A x',
    async () => {
      mtxOf('dense-row-4000.mtx', denseRowMatrix(4000, 384, 1234));
      for (const [file, want] of [
        [FILES.denseRow(), [0, 0, 15, 0, 3]],
        ['dense-row-4000.mtx', undefined],
        [FILES.empty(), [0, 0, 0, 0, 0]],
        [FILES.one(), [2.5]],
        [FILES.zero(), []],
        [FILES.inf(), [Infinity, NaN, 2]],
      ] as const) {
        const y = join(dir, `project-${file.replace(/.*\//, '')}`);
        const r = await runs([
          'run',
          SPMV,
          '--project',
          out,
          '--input',
          `A=${file}`,
          '--input',
          'x=@ones',
          '--out',
          `y=${y}`,
          '--json',
        ]);
        const j = JSON.parse(r.stdout) as ProjectJson;
        expect(j.partition.source, file).toMatch(/^auto: the project's (\w+ )?guards/);
        for (const [k, v] of Object.entries(record(j))) expect(Number.isFinite(v), `${file}: ${k}`).toBe(true);
        const pick = exactPick(join(out, 'plan.json'), 'spmv', record(j));
        if (pick.inRange) {
          expect(j.partition.source, file).not.toMatch(/re-planned/);
          expect(pick.ids, `${file}: ${j.partition.source}`).toContain(j.partition.id);
        } else expect(j.partition.source, file).toMatch(/outside the guards' ranges: .*re-planned/);
        if (want) expect(values(y), file).toEqual(want);
        expect(j.summary.y!.nonfinite).toBe(want?.filter((v) => !Number.isFinite(v)).length ?? 0);
      }
      const t = await runs(['run', SPMV, '--project', out, '--input', `A=${FILES.inf()}`, '--input', 'x=@ones']);
      expect(t.stdout).toMatch(/2 non-finite \(NaN or infinite\)/);
    },
    120_000,
  );

  it.concurrent('2^31 - 1 columns: DY3031 for x, nothing written', async () => {
    await fails(
      ['run', SPMV, '--project', out, '--input', `A=${FILES.wide()}`, '--input', 'x=@ones'],
      /^--input x: error DY3031/,
    );
  });
});

describe.skipIf(!HAVE_GXX)('dype run --project --emulate (gcn: CPU, GPU and FPGA partitions)', () => {
  const out = join(dir, 'gcn-project');
  const dims = ['--param', 'f=16', '--param', 'h=16', '--param', 'c=16'];
  beforeAll(async () => {
    const c = await runCliAsync(
      [
        'compile',
        GCN,
        '-o',
        out,
        '--targets',
        'wasm,cuda,hls,runtime',
        ...['cora.cites', 'ca-GrQc.mtx', 'jazz.mtx'].flatMap((m) => ['--profile', `A=${join(M, m)}`]),
        '--profile',
        'f=16',
        '--profile',
        'h=16',
        '--profile',
        'c=16',
      ],
      { timeoutMs: 120_000 },
    );
    expect(c.status, c.stderr).toBe(0);
    const b = await runCliAsync(['build', out, '--emulate'], { timeoutMs: 300_000 });
    expect(b.status, b.stderr).toBe(0);
  }, 450_000);

  it('a 384-entry row among 4000 short rows, one dense row among empty rows, infinite values: the pick the exact features give', async () => {
    const big = mtxOf('gcn-dense-row-4000.mtx', denseRowMatrix(4000, 384, 1234));
    for (const file of [big, FILES.denseRow(), FILES.empty(), FILES.inf()]) {
      const r = await runs([
        'run',
        GCN,
        '--project',
        out,
        '--emulate',
        '--input',
        `A=${file}`,
        '--input',
        'X=@random',
        '--input',
        'W1=@random',
        '--input',
        'W2=@random',
        ...dims,
        '--json',
      ]);
      const j = JSON.parse(r.stdout) as ProjectJson;
      const pick = exactPick(join(out, 'plan.json'), 'gcn', record(j));
      if (pick.inRange) {
        expect(j.partition.source, file).not.toMatch(/re-planned/);
        expect(pick.ids, `${file}: ${j.partition.source}`).toContain(j.partition.id);
      } else expect(j.partition.source, file).toMatch(/outside the guards' ranges: .*re-planned/);
    }
  }, 300_000);
});
