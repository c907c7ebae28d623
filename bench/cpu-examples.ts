/**
 * The examples end to end on the CPU: gcn, attention, pagerank and sssp
 * (examples/*.dy) through dype's native library at 1 and 2 threads and its
 * wasm module at 1 thread, against the same computation written with numpy
 * and scipy (bench/cpu-examples/scipy_examples.py, float32, one thread for
 * BLAS), on real matrices and a generated power-law graph. The same inputs
 * on both sides: the matrix's own values for gcn and attention, pagerank's A
 * column-stochastic (1 / the column's entries), sssp's weights 1 + (i + j) %
 * 7 from vertex 0, dense operands ((i * 131 + j * 7 + salt) % 17) / 8 - 1.
 * dype's runners are timed in turn within each of RUNS repetitions (after a
 * warm-up), on `execute` with the inputs already bound (scipy's arrays are
 * in memory too); scipy in its own process, medians of RUNS. Each output is
 * compared with scipy's (largest difference over max(1, |scipy|); both NaN
 * counts as equal: attention's rows without entries divide 0 by 0). Prints
 * a table and saves JSON (bench/results/cpu-examples.json).
 *   npm run build && node dist/bench/cpu-examples.js [RUNS] [MATRIX ...] [--kernels=gcn,pagerank]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { compileCpuKernel } from '../codegen/cpu/compile.js';
import { cacheRoot } from '../codegen/wasm/cache.js';
import { emitWasm } from '../codegen/wasm/emit.js';
import { compileSource } from '../frontend/compile.js';
import type { Kernel } from '../ir/module.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { skewedMatrix } from '../runtime/generate.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import { createNativeCpuExecutor } from '../runtime/native/cpu-executor.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../runtime/tensor.js';
import { createWasmExecutor, type WasmExecutor } from '../runtime/wasm/executor.js';
import { writeCsrBin } from './csr-bin.js';
import { warmUp } from './warm-up.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const argv = process.argv.slice(2);
const KERNELS_ARG = argv.find((a) => a.startsWith('--kernels='))?.slice('--kernels='.length);
const args = argv.filter((a) => !a.startsWith('--'));
const RUNS = Number(args[0] ?? 7);
const ONLY = args.slice(1);
const DIMS = { f: 64, h: 64, c: 16, d: 32 };
const KERNELS = ['gcn', 'attention', 'pagerank', 'sssp'] as const;
type KernelName = (typeof KERNELS)[number];
const data = join(root, '..', 'shared', 'data', 'matrices');
const MATRICES: { name: string; m: () => CsrMatrix }[] = [
  ...['cora.cites', 'ca-GrQc.mtx', 'facebook_combined.txt', 'bcsstk33.mtx', 'luxembourg_osm.mtx'].map((f) => ({
    name: f.replace(/\.[a-z]+$/, ''),
    m: () => toCsr(loadMatrix(join(data, f))),
  })),
  { name: 'power-law-300k-10', m: () => skewedMatrix(300_000, 10) },
];

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** ((i * 131 + j * 7 + salt) % 17) / 8 - 1, as scipy_examples.py `operand`. */
function operand(rows: number, cols: number, salt: number): DenseTensor {
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) out[i * cols + j] = ((i * 131 + j * 7 + salt) % 17) / 8 - 1;
  return { format: 'dense', shape: [rows, cols], data: out };
}

/** The matrix with other values on the same pattern. */
const withValues = (A: CsrMatrix, value: (i: number, j: number, p: number) => number): CsrMatrix => {
  const values = new Float64Array(A.values.length);
  for (let i = 0; i < A.rows; i++)
    for (let p = A.rowPtr[i]!; p < A.rowPtr[i + 1]!; p++) values[p] = value(i, A.colIdx[p]!, p);
  return { ...A, values };
};

