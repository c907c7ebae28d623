/**
 * What transparent huge pages would give the native executor's buffers (one
 * block laid out as runtime/wasm/executor.ts lays it out): bench/cpu-pages/
 * spmv.c lays a matrix out twice, in a 64-byte-aligned block on 4 KiB pages
 * (what the native library's `alloc` gives) and in a 2 MiB-aligned block
 * with madvise MADV_HUGEPAGE, and times a plain f64 SpMV over each in turn
 * (medians of RUNS timings of enough calls for ~20 ms), on the largest real
 * matrices and a generated 1M-row one (x of 8 MB). Tried in the library and
 * dropped (docs/PERFORMANCE.md, *Huge pages*); kept to measure again on
 * other hosts. Where the system gives no huge pages (AnonHugePages 0) both
 * blocks are alike. Prints a table and saves JSON
 * (bench/results/cpu-pages.json).
 *   npm run build && node dist/bench/cpu-pages.js [RUNS]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cCompiler } from '../codegen/cpu/build.js';
import { generatedMatrix } from '../runtime/generate.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import type { CsrMatrix } from '../runtime/tensor.js';
import { writeCsrBin } from './csr-bin.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNS = Number(process.argv[2] ?? 31);
const data = join(root, '..', 'shared', 'data', 'matrices');
const MATRICES: { name: string; m: () => CsrMatrix }[] = [
  { name: 'random-1M-15', m: () => generatedMatrix(1_000_000, 15) },
  ...['bcsstk33', 'luxembourg_osm', 'Groebner_id2003_aug'].map((n) => ({
    name: n,
    m: () => toCsr(loadMatrix(join(data, `${n}.mtx`))),
  })),
];

const dir = mkdtempSync(join(tmpdir(), 'dype-cpu-pages-'));
try {
  const exe = join(dir, 'spmv');
  execFileSync(cCompiler(), ['-O3', '-march=native', join(root, 'bench', 'cpu-pages', 'spmv.c'), '-o', exe]);
  const rows: { matrix: string; nnz: number; ms4k: number; msHuge: number; speedup: number; hugeKb: number }[] = [];
  for (const { name, m: load } of MATRICES) {
    const m = load();
    const bin = join(dir, `${name}.bin`);
    writeCsrBin(bin, m);
    // About 20 ms a timing: ~1 ns an entry.
    const calls = Math.max(1, Math.round(20e6 / Math.max(1, m.values.length)));
    const [a, b, kb] = execFileSync(exe, [bin, String(RUNS), String(calls)], { encoding: 'utf8' })
      .trim()
      .split(' ')
      .map(Number) as [number, number, number];
    rows.push({ matrix: name, nnz: m.values.length, ms4k: a, msHuge: b, speedup: a / b, hugeKb: kb });
  }
  console.log(`f64 SpMV over the executor's layout, medians of ${RUNS} (cc -O3 -march=native)`);
  console.log('matrix                    nnz    4K pages ms  huge pages ms  4K / huge  AnonHugePages kB');
  for (const r of rows)
    console.log(
      `${r.matrix.padEnd(20)} ${String(r.nnz).padStart(9)} ${r.ms4k.toFixed(4).padStart(14)} ${r.msHuge.toFixed(4).padStart(14)} ${`${r.speedup.toFixed(3)}x`.padStart(10)} ${String(r.hugeKb).padStart(17)}`,
    );
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'cpu-pages.json'),
    JSON.stringify({ command: `node dist/bench/cpu-pages.js ${RUNS}`, runs: RUNS, rows }, null, 2) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
