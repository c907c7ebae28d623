/**
 * Rows two at a time (codegen/cpu/pairs.ts): SpMV, f32 and f64, on every
 * real matrix through the native library and the wasm module printed with
 * the two-cursor row loop and without it (the emitters' `pairs` option), one
 * thread. Per matrix and kernel the two builds of each backend are timed in
 * turn (the order alternating), medians of RUNS calls, in two pairs of
 * executors made in either order (times: the geometric mean of the two),
 * twice: with the
 * operands cached (each timed call after two untimed ones) and evicted (a
 * 32 MB sweep before each timed call). The ratio is the plain loop's time
 * over the two cursors'; where a matrix's rows hold fewer than
 * PAIR_MIN_ENTRIES entries a row (or its x passes PAIR_MAX_GATHER_BYTES) both
 * builds run the same loop and the ratio is the bench's spread. Each
 * executor is warmed up first (up to 300 calls or 200 ms: ./warm-up.ts).
 * Checks that
 * both builds' results are bit-identical. Prints a table and saves JSON
 * (bench/results/cpu-pairs.json).
 *   npm run build && node dist/bench/cpu-pairs.js [RUNS] [MATRIX ...]
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { buildCpuLibrary } from '../codegen/cpu/build.js';
import { cpuLibrarySource } from '../codegen/cpu/library.js';
import { takesTwoCursors } from '../codegen/cpu/pairs.js';
import { emitWasm, wasmManifest } from '../codegen/wasm/emit.js';
import { compileSource } from '../frontend/compile.js';
import type { Kernel } from '../ir/module.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { toCsr } from '../runtime/io/convert.js';
import { isEdgeListPath, loadMatrix } from '../runtime/io/load.js';
import { createNativeCpuExecutor } from '../runtime/native/cpu-executor.js';
import type { CsrMatrix, Tensor } from '../runtime/tensor.js';
import { createWasmExecutor, type WasmExecutor } from '../runtime/wasm/executor.js';
import { warmUp } from './warm-up.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNS = Number(process.argv[2] ?? 31);
const ONLY = process.argv.slice(3);
const DTYPES = ['f32', 'f64'] as const;
type Dtype = (typeof DTYPES)[number];
const BACKENDS = ['native', 'wasm'] as const;
type Backend = (typeof BACKENDS)[number];
type Mode = 'cached' | 'evicted';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const kernelOf = (dt: Dtype): Kernel =>
  runPipeline(
    compileSource(
      `kernel spmv(A: csr<${dt}>[m, n], x: dense<${dt}>[n]) -> (y: dense<${dt}>[m]) { y[i] = A[i, j] * x[j]; }`,
      'spmv.dy',
    ).module!,
    { passes: [...DEFAULT_PIPELINE, lowerKernelsPass] },
  ).kernels[0]!;

/**
 * Per dtype, backend, `pairs` and creation order: an executor at one thread. Two sets, one made plain first and
 * one two-cursor first: of two wasm instances of the same code, the one made second ran 10-20% faster on the
 * small matrices in a first version of this bench, so each comparison is made in both orders.
 */
async function executors(): Promise<{
  get: (dt: Dtype, b: Backend, pairs: boolean, order: number) => WasmExecutor;
  close(): void;
}> {
  const made = new Map<string, WasmExecutor>();
  const cleanups: (() => void)[] = [];
  for (const dt of DTYPES) {
    const kernel = kernelOf(dt);
    const manifest = wasmManifest(kernel, [], true);
    for (const order of [0, 1])
      for (const pairs of order === 0 ? [false, true] : [true, false]) {
        const program = `spmv_${dt}_${pairs ? 'pairs' : 'plain'}_${order}`;
        const source = cpuLibrarySource(program, 'bench', [{ kernel, manifest }], undefined, { pairs });
        const build = buildCpuLibrary(source, null);
        cleanups.push(build.cleanup);
        const native = createNativeCpuExecutor(build.path, manifest, { program, programHash: 'bench', threads: 1 });
        made.set(`${dt}/native/${pairs}/${order}`, native);
        const w = await emitWasm(kernel, { pairs });
        made.set(`${dt}/wasm/${pairs}/${order}`, await createWasmExecutor(w.binary, w.manifest, { threads: 1 }));
      }
  }
  return {
    get: (dt, b, pairs, order) => made.get(`${dt}/${b}/${pairs}/${order}`)!,
    close: () => {
      for (const e of made.values()) e.close();
      for (const c of cleanups) c();
    },
  };
}

const sweep = new Float64Array(4 << 20);
/** The sweeps' sum, saved with the results so that the reads cannot be dropped. */
let sweepSum = 0;
function evict(): void {
  let s = 0;
  for (let i = 0; i < sweep.length; i += 8) s += sweep[i]!;
  sweepSum += s;
}

interface Row {
  matrix: string;
  rows: number;
  nnz: number;
  entries_per_row: number;
  dtype: Dtype;
  backend: Backend;
  /** Whether the two-cursor loop runs on this matrix (else both builds run the plain loop). */
  two_cursors: boolean;
  plain_cached_us: number;
  pairs_cached_us: number;
  plain_evicted_us: number;
  pairs_evicted_us: number;
  /** Plain time over two-cursor time (above 1: the two cursors are faster). */
  speedup_cached: number;
  speedup_evicted: number;
  /** The same ratios in each creation order (plain made first, two-cursor made first). */
  speedup_by_order: { cached: number; evicted: number }[];
}

