/**
 * CPU kernels: dype's wasm and native backends at 1 and 2 threads against a C baseline
 * (gcc -O3 -march=native; SpMM with explicit vector extensions) and scipy
 * (when importable), on a generated 1M-row matrix with ~15 nnz per row and
 * the largest real matrices. SpMV f32/f64 and SpMM with K = 32 (f32); medians
 * of RUNS runs after a warm-up; SpMM also through the scalar path (SIMD
 * off) to show what SIMD gives; the load average is recorded with the
 * figures (other jobs on the machine skew them). The native backend's
 * library (codegen/cpu, the system C compiler) is built once per kernel
 * through the compile cache. Prints a table and saves JSON.
 *   npm run build && node dist/bench/cpu-kernels.js [RUNS] [MATRIX ...]
 * (MATRIX: names of the table's matrices to run, default all).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { emitWasm } from '../codegen/wasm/emit.js';
import { compileSource } from '../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../runtime/tensor.js';
import { createWasmExecutor, type WasmExecutor } from '../runtime/wasm/executor.js';
import { compileCpuKernel } from '../codegen/cpu/compile.js';
import { cacheRoot } from '../codegen/wasm/cache.js';
import type { Kernel } from '../ir/module.js';
import { createNativeCpuExecutor } from '../runtime/native/cpu-executor.js';
import { generatedMatrix } from '../runtime/generate.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const RUNS = Number(process.argv[2] ?? 7);
const ONLY = process.argv.slice(3);

function writeBin(path: string, m: CsrMatrix): void {
  const head = Int32Array.of(m.rows, m.cols, m.values.length);
  writeFileSync(
    path,
    Buffer.concat([
      Buffer.from(head.buffer),
      Buffer.from(m.rowPtr.buffer, m.rowPtr.byteOffset, m.rowPtr.byteLength),
      Buffer.from(m.colIdx.buffer, m.colIdx.byteOffset, m.colIdx.byteLength),
      Buffer.from(m.values.buffer, m.values.byteOffset, m.values.byteLength),
    ]),
  );
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const PROGRAMS = {
  spmv_f32: 'kernel k(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }',
  spmv_f64: 'kernel k(A: csr<f64>[m, n], x: dense<f64>[n]) -> (y: dense<f64>[m]) { y[i] = A[i, j] * x[j]; }',
  spmm32_f32:
    'kernel k(A: csr<f32>[m, n], B: dense<f32>[n, c]) -> (Y: dense<f32>[m, c]) { Y[i, k] = A[i, j] * B[j, k]; }',
} as const;
type KernelName = keyof typeof PROGRAMS;

/** The same operands as kernels.c: x[j] = 1 + (j % 7) / 4, B[j, k] = ((j + k) % 5) / 2. */
function operand(name: KernelName, cols: number): DenseTensor {
  if (name === 'spmm32_f32') {
    const data = new Float64Array(cols * 32);
    for (let j = 0; j < cols; j++) for (let k = 0; k < 32; k++) data[j * 32 + k] = ((j + k) % 5) * 0.5;
    return { format: 'dense', shape: [cols, 32], data };
  }
  const data = new Float64Array(cols);
  for (let j = 0; j < cols; j++) data[j] = 1 + (j % 7) * 0.25;
  return { format: 'dense', shape: [cols], data };
}

const kernelOf = (name: KernelName): Kernel =>
  runPipeline(compileSource(PROGRAMS[name], `${name}.dy`).module!, {
    passes: [...DEFAULT_PIPELINE, lowerKernelsPass],
  }).kernels[0]!;

async function dypeTimes(
  name: KernelName,
  A: CsrMatrix,
  threads: number,
  simd = true,
): Promise<{ ms: number; check: number }> {
  const { binary, manifest } = await emitWasm(kernelOf(name), { simd });
  return timed(name, A, await createWasmExecutor(binary, manifest, { threads }));
}

function nativeTimes(name: KernelName, A: CsrMatrix, threads: number): { ms: number; check: number } {
  const c = compileCpuKernel(name, kernelOf(name), cacheRoot());
  const ex = createNativeCpuExecutor(c.build.path, c.manifest, { threads, program: c.program, programHash: c.hash });
  c.build.cleanup();
  return timed(name, A, ex);
}

