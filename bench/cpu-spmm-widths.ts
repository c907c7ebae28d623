/**
 * Native SpMM by dense width K: dype's native CPU library (codegen/cpu: a
 * copy per common width, codegen/cpu/emit.ts) against plain C with the
 * column loop innermost (bench/cpu-spmm-widths/spmm.c, the system compiler
 * at -O3 -march=native), f32 and f64, K = 4, 8, 16, 24, 32, 64, one thread,
 * on three real matrices: a power-law graph (ca-GrQc), a FEM matrix
 * (bcsstk33), a road network of 2 entries a row (luxembourg_osm). Each
 * figure is the least of RUNS calls; dype and C run in turn per matrix.
 * Prints a table with ns per gathered element (nnz x K) and the ratio, and
 * saves JSON (bench/results/cpu-spmm-widths.json).
 *   npm run build && node dist/bench/cpu-spmm-widths.js [RUNS]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { ccCommand, cCompiler } from '../codegen/cpu/build.js';
import { compileCpuKernel } from '../codegen/cpu/compile.js';
import { cacheRoot } from '../codegen/wasm/cache.js';
import { compileSource } from '../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import { createNativeCpuExecutor } from '../runtime/native/cpu-executor.js';
import type { Tensor } from '../runtime/tensor.js';
import { writeCsrBin } from './csr-bin.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNS = Number(process.argv[2] ?? 30);
const KS = [4, 8, 16, 24, 32, 64];
const MATRICES = ['ca-GrQc.mtx', 'bcsstk33.mtx', 'luxembourg_osm.mtx'];
const DTYPES = ['f32', 'f64'] as const;

const dir = mkdtempSync(join(tmpdir(), 'dype-spmm-widths-'));
try {
  const exe = join(dir, 'spmm');
  const cc = ccCommand(cCompiler(), [
    '-O3',
    '-march=native',
    join(root, 'bench', 'cpu-spmm-widths', 'spmm.c'),
    '-o',
    exe,
  ]);
  execFileSync(cc.file, cc.args);
  const executors = new Map(
    DTYPES.map((dt) => {
      const src = `kernel spmm(A: csr<${dt}>[m, n], B: dense<${dt}>[n, c]) -> (Y: dense<${dt}>[m, c]) { Y[i, k] = A[i, j] * B[j, k]; }`;
      const mod = runPipeline(compileSource(src, 'spmm.dy').module!, {
        passes: [...DEFAULT_PIPELINE, lowerKernelsPass],
      });
      const c = compileCpuKernel(`spmm_${dt}`, mod.kernels[0]!, cacheRoot());
      const ex = createNativeCpuExecutor(c.build.path, c.manifest, {
        program: c.program,
        programHash: c.hash,
        threads: 1,
      });
      c.build.cleanup();
      return [dt, ex] as const;
    }),
  );
  const rows: { matrix: string; dtype: string; k: number; nnz: number; dypeUs: number; cUs: number }[] = [];
  const load = loadavg()[0]!;
  for (const f of MATRICES) {
    const A = toCsr(loadMatrix(join(root, '..', 'shared', 'data', 'matrices', f)));
    const bin = join(dir, 'A.bin');
    writeCsrBin(bin, A, false);
    const c = new Map<string, number>();
    for (const line of execFileSync(exe, [bin, String(RUNS), ...KS.map(String)], { encoding: 'utf8' })
      .trim()
      .split('\n')) {
      const [dt, k, us] = line.split(' ');
      c.set(`${dt}/${k}`, Number(us));
    }
    for (const dt of DTYPES)
      for (const k of KS) {
        const B: Tensor = {
          format: 'dense',
          shape: [A.cols, k],
          data: Float64Array.from({ length: A.cols * k }, (_, p) => (p % 5) * 0.5),
        };
        const inputs = {
          tensors: new Map<string, Tensor>([
            ['A', A],
            ['B', B],
          ]),
          scalars: new Map<string, number>(),
          dims: new Map([
            ['m', A.rows],
            ['n', A.cols],
            ['c', k],
          ]),
        };
        const ex = executors.get(dt)!;
        ex.execute(inputs);
        let best = Infinity;
        for (let r = 0; r < RUNS; r++) {
          const t0 = performance.now();
          ex.execute(inputs);
          best = Math.min(best, performance.now() - t0);
        }
        rows.push({ matrix: f, dtype: dt, k, nnz: A.values.length, dypeUs: best * 1e3, cUs: c.get(`${dt}/${k}`)! });
      }
  }
  for (const ex of executors.values()) ex.close();
  console.log(`native SpMM, 1 thread, least of ${RUNS} calls; load average ${load.toFixed(2)} before`);
  console.log(`${'matrix'.padEnd(20)} dtype   K    dype us     C us  dype ns/gather  C/dype`);
  for (const r of rows)
    console.log(
      `${r.matrix.padEnd(20)} ${r.dtype.padEnd(5)} ${String(r.k).padStart(3)} ${r.dypeUs.toFixed(1).padStart(10)} ${r.cUs.toFixed(1).padStart(8)} ${((r.dypeUs * 1e3) / (r.nnz * r.k)).toFixed(3).padStart(15)} ${(r.cUs / r.dypeUs).toFixed(2).padStart(7)}`,
    );
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'cpu-spmm-widths.json'),
    JSON.stringify({ command: `node dist/bench/cpu-spmm-widths.js ${RUNS}`, loadBefore: load, rows }, null, 2) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
