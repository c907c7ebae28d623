/**
 * What the wasm SpMV / SpMM time depends on: the measurements behind the CPU
 * cost model (docs/COST-MODEL.md). Times SpMV and SpMM (K = 4, 16, 32), all
 * f32, at 1 and 2 threads, on generated families that vary one thing at a
 * time (rows, nnz per row, column locality, row-length skew, size of the
 * dense operand against the caches) and on every real matrix; prints a table
 * and saves JSON (rows with the matrix's features). What the figures showed,
 * and the model built on them, is in docs/COST-MODEL.md.
 *   npm run build && node dist/bench/cpu-model.js [RUNS]
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { emitWasm } from '../codegen/wasm/emit.js';
import { compileSource } from '../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { features } from '../runtime/features/index.js';
import { cpuClockUsable } from '../cli/calibrate-timing.js';
import { skewedMatrix } from '../runtime/generate.js';
import { generatedMatrix } from '../runtime/generate.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../runtime/tensor.js';
import { createWasmExecutor, type WasmExecutor } from '../runtime/wasm/executor.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const RUNS = Number(process.argv[2] ?? 5);
const THREADS = [1, 2];
const KS = [0, 4, 16, 32];
const USE_CPU = cpuClockUsable();

const SPMV = 'kernel spmv(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }';
const SPMM =
  'kernel spmm(A: csr<f32>[m, n], B: dense<f32>[n, c]) -> (Y: dense<f32>[m, c]) { Y[i, k] = A[i, j] * B[j, k]; }';

async function executor(src: string, threads: number): Promise<WasmExecutor> {
  const m = runPipeline(compileSource(src, 'k.dy').module!, { passes: [...DEFAULT_PIPELINE, lowerKernelsPass] });
  const { binary, manifest } = await emitWasm(m.kernels[0]!);
  return createWasmExecutor(binary, manifest, { threads });
}

function operand(cols: number, k: number): DenseTensor {
  if (k === 0)
    return { format: 'dense', shape: [cols], data: Float64Array.from({ length: cols }, (_, j) => 1 + (j % 7) * 0.25) };
  return { format: 'dense', shape: [cols, k], data: Float64Array.from({ length: cols * k }, (_, p) => (p % 5) * 0.5) };
}

/**
 * Fastest of RUNS timed calls after a warm-up: the least disturbed by other
 * load on a shared machine; at one thread each run counts the smaller of
 * wall and process CPU time (as dype calibrate does).
 */
function timeMs(ex: WasmExecutor, A: CsrMatrix, k: number, threads: number): number {
  const tensors = new Map<string, Tensor>([
    ['A', A],
    [k === 0 ? 'x' : 'B', operand(A.cols, k)],
  ]);
  const dims = new Map([
    ['m', A.rows],
    ['n', A.cols],
    ['c', Math.max(k, 1)],
  ]);
  const run = (): number => {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    ex.execute({ tensors, scalars: new Map(), dims });
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    return threads > 1 || !USE_CPU ? wall : Math.min(wall, (cpu.user + cpu.system) / 1e3);
  };
  run();
  let best = Infinity;
  for (let r = 0; r < RUNS; r++) best = Math.min(best, run());
  return best;
}

function matrices(): { name: string; family: string; A: CsrMatrix }[] {
  const out: { name: string; family: string; A: CsrMatrix }[] = [];
  for (const rows of [1_000, 4_000, 16_000, 64_000, 256_000])
    for (const perRow of [2, 8, 32])
      for (const banded of [false, true])
        out.push({
          name: `${banded ? 'banded' : 'random'}-${rows}x${perRow}`,
          family: banded ? 'banded' : 'random',
          A: generatedMatrix(rows, perRow, banded),
        });
  for (const rows of [4_000, 64_000])
    for (const perRow of [4, 16])
      out.push({ name: `skewed-${rows}x${perRow}`, family: 'skewed', A: skewedMatrix(rows, perRow) });
  out.push({ name: 'tiny-16x1', family: 'tiny', A: generatedMatrix(16, 1, true) });
  const dir = join(root, '..', 'shared', 'data', 'matrices');
  if (existsSync(dir))
    for (const f of readdirSync(dir).sort())
      if (/\.(mtx|cites|txt)$/.test(f) && f !== 'MANIFEST.md') {
        try {
          out.push({ name: f.replace(/\.[a-z]+$/, ''), family: 'real', A: toCsr(loadMatrix(join(dir, f))) });
        } catch (e) {
          console.error(`skipped ${f}: ${(e as Error).message.split('\n')[0]}`);
        }
      }
  return out;
}

const ms = matrices();
const rows: Record<string, unknown>[] = [];
const load0 = loadavg()[0]!;
// Two passes over everything, keeping each run's fastest: a burst of other load hits one pass, not both.
const best = new Map<string, number>();
for (const pass of [0, 1])
  for (const threads of THREADS) {
    const spmv = await executor(SPMV, threads);
    const spmm = await executor(SPMM, threads);
    for (const { name, A } of ms)
      for (const k of KS) {
        const key = `${name}/${threads}/${k}`;
        best.set(key, Math.min(best.get(key) ?? Infinity, timeMs(k === 0 ? spmv : spmm, A, k, threads)));
      }
    spmv.close();
    spmm.close();
    console.error(`pass ${pass} threads ${threads} done, load ${loadavg()[0]!.toFixed(2)}`);
  }
for (const threads of THREADS) {
  for (const { name, family, A } of ms) {
    const f = features(A, 2);
    for (const k of KS) {
      const t = best.get(`${name}/${threads}/${k}`)!;
      rows.push({
        matrix: name,
        family,
        threads,
        k,
        rows: A.rows,
        cols: A.cols,
        nnz: A.values.length,
        rowLenMax: f.rowLenMax,
        rowLenCv: f.rowLenCv,
        localityScore: f.localityScore,
        emptyRowFraction: f.emptyRowFraction,
        ms: t,
      });
      console.log(
        `${name.padEnd(22)} t=${threads} k=${String(k).padStart(2)} nnz=${String(A.values.length).padStart(8)} loc=${(f.localityScore ?? 0).toFixed(2)} ${t.toFixed(4).padStart(10)} ms  ${((t * 1e6) / Math.max(1, A.values.length * Math.max(1, k))).toFixed(3)} ns/mac`,
      );
    }
  }
}
const out = join(root, 'bench', 'results');
mkdirSync(out, { recursive: true });
const file = join(out, `cpu-model-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(file, JSON.stringify({ runs: RUNS, loadavgStart: load0, loadavgEnd: loadavg()[0], rows }, null, 1));
console.log(`load average ${load0.toFixed(2)} -> ${loadavg()[0]!.toFixed(2)}; saved ${file}`);
