/**
 * SDDMM's short rows on the native library: the library built with lanes
 * across rows (codegen/cpu/transposed.ts crossRowShort and crossRowLong, the
 * `crossRows` option) and without, from the same loop IR, both executors timed call by
 * call in turn (the order alternating) at 1 thread after a warm-up of each
 * (./warm-up.ts), the least of RUNS calls,
 * ns per gathered element (nnz x d); the outputs must be the same bits. On
 * generated banded matrices of about 400,000 entries in rows of L entries
 * and on the square real matrices with short rows, plus two with long rows.
 * Prints a table and saves JSON (bench/results/cpu-sddmm-rows.json).
 *   npm run build && node dist/bench/cpu-sddmm-rows.js [RUNS] [--dtype=f32|f64] [--d=16]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { buildCpuLibrary } from '../codegen/cpu/build.js';
import { cpuLibrarySource } from '../codegen/cpu/library.js';
import { wasmManifest } from '../codegen/wasm/emit.js';
import { compileSource } from '../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { generatedMatrix } from '../runtime/generate.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import { createNativeCpuExecutor } from '../runtime/native/cpu-executor.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../runtime/tensor.js';
import { outputDigest } from './output-digest.js';
import { warmUp } from './warm-up.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const argv = process.argv.slice(2);
const RUNS = Number(argv.find((a) => !a.startsWith('--')) ?? 15);
const T = argv.find((a) => a.startsWith('--dtype='))?.slice('--dtype='.length) ?? 'f32';
const D = Number(argv.find((a) => a.startsWith('--d='))?.slice('--d='.length) ?? 16);
if (T !== 'f32' && T !== 'f64') throw new Error(`--dtype must be f32 or f64, got ${T}`);
const data = join(root, '..', 'shared', 'data', 'matrices');
const CASES: { name: string; m: () => CsrMatrix }[] = [
  ...[1, 2, 3, 4, 6, 7, 8, 16].map((L) => ({
    name: `rows of ${L}`,
    m: () => generatedMatrix(Math.round(400_000 / L), L, true),
  })),
  ...[
    'luxembourg_osm.mtx',
    'ca-GrQc.mtx',
    'cora.cites',
    'whitaker3.mtx',
    'bcspwr10.mtx',
    'adder_dcop_05.mtx',
    'Erdos971.mtx',
    'facebook_combined.txt',
    'bcsstk33.mtx',
  ].map((f) => ({ name: f.replace(/\.[a-z]+$/, ''), m: () => toCsr(loadMatrix(join(data, f))) })),
];

function dense(n: number): DenseTensor {
  return { format: 'dense', shape: [n, D], data: Float64Array.from({ length: n * D }, (_, p) => (p % 5) * 0.5) };
}

const src = `kernel k(A: csr<${T}>[n, n], Q: dense<${T}>[n, d], K: dense<${T}>[n, d]) -> (S: csr<${T}>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }`;
const kernel = runPipeline(compileSource(src, 'sddmm.dy').module!, { passes: [...DEFAULT_PIPELINE, lowerKernelsPass] })
  .kernels[0]!;
const manifest = wasmManifest(kernel, [], true);
const libs = [false, true].map((crossRows) =>
  buildCpuLibrary(cpuLibrarySource('sddmm', 'bench', [{ kernel, manifest }], undefined, { crossRows }), null),
);
const load0 = loadavg();
const rows: Record<string, unknown>[] = [];
console.log(
  `SDDMM ${T} d = ${D}, native, 1 thread: without / with lanes across rows, ns per gathered element (least of ${RUNS})`,
);
console.log('| matrix | rows | nnz | without | with | without / with | bits |');
console.log('|---|---:|---:|---:|---:|---:|---|');
try {
  for (const c of CASES) {
    const A = c.m();
    if (A.rows !== A.cols) continue;
    const tensors = new Map<string, Tensor>([
      ['A', A],
      ['Q', dense(A.rows)],
      ['K', dense(A.rows)],
    ]);
    const inputs = { tensors, scalars: new Map<string, number>() };
    const exs = libs.map((l) =>
      createNativeCpuExecutor(l.path, manifest, { program: 'sddmm', programHash: 'bench', threads: 1 }),
    );
    try {
      for (const ex of exs) warmUp(() => ex.execute(inputs), 200, 300);
      const best = [Infinity, Infinity];
      for (let r = 0; r < RUNS; r++)
        for (const q of r % 2 === 0 ? [0, 1] : [1, 0]) {
          const t0 = performance.now();
          exs[q]!.execute(inputs);
          best[q] = Math.min(best[q]!, performance.now() - t0);
        }
      const el = A.values.length * D;
      const [a, b] = best.map((x) => (x * 1e6) / el) as [number, number];
      const same = outputDigest(exs[0]!) === outputDigest(exs[1]!);
      rows.push({
        matrix: c.name,
        rows: A.rows,
        nnz: A.values.length,
        without_ns: a,
        with_ns: b,
        speedup: a / b,
        same,
      });
      console.log(
        `| ${c.name} | ${A.rows} | ${A.values.length} | ${a.toFixed(3)} | ${b.toFixed(3)} | ${(a / b).toFixed(2)}x | ${same ? 'same' : 'DIFFERENT'} |`,
      );
      if (!same) process.exitCode = 1;
    } finally {
      for (const ex of exs) ex.close();
    }
  }
} finally {
  for (const l of libs) l.cleanup();
}
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'cpu-sddmm-rows.json'),
  JSON.stringify(
    {
      command: `node dist/bench/cpu-sddmm-rows.js ${argv.join(' ')}`.trim(),
      dtype: T,
      d: D,
      runs: RUNS,
      load: { before: load0, after: loadavg() },
      rows,
    },
    null,
    2,
  ) + '\n',
);
console.log(`load average ${load0.map((x) => x.toFixed(2)).join(' ')} before; saved bench/results/cpu-sddmm-rows.json`);
