/**
 * Threads that pay: SpMV (f32) on every real matrix through the native and
 * wasm backends at 1 thread, at 2 threads on every op, and at 2 threads with
 * each op on the count this machine's CPU model picks (what `dype run` does:
 * cli/threads.ts, runtime/catalogue/cpu.ts cpuThreadsFor). The aim: the
 * picked run never slower than the 1-thread run on any matrix (the model
 * picks 1 where 2 loses). Medians of RUNS runs, the three timed in turn
 * within each repetition so that load hits them alike (each after an untimed
 * run of its own, so its caches are its own); with --block=N each run is N
 * calls in a row (their mean), the cadence of a program that runs one op
 * again and again, where alternating counts call by call moves data between
 * the cores' caches at every call; with --settle=MS each timed sample
 * follows MS ms of untimed calls of its configuration instead of one call,
 * so that a worker the scheduler put on the caller's core after it parked
 * has been moved off (docs/PERFORMANCE.md, *Calibration at two threads*):
 * the cadence of ops that run back to back for a while; prints a table
 * and saves JSON (bench/results/cpu-threads.json).
 *   npm run build && node dist/bench/cpu-threads.js [RUNS] [SYSTEM] [--block=N] [--settle=MS]
 * (SYSTEM: a system file or preset, default this-machine.)
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { opThreads } from '../cli/threads.js';
import { loadSystem } from '../cli/planning.js';
import { compileCpuKernel } from '../codegen/cpu/compile.js';
import { plannedSpec } from '../codegen/implementations.js';
import { emitWasm } from '../codegen/wasm/emit.js';
import { compileSource } from '../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { cacheRoot } from '../codegen/wasm/cache.js';
import { sparseFeaturesOf } from '../runtime/guards/index.js';
import { toCsr } from '../runtime/io/convert.js';
import { isEdgeListPath, loadMatrix } from '../runtime/io/load.js';
import { createNativeCpuExecutor } from '../runtime/native/cpu-executor.js';
import type { CsrMatrix, Tensor } from '../runtime/tensor.js';
import { createWasmExecutor, type WasmExecutor } from '../runtime/wasm/executor.js';
import { warmUp } from './warm-up.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const RUNS = Number(positional[0] ?? 21);
const SYSTEM = positional[1] ?? 'this-machine';
const BLOCK = Number(process.argv.find((a) => a.startsWith('--block='))?.slice('--block='.length) ?? 1);
const SETTLE_MS = Number(process.argv.find((a) => a.startsWith('--settle='))?.slice('--settle='.length) ?? 0);
if (!(SETTLE_MS >= 0)) throw new Error(`--settle takes a number of ms, 0 or more, got ${SETTLE_MS}`);
if (!(Number.isInteger(BLOCK) && BLOCK >= 1)) throw new Error(`--block takes a positive integer, got ${BLOCK}`);
const SPMV = 'kernel spmv(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const module = runPipeline(compileSource(SPMV, 'spmv.dy').module!, { passes: [...DEFAULT_PIPELINE, lowerKernelsPass] });
const kernel = module.kernels[0]!;
const spec = plannedSpec(module, 'spmv.dy', kernel.name);
const sys = loadSystem({ system: SYSTEM }, 'this-machine');

/**
 * One executor at 2 threads per backend, its op's count set per configuration: two wasm pools (or two native
 * libraries' pools) in one process on two cores would have one's spinning worker compete with the other's.
 */
async function executor(backend: 'native' | 'wasm'): Promise<WasmExecutor> {
  if (backend === 'native') {
    const c = compileCpuKernel('spmv', kernel, cacheRoot());
    const made = createNativeCpuExecutor(c.build.path, c.manifest, {
      program: c.program,
      programHash: c.hash,
      threads: 2,
    });
    c.build.cleanup();
    return made;
  }
  const { binary, manifest } = await emitWasm(kernel);
  return createWasmExecutor(binary, manifest, { threads: 2 });
}

interface Row {
  backend: string;
  matrix: string;
  rows: number;
  nnz: number;
  picked: number;
  t1Us: number;
  t2Us: number;
  pickedUs: number;
  /** picked / 1-thread: the aim is at most 1 (within timing noise). */
  pickedVsOne: number;
  /** picked / the better of 1 and 2 threads. */
  pickedVsBest: number;
}

const dir = join(root, '..', 'shared', 'data', 'matrices');
const mats = readdirSync(dir)
  .filter((f) => f.endsWith('.mtx') || isEdgeListPath(f))
  .sort()
  .map((f) => ({ name: f.replace(/\.(mtx|txt|cites)$/, ''), m: toCsr(loadMatrix(join(dir, f))) }))
  .filter((x) => x.m.values.length > 0);
