/**
 * CPU kernels: dype's wasm and native backends at 1 and 2 threads against a C baseline
 * (gcc -O3 -march=native; SpMM with explicit vector extensions) and scipy
 * (when importable), on generated 1M-row matrices (~15 nnz per row, and
 * power-law rows of mean 10) and the largest real matrices. SpMV f32/f64 and SpMM with K = 32 (f32); SpMM
 * also through the scalar path (SIMD off) to show what SIMD gives. The C
 * baseline is a shared library called in process (koffi), and per kernel
 * the C call and every dype executor are timed in turn within each of RUNS
 * repetitions (the order rotating), so that the machine's load, which
 * varies by tens of percent on a shared host within seconds, hits them
 * alike; medians after a warm-up of each (up to 200 calls or 150 ms). scipy runs in its own process. The load
 * average is recorded with the figures. The native backend's library
 * (codegen/cpu, the system C compiler) is built once per kernel through
 * the compile cache. Prints a table and saves JSON.
 *   npm run build && node dist/bench/cpu-kernels.js [RUNS] [MATRIX ...] [--processes=N]
 * (MATRIX: names of the table's matrices to run, default all). With
 * --processes=N the whole run is made in N processes one after another and
 * the table gives, per kernel, the median over them of each time and of
 * each ratio (with the ratios' range): a memory-bound kernel's time moves
 * up to 2x between processes on a virtual machine, with where its pages
 * landed, while within a process the sides are timed alike.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import koffi from 'koffi';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { generatedMatrix, skewedMatrix } from '../runtime/generate.js';
import { writeCsrBin } from './csr-bin.js';
import { warmUp } from './warm-up.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const ARGS = process.argv.slice(2).filter((a) => !a.startsWith('--processes='));
const PROCESSES = Number(process.argv.find((a) => a.startsWith('--processes='))?.slice('--processes='.length) ?? 1);
if (!Number.isInteger(PROCESSES) || PROCESSES < 1) throw new Error('--processes=N: N must be a positive integer');
const RUNS = Number(ARGS[0] ?? 15);
const ONLY = ARGS.slice(1);
/** Where a child process of --processes writes its rows (the parent aggregates them). */
const CHILD_OUT = process.env.DYPE_BENCH_CHILD_OUT;

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

/** One way of running a kernel on the matrix: `run` is timed; `check` reads an output element after the runs. */
interface Runner {
  run: () => unknown;
  check: () => number;
  close: () => void;
}

/** Each kernel's wasm module (per SIMD on or off) and native library, made once for every matrix and thread count. */
const wasmModules = new Map<string, ReturnType<typeof emitWasm>>();
const nativeLibs = new Map<KernelName, ReturnType<typeof compileCpuKernel>>();

async function wasmRunner(name: KernelName, A: CsrMatrix, threads: number, simd = true): Promise<Runner> {
  const key = `${name}/${simd}`;
  if (!wasmModules.has(key)) wasmModules.set(key, emitWasm(kernelOf(name), { simd }));
  const { binary, manifest } = await wasmModules.get(key)!;
  return executorRunner(name, A, await createWasmExecutor(binary, manifest, { threads }));
}

function nativeRunner(name: KernelName, A: CsrMatrix, threads: number): Runner {
  let c = nativeLibs.get(name);
  if (!c) nativeLibs.set(name, (c = compileCpuKernel(name, kernelOf(name), cacheRoot())));
  const ex = createNativeCpuExecutor(c.build.path, c.manifest, { threads, program: c.program, programHash: c.hash });
  return executorRunner(name, A, ex);
}

function executorRunner(name: KernelName, A: CsrMatrix, ex: WasmExecutor): Runner {
  const tensors = new Map<string, Tensor>([
    ['A', A],
    [name === 'spmm32_f32' ? 'B' : 'x', operand(name, A.cols)],
  ]);
  const dims = new Map([
    ['m', A.rows],
    ['n', A.cols],
    ['c', 32],
  ]);
  return {
    // Results stay in the executor's memory, as C's stay in its arrays; read back once after.
    run: () => ex.execute({ tensors, scalars: new Map(), dims }),
    check: () => {
      const res = [...ex.results().outputs.values()][0] as DenseTensor;
      const mid = A.rows >> 1;
      return name === 'spmm32_f32' ? res.data[mid * 32 + 3]! : res.data[mid]!;
    },
    close: () => ex.close(),
  };
}

/**
 * Medians (ms) of each runner over RUNS repetitions, the runners timed in turn in each (the first one first in turn),
 * after each ran WARM_CALLS times or WARM_MS (./warm-up.ts).
 */
