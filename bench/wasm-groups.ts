/**
 * How a wasm SIMD loop should be blocked (codegen/wasm/simd.ts `GROUPS`,
 * `SPREAD`). Each kernel is emitted once per variant (a blocking and a number
 * of spread walks), all of them run in one process, interleaved call by call
 * on the same inputs at 1 thread (after a 200 ms warm-up each, so every
 * module is in V8's optimising tier), medians and minima of RUNS calls; the
 * outputs must be the same bits for every variant. The first variant is the
 * baseline of the ratios. `--blocks` and `--spread` list one value per
 * variant (`;`-separated; a single value applies to every variant);
 * `--matrices` names files of the shared matrices or generated ones
 * (random-<rows>-<per row>, banded-<rows>-<per row>, rows as 1M or 250k).
 * A variant of more than 1 spread walk runs its ops' spread functions on
 * every call, or with `--auto` where the executor's rule picks them
 * (runtime/wasm/spread.ts). By default: 1 walk against `SPREAD`.
 *   npm run build && node dist/bench/wasm-groups.js [RUNS] [--blocks=8,4,1;4,2,1] [--spread=1;2] [--auto] [--matrices=a.mtx,random-1M-15] [--cases=spmm f32 K=32,...]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { emitWasm } from '../codegen/wasm/emit.js';
import { GROUPS, SPREAD } from '../codegen/wasm/simd.js';
import { generatedMatrix } from '../runtime/generate.js';
import { compileSource } from '../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../runtime/tensor.js';
import { createWasmExecutor, type WasmExecutor } from '../runtime/wasm/executor.js';
import { outputDigest } from './output-digest.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const args = process.argv.slice(2);
const RUNS = Number(args.find((a) => !a.startsWith('--')) ?? 31);
const opt = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const blocksArg = opt('blocks')
  ?.split(';')
  .map((b) => b.split(',').map(Number));
const spreadArg = opt('spread')?.split(';').map(Number);
interface Variant {
  blocks: number[];
  spread: number;
}
/** Spread variants run in spread walks on every call, or with --auto where the executor's rule says (runtime/wasm/spread.ts). */
const AUTO = args.includes('--auto');
const VARIANTS: Variant[] = ((): Variant[] => {
  if (!blocksArg && !spreadArg)
    return [
      { blocks: [...GROUPS], spread: 1 },
      { blocks: [...GROUPS], spread: SPREAD },
    ];
  const n = Math.max(blocksArg?.length ?? 1, spreadArg?.length ?? 1);
  const pick = <T>(xs: T[] | undefined, q: number, dflt: T): T => (xs ? (xs.length === 1 ? xs[0]! : xs[q]!) : dflt);
  for (const xs of [blocksArg, spreadArg])
    if (xs && xs.length !== 1 && xs.length !== n) throw new Error('--blocks and --spread list as many variants');
  return Array.from({ length: n }, (_, q) => ({
    blocks: pick(blocksArg, q, [...GROUPS]),
    spread: pick(spreadArg, q, SPREAD),
  }));
})();
const DEFAULT_MATRICES = [
  'bcsstk33.mtx',
  'Groebner_id2003_aug.mtx',
  'facebook_combined.txt',
  'bayer10.mtx',
  'ca-GrQc.mtx',
  'luxembourg_osm.mtx',
];
const MATRICES = opt('matrices')?.split(',') ?? DEFAULT_MATRICES;

function matrix(name: string): CsrMatrix {
  const g = /^(random|banded)-(\d+)([kM]?)-(\d+)$/.exec(name);
  if (!g) return toCsr(loadMatrix(join(root, '..', 'shared', 'data', 'matrices', name)));
  const rows = Number(g[2]) * (g[3] === 'M' ? 1_000_000 : g[3] === 'k' ? 1000 : 1);
  return generatedMatrix(rows, Number(g[4]), g[1] === 'banded');
}

interface Case {
  name: string;
  src: string;
  square: boolean;
  dense: (A: CsrMatrix) => Record<string, [number, number]>;
}

const spmm = (t: string): string =>
  `kernel k(A: csr<${t}>[m, n], B: dense<${t}>[n, c]) -> (Y: dense<${t}>[m, c]) { Y[i, k] = A[i, j] * B[j, k]; }`;
const CASES: Case[] = [
  { name: 'spmm f32 K=32', src: spmm('f32'), square: false, dense: (A) => ({ B: [A.cols, 32] }) },
  { name: 'spmm f32 K=24', src: spmm('f32'), square: false, dense: (A) => ({ B: [A.cols, 24] }) },
  { name: 'spmm f32 K=64', src: spmm('f32'), square: false, dense: (A) => ({ B: [A.cols, 64] }) },
  { name: 'spmm f64 K=32', src: spmm('f64'), square: false, dense: (A) => ({ B: [A.cols, 32] }) },
  {
    name: 'sddmm f32 d=32',
    src: 'kernel k(A: csr<f32>[n, n], Q: dense<f32>[n, d], K: dense<f32>[n, d]) -> (S: csr<f32>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }',
    square: true,
    dense: (A) => ({ Q: [A.rows, 32], K: [A.rows, 32] }),
  },
  {
    name: 'gcn f32 32/32/8',
    src: `kernel gcn(A: csr<f32>[n, n], X: dense<f32>[n, f], W1: dense<f32>[f, h], W2: dense<f32>[h, c]) -> (Y: dense<f32>[n, c]) {
  T1[i, k] = X[i, j] * W1[j, k];
  H1[i, k] = relu(A[i, j] * T1[j, k]);
  T2[i, k] = H1[i, j] * W2[j, k];
  Y[i, k]  = A[i, j] * T2[j, k];
}`,
    square: true,
    dense: (A) => ({ X: [A.rows, 32], W1: [32, 32], W2: [32, 8] }),
  },
];

