/**
 * What 128-bit SIMD gives the wasm backend: each kernel compiled with SIMD
 * and without (the scalar path; the results are the same bits, checked
 * here), timed on `execute` at 1 thread, medians of RUNS runs after a
 * warm-up, on real matrices: SpMM K=32, SDDMM d=32 and d=8, gcn (f = h = 32,
 * c = 8). Prints a table with the load average and saves JSON.
 *   npm run build && node dist/bench/cpu-kernels-simd.js [RUNS]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { emitWasm } from '../codegen/wasm/emit.js';
import { compileSource } from '../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../runtime/tensor.js';
import { createWasmExecutor } from '../runtime/wasm/executor.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const RUNS = Number(process.argv[2] ?? 7);
const MATRICES = ['bcsstk33.mtx', 'luxembourg_osm.mtx', 'cora.cites'];

const CASES: { name: string; src: string; dense: (A: CsrMatrix) => Record<string, number[]> }[] = [
  {
    name: 'spmm K=32',
    src: 'kernel k(A: csr<f32>[m, n], B: dense<f32>[n, c]) -> (Y: dense<f32>[m, c]) { Y[i, k] = A[i, j] * B[j, k]; }',
    dense: (A) => ({ B: [A.cols, 32] }),
  },
  {
    name: 'sddmm d=32',
    src: 'kernel k(A: csr<f32>[n, n], Q: dense<f32>[n, d], K: dense<f32>[n, d]) -> (S: csr<f32>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }',
    dense: (A) => ({ Q: [A.rows, 32], K: [A.rows, 32] }),
  },
  {
    name: 'sddmm d=8',
    src: 'kernel k(A: csr<f32>[n, n], Q: dense<f32>[n, d], K: dense<f32>[n, d]) -> (S: csr<f32>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }',
    dense: (A) => ({ Q: [A.rows, 8], K: [A.rows, 8] }),
  },
  { name: 'gcn 32/32/8', src: readGcn(), dense: (A) => ({ X: [A.rows, 32], W1: [32, 32], W2: [32, 8] }) },
];

function readGcn(): string {
  return `kernel gcn(A: csr<f32>[n, n], X: dense<f32>[n, f], W1: dense<f32>[f, h], W2: dense<f32>[h, c]) -> (Y: dense<f32>[n, c]) {
  T1[i, k] = X[i, j] * W1[j, k];
  H1[i, k] = relu(A[i, j] * T1[j, k]);
  T2[i, k] = H1[i, j] * W2[j, k];
  Y[i, k]  = A[i, j] * T2[j, k];
}`;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function operand(shape: number[], seed: number): DenseTensor {
  const n = shape[0]! * shape[1]!;
  const data = new Float64Array(n);
  for (let q = 0; q < n; q++) data[q] = ((q * seed) % 17) / 8 - 1;
  return { format: 'dense', shape, data };
}

async function time(
  src: string,
  tensors: Map<string, Tensor>,
  simd: boolean,
): Promise<{ ms: number; bits: Uint8Array }> {
  const k = runPipeline(compileSource(src, 'bench.dy').module!, { passes: [...DEFAULT_PIPELINE, 'lower-kernels'] })
    .kernels[0]!;
  const { binary, manifest } = await emitWasm(k, { simd });
  const ex = await createWasmExecutor(binary, manifest, { threads: 1 });
  try {
    const inputs = { tensors, scalars: new Map<string, number>() };
    ex.execute(inputs);
    const ts: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      ex.execute(inputs);
      ts.push(performance.now() - t0);
    }
    const out = [...ex.results().outputs.values()][0]!;
    const vals = out.format === 'dense' ? out.data : out.values;
    return { ms: median(ts), bits: new Uint8Array(Float64Array.from(vals).buffer) };
  } finally {
    ex.close();
  }
}

async function main(): Promise<void> {
  const load = loadavg();
  console.log(`load average: ${load.map((x) => x.toFixed(2)).join(' ')}; medians of ${RUNS}, 1 thread`);
  console.log('matrix               kernel          simd ms   scalar ms   speed-up  same bits');
  const rows: Record<string, unknown>[] = [];
  for (const file of MATRICES) {
    const A = toCsr(loadMatrix(join(root, '..', 'shared', 'data', 'matrices', file)));
    for (const c of CASES) {
      if (c.name.startsWith('gcn') || c.name.startsWith('sddmm')) if (A.rows !== A.cols) continue;
      const tensors = new Map<string, Tensor>([['A', A]]);
      let seed = 3;
      for (const [n, shape] of Object.entries(c.dense(A))) tensors.set(n, operand(shape, seed++));
      const v = await time(c.src, tensors, true);
      const s = await time(c.src, tensors, false);
      const same = v.bits.length === s.bits.length && v.bits.every((b, i) => b === s.bits[i]);
      rows.push({
        matrix: file,
        kernel: c.name,
        nnz: A.values.length,
        simd_ms: v.ms,
        scalar_ms: s.ms,
        speedup: s.ms / v.ms,
        same_bits: same,
      });
      console.log(
        `${file.padEnd(20)} ${c.name.padEnd(14)} ${v.ms.toFixed(2).padStart(9)} ${s.ms.toFixed(2).padStart(11)} ${(s.ms / v.ms).toFixed(2).padStart(9)}x  ${same ? 'yes' : 'NO'}`,
      );
    }
  }
  const after = loadavg();
  console.log(`load average after: ${after.map((x) => x.toFixed(2)).join(' ')}`);
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'cpu-kernels-simd.json'),
    JSON.stringify({ runs: RUNS, loadBefore: load, loadAfter: after, rows }, null, 2),
  );
  console.log('wrote bench/results/cpu-kernels-simd.json');
}

await main();