function timed(name: KernelName, A: CsrMatrix, ex: WasmExecutor): { ms: number; check: number } {
  try {
    const tensors = new Map<string, Tensor>([
      ['A', A],
      [name === 'spmm32_f32' ? 'B' : 'x', operand(name, A.cols)],
    ]);
    const dims = new Map([
      ['m', A.rows],
      ['n', A.cols],
      ['c', 32],
    ]);
    // Timed: execute (results stay in wasm memory, as C's stay in its arrays); read back once after.
    const run = () => ex.execute({ tensors, scalars: new Map(), dims });
    run();
    const ts: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      run();
      ts.push(performance.now() - t0);
    }
    const res = [...ex.results().outputs.values()][0] as DenseTensor;
    const mid = A.rows >> 1;
    return { ms: median(ts), check: name === 'spmm32_f32' ? res.data[mid * 32 + 3]! : res.data[mid]! };
  } finally {
    ex.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dype-bench-'));
  try {
    const exe = join(dir, 'kernels');
    execFileSync('gcc', ['-O3', '-march=native', '-o', exe, join(root, 'bench', 'cpu-kernels', 'kernels.c')]);
    const scipy = spawnSync('python3', ['-c', 'import scipy, numpy'], { encoding: 'utf8' }).status === 0;
    const data = join(root, '..', 'shared', 'data', 'matrices');
    const all: { name: string; m: () => CsrMatrix }[] = [
      { name: 'random-1M-15', m: () => generatedMatrix(1_000_000, 15) },
      { name: 'bcsstk33', m: () => toCsr(loadMatrix(join(data, 'bcsstk33.mtx'))) },
      { name: 'luxembourg_osm', m: () => toCsr(loadMatrix(join(data, 'luxembourg_osm.mtx'))) },
      { name: 'Groebner_id2003_aug', m: () => toCsr(loadMatrix(join(data, 'Groebner_id2003_aug.mtx'))) },
    ];
    const unknown = ONLY.filter((n) => !all.some((x) => x.name === n));
    if (unknown.length > 0)
      throw new Error(`unknown matrix ${unknown.join(', ')}; known: ${all.map((x) => x.name).join(', ')}`);
    const matrices = all
      .filter((x) => ONLY.length === 0 || ONLY.includes(x.name))
      .map((x) => ({ name: x.name, m: x.m() }));
    const rows: Record<string, unknown>[] = [];
    const loadBefore = loadavg();
    console.log(`load average before: ${loadBefore.map((x) => x.toFixed(2)).join(' ')}`);
    console.log(
      'matrix               kernel      C ms   scipy ms  dype-1 ms  dype-2 ms  dype1/C  dype2/dype1  dype1/scipy  scalar-1 ms | native-1 ms native-2 ms  nat1/C  nat2/C  nat2/nat1  nat1/scipy',
    );
    for (const { name, m } of matrices) {
      const bin = join(dir, `${name}.bin`);
      writeBin(bin, m);
      const c = new Map(
        execFileSync(exe, [bin, String(RUNS)], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { kernel: string; median_ms: number; check: number })
          .map((j) => [j.kernel, j]),
      );
      const py = scipy
        ? new Map(
            execFileSync('python3', [join(root, 'bench', 'cpu-kernels', 'scipy_kernels.py'), bin, String(RUNS)], {
              encoding: 'utf8',
              env: { ...process.env, OPENBLAS_NUM_THREADS: '1' },
            })
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as { kernel: string; median_ms: number })
              .map((j) => [j.kernel, j.median_ms]),
          )
        : new Map<string, number>();
      for (const k of Object.keys(PROGRAMS) as KernelName[]) {
        const d1 = await dypeTimes(k, m, 1);
        const d2 = await dypeTimes(k, m, 2);
        const scalar = k === 'spmm32_f32' ? await dypeTimes(k, m, 1, false) : undefined;
        const n1 = nativeTimes(k, m, 1);
        const n2 = nativeTimes(k, m, 2);
        const cm = c.get(k)!;
        const relErr = Math.max(...[d1, n1].map((d) => Math.abs(d.check - cm.check) / Math.max(1, Math.abs(cm.check))));
        const sc = py.get(k);
        const row = {
          matrix: name,
          rows: m.rows,
          nnz: m.values.length,
          kernel: k,
          c_ms: cm.median_ms,
          scipy_ms: sc ?? null,
          dype1_ms: d1.ms,
          dype2_ms: d2.ms,
          speed_vs_c: cm.median_ms / d1.ms,
          scaling_2t: d1.ms / d2.ms,
          speed_vs_scipy: sc ? sc / d1.ms : null,
          scalar1_ms: scalar?.ms ?? null,
          native1_ms: n1.ms,
          native2_ms: n2.ms,
          native1_vs_c: cm.median_ms / n1.ms,
          native2_vs_c: cm.median_ms / n2.ms,
          native_scaling_2t: n1.ms / n2.ms,
          native1_vs_scipy: sc ? sc / n1.ms : null,
          check_rel_err: relErr,
          loadavg: loadavg(),
        };
        rows.push(row);
        console.log(
          `${name.padEnd(20)} ${k.padEnd(10)} ${cm.median_ms.toFixed(2).padStart(7)} ${sc === undefined ? '       -' : sc.toFixed(2).padStart(9)} ${d1.ms.toFixed(2).padStart(10)} ${d2.ms.toFixed(2).padStart(10)} ${(cm.median_ms / d1.ms).toFixed(2).padStart(8)}x ${(d1.ms / d2.ms).toFixed(2).padStart(11)}x ${sc ? `${(sc / d1.ms).toFixed(2).padStart(10)}x` : '         -'} ${scalar ? scalar.ms.toFixed(2).padStart(11) : '          -'} | ${n1.ms.toFixed(2).padStart(11)} ${n2.ms.toFixed(2).padStart(10)} ${(cm.median_ms / n1.ms).toFixed(2).padStart(6)}x ${(cm.median_ms / n2.ms).toFixed(2).padStart(6)}x ${(n1.ms / n2.ms).toFixed(2).padStart(9)}x ${sc ? `${(sc / n1.ms).toFixed(2).padStart(10)}x` : '          -'}${relErr > 1e-3 ? '  CHECK MISMATCH' : ''}`,
        );
      }
    }
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    const loadAfter = loadavg();
    console.log(`load average after: ${loadAfter.map((x) => x.toFixed(2)).join(' ')}`);
    writeFileSync(
      join(root, 'bench', 'results', 'cpu-kernels.json'),
      JSON.stringify({ runs: RUNS, scipy, loadBefore, loadAfter, rows }, null, 2),
    );
    console.log('wrote bench/results/cpu-kernels.json');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
