/**
 * What transparent huge pages give the native library's buffers
 * (codegen/cpu/library.ts `hugePages`): each kernel's library is built twice
 * from the same loop IR, its `alloc` on ordinary pages and on 2 MiB-aligned
 * blocks with madvise(MADV_HUGEPAGE), and the two executors (one block
 * holding the kernel's operands, laid out by runtime/wasm/executor.ts) are
 * timed call by call in turn, the order alternating, at 1 thread. SpMV
 * f32/f64 and SpMM K = 32 (f32) on a generated 1M-row matrix (x of 4-8 MB,
 * B of 128 MB) and the largest real matrices. Medians of RUNS calls after a
 * warm-up of each; the two builds' results must be the same bits. With
 * --processes=N the whole run is made in N processes one after another (a
 * memory-bound kernel's time moves between processes with where its pages
 * landed) and the table gives per case the median ratio and its range.
 * The system's THP mode is printed: under `never` both builds run on 4 KiB
 * pages, under `always` both may get huge pages (the comparison then
 * measures nothing); each build's own huge pages are the process's
 * AnonHugePages growth over its executor's warm-up. Prints a table and saves
 * JSON (bench/results/cpu-pages.json).
 *   npm run build && node dist/bench/cpu-pages.js [RUNS] [MATRIX ...] [--processes=N]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { buildCpuLibrary } from '../codegen/cpu/build.js';
import { cpuLibrarySource } from '../codegen/cpu/library.js';
import { wasmManifest } from '../codegen/wasm/emit.js';
import { compileSource } from '../frontend/compile.js';
import type { Kernel } from '../ir/module.js';
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
const PROCESSES = Number(argv.find((a) => a.startsWith('--processes='))?.slice('--processes='.length) ?? 1);
const CHILD = argv.includes('--child');
const plain = argv.filter((a) => !a.startsWith('--'));
const RUNS = Number(plain[0] ?? 15);
const ONLY = plain.slice(1);
const data = join(root, '..', 'shared', 'data', 'matrices');
const MATRICES: { name: string; m: () => CsrMatrix }[] = [
  { name: 'random-1M-15', m: () => generatedMatrix(1_000_000, 15) },
  ...['bcsstk33.mtx', 'luxembourg_osm.mtx', 'Groebner_id2003_aug.mtx', 'facebook_combined.txt'].map((f) => ({
    name: f.replace(/\.[a-z]+$/, ''),
    m: () => toCsr(loadMatrix(join(data, f))),
  })),
];

const KERNELS = {
  spmv_f32: 'kernel k(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }',
  spmv_f64: 'kernel k(A: csr<f64>[m, n], x: dense<f64>[n]) -> (y: dense<f64>[m]) { y[i] = A[i, j] * x[j]; }',
  spmm32_f32:
    'kernel k(A: csr<f32>[m, n], B: dense<f32>[n, c]) -> (Y: dense<f32>[m, c]) { Y[i, k] = A[i, j] * B[j, k]; }',
} as const;
type KernelName = keyof typeof KERNELS;

interface Row {
  matrix: string;
  nnz: number;
  kernel: KernelName;
  pages4k_ms: number;
  huge_ms: number;
  /** 4 KiB-page time over huge-page time (above 1: huge pages are faster). */
  speedup: number;
  /** The process's AnonHugePages growth over each build's warm-up (kB): what its executor's block got. */
  huge_kb_4k_build: number;
  huge_kb_huge_build: number;
  same_bits: boolean;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 === 1 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
};

