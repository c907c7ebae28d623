/**
 * What the branch predictor learns of row lengths: a plain C SpMV
 * (bench/cpu-branch/spmv.c, cc -O3 -march=native) run RUNS times in a row on
 * one generated pattern, for rows of 1-3 entries in random order, and of 2
 * entries each, at several row counts. The first run pays a mispredicted
 * loop exit on most rows whose length changes; later runs of a small
 * pattern pay less as the predictor learns the sequence, and past some
 * number of rows it cannot. This is the measurement behind the fitted CPU
 * model's branch-miss term (runtime/plan/model.ts cpuTerms,
 * docs/COST-MODEL.md). Prints ns per row of run 1, of run 5 and the least of
 * all runs, with the random / equal-length ratio; saves JSON.
 *   npm run build && node dist/bench/cpu-branch.js [RUNS]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ccCommand, cCompiler } from '../codegen/cpu/build.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNS = Number(process.argv[2] ?? 12);
const ROWS = [2_000, 8_000, 16_000, 32_000, 64_000, 256_000];
const PATTERNS = [
  { name: 'lengths 1-3, random', maxLen: 3 },
  { name: 'lengths 2, equal', maxLen: 0 },
] as const;

const dir = mkdtempSync(join(tmpdir(), 'dype-cpu-branch-'));
const exe = join(dir, 'spmv');
try {
  const cc = ccCommand(cCompiler(), ['-O3', '-march=native', join(root, 'bench', 'cpu-branch', 'spmv.c'), '-o', exe]);
  execFileSync(cc.file, cc.args);
  const rows: { rows: number; pattern: string; nsPerRow: number[] }[] = [];
  for (const n of ROWS)
    for (const p of PATTERNS) {
      const out = execFileSync(exe, [String(n), String(p.maxLen), String(RUNS), '1'], { encoding: 'utf8' });
      rows.push({ rows: n, pattern: p.name, nsPerRow: out.trim().split(' ').map(Number) });
    }
  const f = (x: number): string => x.toFixed(2).padStart(7);
  console.log(`ns per row, ${RUNS} runs in a row on each pattern (cc -O3 -march=native)`);
  console.log(
    `${'rows'.padStart(8)}  ${'pattern'.padEnd(20)} ${'run 1'.padStart(7)} ${'run 5'.padStart(7)} ${'least'.padStart(7)}`,
  );
  for (const r of rows)
    console.log(
      `${String(r.rows).padStart(8)}  ${r.pattern.padEnd(20)} ${f(r.nsPerRow[0]!)} ${f(r.nsPerRow[Math.min(4, RUNS - 1)]!)} ${f(Math.min(...r.nsPerRow))}`,
    );
  console.log('\nleast of the runs, random / equal lengths:');
  for (const n of ROWS) {
    const [a, b] = PATTERNS.map((p) => Math.min(...rows.find((r) => r.rows === n && r.pattern === p.name)!.nsPerRow));
    console.log(`${String(n).padStart(8)}  ${(a! / b!).toFixed(2)}x`);
  }
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'cpu-branch.json'),
    JSON.stringify({ command: `node dist/bench/cpu-branch.js ${RUNS}`, runs: RUNS, rows }, null, 2) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