function timePair(a: () => void, b: () => void, mode: Mode): [number, number] {
  const ts: [number[], number[]] = [[], []];
  const fs = [a, b];
  for (let rep = 0; rep < RUNS; rep++)
    for (const k of rep % 2 ? [1, 0] : [0, 1]) {
      if (mode === 'cached') {
        fs[k]!();
        fs[k]!();
      } else evict();
      const t0 = performance.now();
      fs[k]!();
      ts[k]!.push((performance.now() - t0) * 1e3);
    }
  return [median(ts[0]), median(ts[1])];
}

async function main(): Promise<void> {
  const dir = join(root, '..', 'shared', 'data', 'matrices');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.mtx') || isEdgeListPath(f))
    .filter((f) => ONLY.length === 0 || ONLY.includes(f.replace(/\.(mtx|txt|cites)$/, '')))
    .sort();
  const load0 = loadavg()[0]!;
  const ex = await executors();
  const rows: Row[] = [];
  try {
    for (const file of files) {
      const A: CsrMatrix = toCsr(loadMatrix(join(dir, file)));
      const name = file.replace(/\.(mtx|txt|cites)$/, '');
      const x: Tensor = {
        format: 'dense',
        shape: [A.cols],
        data: Float64Array.from({ length: A.cols }, (_, j) => 1 + (j % 7) / 4),
      };
      const inputs = {
        tensors: new Map<string, Tensor>([
          ['A', A],
          ['x', x],
        ]),
        scalars: new Map<string, number>(),
      };
      const perRow = A.values.length / Math.max(1, A.rows);
      for (const dtype of DTYPES)
        for (const backend of BACKENDS) {
          // Per creation order: plain and two-cursor times, cached and evicted.
          const t: number[][] = [];
          for (const order of [0, 1]) {
            const plain = ex.get(dtype, backend, false, order);
            const pairs = ex.get(dtype, backend, true, order);
            plain.execute(inputs);
            pairs.execute(inputs);
            const yp = plain.resultView('y');
            const yq = pairs.resultView('y');
            for (let i = 0; i < yp.length; i++)
              if (!Object.is(yp[i], yq[i]))
                throw new Error(`${name} ${dtype} ${backend}: y[${i}] differs: ${yp[i]} plain, ${yq[i]} two cursors`);
            for (const e of [plain, pairs]) warmUp(() => e.execute(inputs), 300, 200);
            t.push([
              ...timePair(
                () => plain.execute(inputs),
                () => pairs.execute(inputs),
                'cached',
              ),
              ...timePair(
                () => plain.execute(inputs),
                () => pairs.execute(inputs),
                'evicted',
              ),
            ]);
          }
          const geo = (i: number): number => Math.sqrt(t[0]![i]! * t[1]![i]!);
          const [pc, qc, pe, qe] = [0, 1, 2, 3].map(geo) as [number, number, number, number];
          rows.push({
            matrix: name,
            rows: A.rows,
            nnz: A.values.length,
            entries_per_row: perRow,
            dtype,
            backend,
            two_cursors: takesTwoCursors(A.rows, A.values.length, A.rows, dtype),
            plain_cached_us: pc,
            pairs_cached_us: qc,
            plain_evicted_us: pe,
            pairs_evicted_us: qe,
            speedup_cached: pc / qc,
            speedup_evicted: pe / qe,
            speedup_by_order: t.map(([a, b, c, d]) => ({ cached: a! / b!, evicted: c! / d! })),
          });
        }
    }
  } finally {
    ex.close();
  }
  const load1 = loadavg()[0]!;
  console.log(
    `SpMV, one thread: plain loop time / two-cursor time (above 1: two cursors faster), medians of ${RUNS}; load average ${load0.toFixed(2)} -> ${load1.toFixed(2)}`,
  );
  console.log(
    'matrix               per row  cursors | native f32 cached evicted | native f64 cached evicted | wasm f32 cached evicted | wasm f64 cached evicted',
  );
  const f = (x: number): string => `${x.toFixed(2)}x`.padStart(7);
  for (const m of [...new Set(rows.map((r) => r.matrix))]) {
    const of = (b: Backend, d: Dtype): Row => rows.find((r) => r.matrix === m && r.backend === b && r.dtype === d)!;
    const r0 = of('native', 'f32');
    const cells = BACKENDS.flatMap((b) =>
      DTYPES.map((d) => `${f(of(b, d).speedup_cached)} ${f(of(b, d).speedup_evicted)}`),
    );
    console.log(
      `${m.padEnd(20)} ${r0.entries_per_row.toFixed(1).padStart(7)}  ${(of('native', 'f64').two_cursors ? 'yes' : 'no').padEnd(7)} | ${cells.join('          | ')}`,
    );
  }
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  const out = join(root, 'bench', 'results', 'cpu-pairs.json');
  writeFileSync(out, JSON.stringify({ runs: RUNS, load: [load0, load1], sweepSum, rows }, null, 2) + '\n');
  console.log(`wrote ${out}`);
}

await main();