const rows: Row[] = [];
/** Per backend, whose fit picked its counts (runtime/system/cpu-backend.ts): each backend's own where the system has it. */
const pickedBy: Record<string, string> = {};
const loadBefore = loadavg();
console.log(
  `system ${sys.name}; ${RUNS} runs of ${BLOCK} call(s) after ${SETTLE_MS} ms settling; load average before: ${loadBefore.map((x) => x.toFixed(2)).join(' ')}`,
);
console.log('backend  matrix                       rows       nnz  pick   1t us   2t us  pick us  pick/1t  pick/best');
/** SpMV inputs of matrix m with x all ones. */
function inputsOf(m: CsrMatrix): { tensors: Map<string, Tensor>; scalars: Map<string, number> } {
  const x = { format: 'dense' as const, shape: [m.cols], data: new Float64Array(m.cols).fill(1) };
  return {
    tensors: new Map<string, Tensor>([
      ['A', m],
      ['x', x],
    ]),
    scalars: new Map<string, number>(),
  };
}

for (const backend of ['native', 'wasm'] as const) {
  const exec = await executor(backend);
  // Warmed up (./warm-up.ts) at 1 and 2 threads on a mid-sized matrix before any timing. Two threads for
  // 300 ms: a process's first 40-60 ms of two-thread wasm ops ran small SpMVs up to 2.5x slower than later
  // ones (docs/PERFORMANCE.md, *Threads per op*), whatever the matrix, and 300 calls took 10-15 ms.
  const warm = inputsOf(mats.find((x) => x.name === 'bcsstk13')?.m ?? mats[0]!.m);
  for (const c of [1, 2]) {
    exec.setOpThreads(new Map([['op0', c]]));
    warmUp(() => exec.execute(warm), c === 1 ? 300 : Infinity, c === 1 ? 200 : 300);
  }
  for (const { name, m } of mats) {
    const per = opThreads(
      spec,
      sys,
      {
        sparse: new Map([['A', sparseFeaturesOf(m, 2)]]),
        dims: new Map([
          ['m', m.rows],
          ['n', m.cols],
        ]),
        scalars: new Map(),
      },
      2,
      backend,
    );
    pickedBy[backend] = per.from;
    const configs = [new Map([['op0', 1]]), new Map([['op0', 2]]), per.counts];
    const inputs = inputsOf(m);
    const ts: number[][] = [[], [], []];
    // Each timed run follows an untimed one of the same configuration: a 1-thread run right after a 2-thread one
    // finds half the data in the other core's caches, which a run of one configuration does not. With --block=N a
    // timed sample is the mean of N calls in a row, as a program runs one op again and again.
    for (let r = 0; r < RUNS; r++)
      configs.forEach((c, i) => {
        exec.setOpThreads(c);
        const s0 = performance.now();
        do exec.execute(inputs);
        while (performance.now() - s0 < SETTLE_MS);
        const t0 = performance.now();
        for (let b = 0; b < BLOCK; b++) exec.execute(inputs);
        ts[i]!.push(((performance.now() - t0) * 1e3) / BLOCK);
      });
    const [t1, t2, tp] = ts.map(median) as [number, number, number];
    const picked = per.counts.get('op0') ?? 2;
    const row: Row = {
      backend,
      matrix: name,
      rows: m.rows,
      nnz: m.values.length,
      picked,
      t1Us: t1,
      t2Us: t2,
      pickedUs: tp,
      pickedVsOne: tp / t1,
      pickedVsBest: tp / Math.min(t1, t2),
    };
    rows.push(row);
    console.log(
      `${backend.padEnd(8)} ${name.padEnd(24)} ${String(m.rows).padStart(9)} ${String(m.values.length).padStart(9)} ${String(picked).padStart(5)} ${t1.toFixed(1).padStart(7)} ${t2.toFixed(1).padStart(7)} ${tp.toFixed(1).padStart(8)} ${row.pickedVsOne.toFixed(2).padStart(8)} ${row.pickedVsBest.toFixed(2).padStart(10)}`,
    );
  }
  exec.close();
}
const loadAfter = loadavg();
console.log(`load average after: ${loadAfter.map((x) => x.toFixed(2)).join(' ')}`);
for (const backend of ['native', 'wasm']) {
  const rs = rows.filter((r) => r.backend === backend);
  const twoLoses = rs.filter((r) => r.t2Us > r.t1Us);
  const slower = rs.filter((r) => r.pickedVsOne > 1.05);
  console.log(
    `${backend}: 2 threads on every op slower than 1 on ${twoLoses.length} of ${rs.length} matrices; ` +
      `the picked counts more than 5% slower than 1 thread on ${slower.length} (${slower.map((r) => r.matrix).join(', ') || 'none'}); ` +
      `picked / best: median ${median(rs.map((r) => r.pickedVsBest)).toFixed(2)}, max ${Math.max(...rs.map((r) => r.pickedVsBest)).toFixed(2)}; ` +
      `picked by ${pickedBy[backend]}`,
  );
}
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'cpu-threads.json'),
  JSON.stringify(
    { system: sys.name, runs: RUNS, block: BLOCK, settleMs: SETTLE_MS, loadBefore, loadAfter, pickedBy, rows },
    null,
    2,
  ),
);
console.log('wrote bench/results/cpu-threads.json');