function inputsOf(k: KernelName, A: CsrMatrix): { tensors: Map<string, Tensor>; scalars: Map<string, number> } {
  const n = A.rows;
  const vec = (fill: (i: number) => number): DenseTensor => ({
    format: 'dense',
    shape: [n],
    data: Float64Array.from({ length: n }, (_, i) => fill(i)),
  });
  switch (k) {
    case 'gcn':
      return {
        tensors: new Map<string, Tensor>([
          ['A', A],
          ['X', operand(n, DIMS.f, 1)],
          ['W1', operand(DIMS.f, DIMS.h, 2)],
          ['W2', operand(DIMS.h, DIMS.c, 3)],
        ]),
        scalars: new Map(),
      };
    case 'attention':
      return {
        tensors: new Map<string, Tensor>([
          ['A', A],
          ['Q', operand(n, DIMS.d, 4)],
          ['K', operand(n, DIMS.d, 5)],
          ['V', operand(n, DIMS.d, 6)],
        ]),
        scalars: new Map(),
      };
    case 'pagerank': {
      const count = new Float64Array(A.cols);
      for (const j of A.colIdx) count[j]!++;
      return {
        tensors: new Map<string, Tensor>([
          ['A', withValues(A, (_i, j) => 1 / count[j]!)],
          ['r0', vec(() => 1 / n)],
        ]),
        scalars: new Map([['d', 0.85]]),
      };
    }
    case 'sssp':
      return {
        tensors: new Map<string, Tensor>([
          ['A', withValues(A, (i, j) => 1 + ((i + j) % 7))],
          ['d0', vec((i) => (i === 0 ? 0 : Infinity))],
        ]),
        scalars: new Map(),
      };
  }
}

const kernelOf = (k: KernelName): Kernel =>
  runPipeline(compileSource(readFileSync(join(root, 'examples', `${k}.dy`), 'utf8'), `${k}.dy`).module!, {
    passes: [...DEFAULT_PIPELINE, lowerKernelsPass],
  }).kernels[0]!;

/** Largest |a - b| / max(1, |b|) over the elements; NaN in both is equal, in one only is Infinity. */
function maxRelDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let q = 0; q < a.length; q++) {
    const x = a[q]!;
    const y = b[q]!;
    if (Number.isNaN(x) || Number.isNaN(y)) {
      if (!(Number.isNaN(x) && Number.isNaN(y))) return Infinity;
      continue;
    }
    if (x === y) continue;
    worst = Math.max(worst, Math.abs(x - y) / Math.max(1, Math.abs(y)));
  }
  return worst;
}

interface Runner {
  label: string;
  ex: WasmExecutor;
}