const WARM_CALLS = 200;
const WARM_MS = 150;
function timeInTurn(runners: readonly Runner[]): number[] {
  for (const r of runners) warmUp(r.run, WARM_CALLS, WARM_MS);
  const ts: number[][] = runners.map(() => []);
  for (let rep = 0; rep < RUNS; rep++)
    for (let n = 0; n < runners.length; n++) {
      const at = (n + rep) % runners.length;
      const t0 = performance.now();
      runners[at]!.run();
      ts[at]!.push(performance.now() - t0);
    }
  return ts.map(median);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dype-bench-'));
  try {
    const so = join(dir, 'kernels.so');
    execFileSync('gcc', [
      '-O3',
      '-march=native',
      '-fPIC',
      '-shared',
      '-o',
      so,
      join(root, 'bench', 'cpu-kernels', 'kernels.c'),
    ]);
    const lib = koffi.load(so);
    const cLoad = lib.func('int dy_bench_load(const char *path)') as (path: string) => number;
    const cRun = lib.func('double dy_bench_run(int kernel)') as (kernel: number) => number;
    const cFree = lib.func('void dy_bench_free(void)') as () => void;
    const C_KERNEL: Record<KernelName, number> = { spmv_f32: 0, spmv_f64: 1, spmm32_f32: 2 };
    const scipy = spawnSync('python3', ['-c', 'import scipy, numpy'], { encoding: 'utf8' }).status === 0;
    const data = join(root, '..', 'shared', 'data', 'matrices');
    const all: { name: string; m: () => CsrMatrix }[] = [
      { name: 'random-1M-15', m: () => generatedMatrix(1_000_000, 15) },
      // Power-law rows (Pareto 1.5, mean 10, random columns): 9.85M entries, the longest row 28,443.
      { name: 'power-law-1M-10', m: () => skewedMatrix(1_000_000, 10) },
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
      writeCsrBin(bin, m);
      if (cLoad(bin) !== 0) throw new Error(`the C baseline could not read ${bin}`);
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
        let cCheck = NaN;
        const cRunner: Runner = {
          run: () => (cCheck = cRun(C_KERNEL[k])),
          check: () => cCheck,
          close: () => {},
        };
        const runners = [
          cRunner,
          await wasmRunner(k, m, 1),
          await wasmRunner(k, m, 2),
          nativeRunner(k, m, 1),
          nativeRunner(k, m, 2),
          ...(k === 'spmm32_f32' ? [await wasmRunner(k, m, 1, false)] : []),
        ];
        let medians: number[];
        let checks: number[];
        try {
          medians = timeInTurn(runners);
          checks = runners.map((r) => r.check());
        } finally {
          for (const r of runners) r.close();
        }
        const [c, d1, d2, n1, n2, scalar] = medians as [number, number, number, number, number, number?];
        // dype's 1-thread results (wasm, native) against C's, by the element each runner read back.
        const relErr = Math.max(
          ...[checks[1]!, checks[3]!].map((d) => Math.abs(d - checks[0]!) / Math.max(1, Math.abs(checks[0]!))),
        );
        const sc = py.get(k);
        const row = {
          matrix: name,
          rows: m.rows,
          nnz: m.values.length,
          kernel: k,
          c_ms: c,
          scipy_ms: sc ?? null,
          dype1_ms: d1,
          dype2_ms: d2,
          speed_vs_c: c / d1,
          scaling_2t: d1 / d2,
          speed_vs_scipy: sc ? sc / d1 : null,
          scalar1_ms: scalar ?? null,
          native1_ms: n1,
          native2_ms: n2,
          native1_vs_c: c / n1,
          native2_vs_c: c / n2,
          native_scaling_2t: n1 / n2,
          native1_vs_scipy: sc ? sc / n1 : null,
          check_rel_err: relErr,
          loadavg: loadavg(),
        };
        rows.push(row);
        console.log(
          `${name.padEnd(20)} ${k.padEnd(10)} ${c.toFixed(2).padStart(7)} ${sc === undefined ? '       -' : sc.toFixed(2).padStart(9)} ${d1.toFixed(2).padStart(10)} ${d2.toFixed(2).padStart(10)} ${(c / d1).toFixed(2).padStart(8)}x ${(d1 / d2).toFixed(2).padStart(11)}x ${sc ? `${(sc / d1).toFixed(2).padStart(10)}x` : '         -'} ${scalar !== undefined ? scalar.toFixed(2).padStart(11) : '          -'} | ${n1.toFixed(2).padStart(11)} ${n2.toFixed(2).padStart(10)} ${(c / n1).toFixed(2).padStart(6)}x ${(c / n2).toFixed(2).padStart(6)}x ${(n1 / n2).toFixed(2).padStart(9)}x ${sc ? `${(sc / n1).toFixed(2).padStart(10)}x` : '          -'}${relErr > 1e-3 ? '  CHECK MISMATCH' : ''}`,
        );
      }
    }
    cFree();
    for (const c of nativeLibs.values()) c.build.cleanup();
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    const loadAfter = loadavg();
    console.log(`load average after: ${loadAfter.map((x) => x.toFixed(2)).join(' ')}`);
    const out = CHILD_OUT ?? join(root, 'bench', 'results', 'cpu-kernels.json');
    writeFileSync(out, JSON.stringify({ runs: RUNS, timedInTurn: true, scipy, loadBefore, loadAfter, rows }, null, 2));
    if (!CHILD_OUT) console.log('wrote bench/results/cpu-kernels.json');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Row = Record<string, number | string | null | number[]>;

/** --processes=N: the run N times in fresh processes; per kernel the medians of times and ratios over them. */
function acrossProcesses(): void {
  const dir = mkdtempSync(join(tmpdir(), 'dype-bench-runs-'));
  try {
    const runs: { rows: Row[]; loadBefore: number[]; loadAfter: number[]; scipy: boolean }[] = [];
    for (let n = 0; n < PROCESSES; n++) {
      const out = join(dir, `run${n}.json`);
      console.log(`process ${n + 1} of ${PROCESSES}:`);
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...ARGS], {
        stdio: 'inherit',
        env: { ...process.env, DYPE_BENCH_CHILD_OUT: out },
      });
      if (r.status !== 0) throw new Error(`bench/cpu-kernels: process ${n + 1} failed (status ${r.status})`);
      runs.push(JSON.parse(readFileSync(out, 'utf8')) as (typeof runs)[number]);
    }
    const times = ['c_ms', 'scipy_ms', 'dype1_ms', 'dype2_ms', 'native1_ms', 'native2_ms', 'scalar1_ms'];
    const ratios = [
      'speed_vs_c',
      'scaling_2t',
      'native1_vs_c',
      'native2_vs_c',
      'native_scaling_2t',
      'native1_vs_scipy',
    ];
    const rows: Row[] = runs[0]!.rows.map((first, i) => {
      const all = runs.map((r) => r.rows[i]!);
      if (all.some((r) => r.matrix !== first.matrix || r.kernel !== first.kernel))
        throw new Error('bench/cpu-kernels: the processes ran different kernels');
      const row: Row = { matrix: first.matrix!, rows: first.rows!, nnz: first.nnz!, kernel: first.kernel! };
      for (const k of [...times, ...ratios]) {
        const xs = all.map((r) => r[k]).filter((x): x is number => typeof x === 'number');
        row[k] = xs.length === all.length ? median(xs) : null;
        if (ratios.includes(k) && xs.length === all.length) row[`${k}_range`] = [Math.min(...xs), Math.max(...xs)];
      }
      row.check_rel_err = Math.max(...all.map((r) => r.check_rel_err as number));
      return row;
    });
    const f = (x: Row[string], w: number, d = 2): string => (typeof x === 'number' ? x.toFixed(d) : '-').padStart(w);
    const rng = (x: Row[string]): string => (Array.isArray(x) ? `${x[0]!.toFixed(2)}-${x[1]!.toFixed(2)}` : '-');
    console.log(`\nmedians over ${PROCESSES} processes (ratios: median, range):`);
    console.log(
      'matrix               kernel      C ms  scipy ms  wasm1 ms  wasm2 ms  nat1 ms  nat2 ms |  wasm1/C (range)   nat1/C (range)    nat2/C (range)    nat2/nat1 (range)',
    );
    for (const r of rows)
      console.log(
        `${String(r.matrix).padEnd(20)} ${String(r.kernel).padEnd(10)} ${f(r.c_ms, 7)} ${f(r.scipy_ms, 9)} ${f(r.dype1_ms, 9)} ${f(r.dype2_ms, 9)} ${f(r.native1_ms, 8)} ${f(r.native2_ms, 8)} | ${f(r.speed_vs_c, 6)}x ${rng(r.speed_vs_c_range).padEnd(10)} ${f(r.native1_vs_c, 6)}x ${rng(r.native1_vs_c_range).padEnd(10)} ${f(r.native2_vs_c, 6)}x ${rng(r.native2_vs_c_range).padEnd(10)} ${f(r.native_scaling_2t, 6)}x ${rng(r.native_scaling_2t_range)}`,
      );
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    writeFileSync(
      join(root, 'bench', 'results', 'cpu-kernels.json'),
      JSON.stringify({ runs: RUNS, processes: PROCESSES, timedInTurn: true, rows, perProcess: runs }, null, 2),
    );
    console.log('wrote bench/results/cpu-kernels.json');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (PROCESSES > 1) acrossProcesses();
else await main();