function operand(shape: [number, number], seed: number): DenseTensor {
  const n = shape[0] * shape[1];
  const data = new Float64Array(n);
  for (let q = 0; q < n; q++) data[q] = ((q * seed) % 17) / 8 - 1;
  return { format: 'dense', shape, data };
}

const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);

async function main(): Promise<void> {
  const label = (v: Variant): string => `[${v.blocks.join(',')}]${v.spread > 1 ? `/${v.spread}` : ''}`;
  const cases = opt('cases') ? CASES.filter((c) => opt('cases')!.split(',').includes(c.name)) : CASES;
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(
        ' ',
      )}; ${RUNS} interleaved calls a blocking, 1 thread; ms median (min); ratio = ${label(VARIANTS[0]!)} / variant (blocks/spread walks)`,
  );
  console.log(
    [
      'matrix'.padEnd(24),
      'kernel'.padEnd(16),
      ...VARIANTS.map((v) => label(v).padStart(18)),
      'ratios',
      'spread',
      'bits',
    ].join(' '),
  );
  const rows: Record<string, unknown>[] = [];
  const kernels = cases.map(
    (c) =>
      runPipeline(compileSource(c.src, 'bench.dy').module!, { passes: [...DEFAULT_PIPELINE, 'lower-kernels'] })
        .kernels[0]!,
  );
  const modules = await Promise.all(
    kernels.map((k) =>
      Promise.all(VARIANTS.map((v) => emitWasm(k, { simd: true, vectorBlocks: v.blocks, spreadWalks: v.spread }))),
    ),
  );
  for (const file of MATRICES) {
    const A = matrix(file);
    for (let ci = 0; ci < cases.length; ci++) {
      const c = cases[ci]!;
      if (c.square && A.rows !== A.cols) continue;
      const tensors = new Map<string, Tensor>([['A', A]]);
      let seed = 3;
      for (const [n, shape] of Object.entries(c.dense(A))) tensors.set(n, operand(shape, seed++));
      const inputs = { tensors, scalars: new Map<string, number>() };
      const exs: WasmExecutor[] = [];
      try {
        for (const m of modules[ci]!) {
          const ex = await createWasmExecutor(m.binary, m.manifest, {
            threads: 1,
            ...(AUTO ? {} : { spreadFromBytes: 0 }),
          });
          exs.push(ex);
          const t0 = performance.now();
          while (performance.now() - t0 < 200) ex.execute(inputs);
        }
        const ts = exs.map(() => [] as number[]);
        for (let r = 0; r < RUNS; r++)
          exs.forEach((ex, q) => {
            const t0 = performance.now();
            ex.execute(inputs);
            ts[q]!.push(performance.now() - t0);
          });
        const bits = exs.map(outputDigest);
        const same = bits.every((b) => b === bits[0]);
        const med = ts.map((t) => sorted(t)[t.length >> 1]!);
        const min = ts.map((t) => sorted(t)[0]!);
        const ratios = med.map((m) => med[0]! / m);
        // The ops each variant ran in spread walks (with --auto, the executor's pick for this layout).
        const spreadOps = exs.map((ex, q) =>
          modules[ci]![q]!.manifest.ops.filter((o) => ex.spreadsOp(o.op)).map((o) => o.op),
        );
        rows.push({
          matrix: file,
          nnz: A.values.length,
          kernel: c.name,
          variants: VARIANTS,
          medianMs: med,
          minMs: min,
          ratios,
          spreadOps,
          sameBits: same,
        });
        console.log(
          [
            file.padEnd(24),
            c.name.padEnd(16),
            ...med.map((m, q) => `${m.toFixed(3)} (${min[q]!.toFixed(3)})`.padStart(18)),
            ratios
              .slice(1)
              .map((r) => `${r.toFixed(2)}x`)
              .join(' '),
            spreadOps
              .slice(1)
              .map((ops) => ops.join('+') || '-')
              .join(' '),
            same ? 'same' : 'DIFFERENT',
          ].join(' '),
        );
        if (!same) process.exitCode = 1;
      } finally {
        for (const ex of exs) ex.close();
      }
    }
  }
  const out = join(root, 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, 'wasm-groups.json'),
    JSON.stringify({ runs: RUNS, load: loadavg(), node: process.version, variants: VARIANTS, rows }, null, 2),
  );
  console.log(`saved ${join('bench', 'results', 'wasm-groups.json')}`);
}

await main();