/** The system's transparent-huge-page mode (always, madvise, never), or 'unknown' off Linux. */
function thpMode(): string {
  try {
    return /\[(\w+)\]/.exec(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** This process's anonymous memory on huge pages (kB); 0 where the system does not say (no /proc). */
function anonHugeKb(): number {
  let text: string;
  try {
    text = readFileSync('/proc/self/smaps_rollup', 'utf8');
  } catch {
    return 0;
  }
  const m = /AnonHugePages:\s+(\d+) kB/.exec(text);
  return m ? Number(m[1]) : 0;
}

function operand(name: KernelName, cols: number): DenseTensor {
  const width = name === 'spmm32_f32' ? 32 : 1;
  const values = new Float64Array(cols * width);
  for (let q = 0; q < values.length; q++) values[q] = ((q * 3) % 17) / 8 - 1;
  return { format: 'dense', shape: width === 1 ? [cols] : [cols, width], data: values };
}

function runCases(): Row[] {
  const kernels = Object.fromEntries(
    (Object.keys(KERNELS) as KernelName[]).map((n) => [
      n,
      runPipeline(compileSource(KERNELS[n], `${n}.dy`).module!, { passes: [...DEFAULT_PIPELINE, lowerKernelsPass] })
        .kernels[0]!,
    ]),
  ) as Record<KernelName, Kernel>;
  const libs = new Map<string, { path: string; cleanup: () => void }>();
  const lib = (n: KernelName, huge: boolean): string => {
    const key = `${n}/${huge}`;
    let l = libs.get(key);
    if (!l) {
      const k = kernels[n];
      const source = cpuLibrarySource(n, 'bench', [{ kernel: k, manifest: wasmManifest(k, [], true) }], undefined, {
        hugePages: huge,
      });
      libs.set(key, (l = buildCpuLibrary(source, null)));
    }
    return l.path;
  };
  const rows: Row[] = [];
  try {
    for (const { name, m: load } of MATRICES) {
      if (ONLY.length > 0 && !ONLY.includes(name)) continue;
      const A = load();
      for (const n of Object.keys(KERNELS) as KernelName[]) {
        const k = kernels[n];
        const manifest = wasmManifest(k, [], true);
        const tensors = new Map<string, Tensor>([
          ['A', A],
          [n === 'spmm32_f32' ? 'B' : 'x', operand(n, A.cols)],
        ]);
        const inputs = { tensors, scalars: new Map<string, number>() };
        const exs = [false, true].map((huge) =>
          createNativeCpuExecutor(lib(n, huge), manifest, { program: n, programHash: 'bench', threads: 1 }),
        );
        try {
          const huge: number[] = [];
          for (const ex of exs) {
            const kb0 = anonHugeKb();
            warmUp(() => ex.execute(inputs), 200, 300);
            huge.push(anonHugeKb() - kb0);
          }
          const ts: number[][] = [[], []];
          for (let r = 0; r < RUNS; r++)
            for (const q of r % 2 === 0 ? [0, 1] : [1, 0]) {
              const t0 = performance.now();
              exs[q]!.execute(inputs);
              ts[q]!.push(performance.now() - t0);
            }
          const [a, b] = ts.map(median) as [number, number];
          const bits = exs.map(outputDigest);
          rows.push({
            matrix: name,
            nnz: A.values.length,
            kernel: n,
            pages4k_ms: a,
            huge_ms: b,
            speedup: a / b,
            huge_kb_4k_build: huge[0]!,
            huge_kb_huge_build: huge[1]!,
            same_bits: bits[0] === bits[1],
          });
        } finally {
          for (const ex of exs) ex.close();
        }
      }
    }
  } finally {
    for (const l of libs.values()) l.cleanup();
  }
  return rows;
}

function main(): void {
  const load0 = loadavg();
  const thp = thpMode();
  let runs: Row[][];
  if (CHILD) {
    process.stdout.write(JSON.stringify(runCases()));
    return;
  }
  if (PROCESSES <= 1) runs = [runCases()];
  else {
    runs = [];
    for (let p = 0; p < PROCESSES; p++) {
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), String(RUNS), ...ONLY, '--child'], {
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      });
      if (r.status !== 0) throw new Error(`cpu-pages: process ${p + 1} failed: ${r.stderr}`);
      runs.push(JSON.parse(r.stdout) as Row[]);
    }
  }
  const load1 = loadavg();
  const table = runs[0]!.map((first, q) => {
    const all = runs.map((rs) => rs[q]!);
    const sp = all.map((r) => r.speedup).sort((x, y) => x - y);
    return {
      ...first,
      pages4k_ms: median(all.map((r) => r.pages4k_ms)),
      huge_ms: median(all.map((r) => r.huge_ms)),
      speedup: median(sp),
      speedup_range: [sp[0]!, sp[sp.length - 1]!],
      huge_kb_4k_build: Math.max(...all.map((r) => r.huge_kb_4k_build)),
      huge_kb_huge_build: Math.max(...all.map((r) => r.huge_kb_huge_build)),
      same_bits: all.every((r) => r.same_bits),
    };
  });
  const f = (x: number): string => x.toFixed(3);
  console.log(
    `native library, 1 thread, 4 KiB pages against huge pages in turn; medians of ${RUNS} calls, ${runs.length} process(es); THP mode ${thp}; load average ${load0.map((x) => x.toFixed(2)).join(' ')} before, ${load1.map((x) => x.toFixed(2)).join(' ')} after`,
  );
  if (thp !== 'madvise')
    console.log(
      `note: THP mode ${thp}: ${thp === 'always' ? 'the plain build may get huge pages too' : 'neither build gets huge pages'}; the ratios do not compare 4 KiB with huge pages`,
    );
  console.log(
    '| matrix | nnz | kernel | 4 KiB ms | huge ms | 4 KiB / huge | huge pages kB (4 KiB build / huge build) | bits |',
  );
  console.log('|---|---:|---|---:|---:|---:|---:|---|');
  for (const r of table) {
    console.log(
      `| ${r.matrix} | ${r.nnz} | ${r.kernel} | ${f(r.pages4k_ms)} | ${f(r.huge_ms)} | ${r.speedup.toFixed(2)}x (${r.speedup_range.map((x) => x.toFixed(2)).join('-')}) | ${r.huge_kb_4k_build} / ${r.huge_kb_huge_build} | ${r.same_bits ? 'same' : 'DIFFERENT'} |`,
    );
    if (!r.same_bits) process.exitCode = 1;
  }
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'cpu-pages.json'),
    JSON.stringify(
      {
        command: `node dist/bench/cpu-pages.js ${argv.join(' ')}`.trim(),
        runs: RUNS,
        processes: runs.length,
        thp_mode: thp,
        load: { before: load0, after: load1 },
        rows: table,
      },
      null,
      2,
    ) + '\n',
  );
  console.log('saved bench/results/cpu-pages.json');
}

main();