async function main(): Promise<void> {
  const scipy = spawnSync('python3', ['-c', 'import scipy, numpy'], { encoding: 'utf8' }).status === 0;
  const dir = mkdtempSync(join(tmpdir(), 'dype-examples-'));
  const kernels = Object.fromEntries(KERNELS.map((k) => [k, kernelOf(k)])) as Record<KernelName, Kernel>;
  const natives = Object.fromEntries(KERNELS.map((k) => [k, compileCpuKernel(k, kernels[k], cacheRoot())]));
  const modules = Object.fromEntries(
    await Promise.all(KERNELS.map(async (k) => [k, await emitWasm(kernels[k])] as const)),
  );
  const rows: Record<string, unknown>[] = [];
  const load0 = loadavg();
  console.log(
    `load average ${load0.map((x) => x.toFixed(2)).join(' ')}; ${RUNS} runs; dims ${JSON.stringify(DIMS)}; ms medians; ratio = scipy / dype${scipy ? '' : ' (scipy not importable: dype only)'}`,
  );
  console.log(
    'matrix               kernel      scipy ms   native1   native2     wasm1  nat1 vs scipy  nat2 vs scipy  wasm1 vs scipy  trips (dype/scipy)  max diff',
  );
  try {
    for (const { name, m } of MATRICES) {
      if (ONLY.length > 0 && !ONLY.includes(name)) continue;
      const A = m();
      const bin = join(dir, `${name}.bin`);
      writeCsrBin(bin, A);
      const outDir = join(dir, name);
      mkdirSync(outDir);
      const py = scipy
        ? new Map(
            execFileSync(
              'python3',
              [
                join(root, 'bench', 'cpu-examples', 'scipy_examples.py'),
                bin,
                String(RUNS),
                outDir,
                JSON.stringify(DIMS),
              ],
              { encoding: 'utf8', env: { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1' } },
            )
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as { kernel: string; median_ms: number; trips: number | null })
              .map((j) => [j.kernel, j]),
          )
        : new Map<string, { median_ms: number; trips: number | null }>();
      for (const k of KERNELS) {
        if (KERNELS_ARG && !KERNELS_ARG.split(',').includes(k)) continue;
        const inputs = inputsOf(k, A);
        const c = natives[k]!;
        const runners: Runner[] = [
          ...[1, 2].map((threads) => ({
            label: `native${threads}`,
            ex: createNativeCpuExecutor(c.build.path, c.manifest, { threads, program: c.program, programHash: c.hash }),
          })),
          { label: 'wasm1', ex: await createWasmExecutor(modules[k]!.binary, modules[k]!.manifest, { threads: 1 }) },
        ];
        try {
          for (const r of runners) warmUp(() => r.ex.execute(inputs), 20, 300);
          const ts = runners.map(() => [] as number[]);
          for (let rep = 0; rep < RUNS; rep++)
            for (let q = 0; q < runners.length; q++) {
              const at = (q + rep) % runners.length;
              const t0 = performance.now();
              runners[at]!.ex.execute(inputs);
              ts[at]!.push(performance.now() - t0);
            }
          const med = ts.map(median);
          const res = runners[0]!.ex.results();
          const out = [...res.outputs.values()][0] as DenseTensor;
          const trips = res.repeats[0]?.trips ?? null;
          const s = py.get(k);
          const theirs = s ? new Float32Array(readFileSync(join(outDir, `${k}.f32`)).buffer.slice(0)) : undefined;
          const diff = theirs ? maxRelDiff(out.data, theirs) : null;
          const row = {
            matrix: name,
            rows: A.rows,
            nnz: A.values.length,
            kernel: k,
            scipy_ms: s?.median_ms ?? null,
            native1_ms: med[0]!,
            native2_ms: med[1]!,
            wasm1_ms: med[2]!,
            native1_vs_scipy: s ? s.median_ms / med[0]! : null,
            native2_vs_scipy: s ? s.median_ms / med[1]! : null,
            wasm1_vs_scipy: s ? s.median_ms / med[2]! : null,
            trips,
            scipy_trips: s?.trips ?? null,
            max_rel_diff: diff,
          };
          rows.push(row);
          const x = (v: number | null): string => (v === null ? '-' : `${v.toFixed(2)}x`);
          console.log(
            `${name.padEnd(20)} ${k.padEnd(10)} ${(s ? s.median_ms.toFixed(2) : '-').padStart(9)} ${med.map((t) => t.toFixed(2).padStart(9)).join(' ')}  ${x(row.native1_vs_scipy).padStart(13)}  ${x(row.native2_vs_scipy).padStart(13)}  ${x(row.wasm1_vs_scipy).padStart(14)}  ${`${trips ?? '-'}/${s?.trips ?? '-'}`.padStart(18)}  ${diff === null ? '-' : diff.toExponential(1)}${diff !== null && diff > 1e-3 ? '  MISMATCH' : ''}`,
          );
          if (diff !== null && diff > 1e-3) process.exitCode = 1;
        } finally {
          for (const r of runners) r.ex.close();
        }
      }
    }
  } finally {
    for (const c of Object.values(natives)) c.build.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'cpu-examples.json'),
    JSON.stringify({ runs: RUNS, dims: DIMS, scipy, loadBefore: load0, loadAfter: loadavg(), rows }, null, 2),
  );
  console.log('wrote bench/results/cpu-examples.json');
}

await main();
