/**
 * Planning time: the Pareto DP against exhaustive enumeration, on gcn (with
 * ca-GrQc) and on generated chains of 4..12 ops alternating SpMM and GEMM,
 * on paper-2g2f (2 GPUs, 2 FPGAs and the host CPU). Medians of 7 runs after
 * a warm-up. Exhaustive runs only where it finishes in reasonable time.
 *   npm run build && node dist/bench/plan-time.js
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { compileSource } from '../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { plannedSpec } from '../codegen/implementations.js';
import { features } from '../runtime/features/index.js';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import { bindProblem } from '../runtime/plan/bind.js';
import { planPareto } from '../runtime/plan/dp.js';
import { enumerateMappings } from '../runtime/plan/exhaustive.js';
import type { PlanProblem } from '../runtime/plan/types.js';
import { loadSystemFile } from '../runtime/system/load.js';
import { DEFAULT_ENERGY_SCOPE, DEFAULT_STREAM_LENGTH } from '../runtime/plan/figures.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const sys = loadSystemFile(join(root, 'systems', 'paper-2g2f.json'));
const A = toCsr(loadMatrix(join(root, '..', 'shared', 'data', 'matrices', 'ca-GrQc.mtx')));
const fA = features(A, 2);

function chain(ops: number): string {
  const lines: string[] = [];
  let prev = 'X';
  for (let i = 0; i < ops; i++) {
    const out = i === ops - 1 ? 'Y' : `T${i}`;
    lines.push(
      i % 2 === 0 ? `  ${out}[i, k] = relu(A[i, j] * ${prev}[j, k]);` : `  ${out}[i, k] = ${prev}[i, j] * W[j, k];`,
    );
    prev = out;
  }
  return `kernel chain(A: csr<f32>[n, n], X: dense<f32>[n, h], W: dense<f32>[h, h]) -> (Y: dense<f32>[n, h]) {\n${lines.join('\n')}\n}`;
}

const gcn = `kernel gcn(A: csr<f32>[n, n], X: dense<f32>[n, f], W1: dense<f32>[f, h], W2: dense<f32>[h, c]) -> (Y: dense<f32>[n, c]) {
  T1[i, k] = X[i, j] * W1[j, k];
  H1[i, k] = relu(A[i, j] * T1[j, k]);
  T2[i, k] = H1[i, j] * W2[j, k];
  Y[i, k]  = A[i, j] * T2[j, k];
}`;

function problem(src: string): PlanProblem {
  const m = runPipeline(compileSource(src, 'bench.dy').module!, { passes: DEFAULT_PIPELINE });
  const dims = new Map([
    ['n', A.rows],
    ['f', 512],
    ['h', 128],
    ['c', 16],
  ]);
  return bindProblem(plannedSpec(m, 'bench.dy', m.kernels[0]!.name), {
    sparse: new Map([['A', fA]]),
    dims,
    scalars: new Map(),
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

function time(f: () => unknown, runs: number): number {
  f();
  const ts: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    f();
    ts.push(performance.now() - t0);
  }
  return median(ts);
}

const cases: { name: string; src: string; exhaustive: boolean }[] = [
  { name: 'gcn (4 ops)', src: gcn, exhaustive: true },
  ...[4, 6, 8, 10, 12].map((n) => ({ name: `chain-${n}`, src: chain(n), exhaustive: n <= 8 })),
];
const results = cases.map((c) => {
  const p = problem(c.src);
  const opts = {
    objective: 'throughput' as const,
    energyScope: DEFAULT_ENERGY_SCOPE,
    streamLength: DEFAULT_STREAM_LENGTH,
  };
  const out = planPareto(sys, p, opts);
  const dpMs = time(() => planPareto(sys, p, opts), 7);
  let exMs: number | null = null;
  let mappings: number | null = null;
  if (c.exhaustive) {
    mappings = enumerateMappings(sys, p, opts).length;
    exMs = time(() => enumerateMappings(sys, p, opts), 3);
  }
  return {
    case: c.name,
    ops: p.ops.length,
    pareto: out.pareto.length,
    states: out.states,
    dp_ms: dpMs,
    exhaustive_ms: exMs,
    mappings,
  };
});
console.log('case          ops  pareto  states   dp ms   exhaustive ms  mappings');
for (const r of results)
  console.log(
    `${r.case.padEnd(13)} ${String(r.ops).padStart(3)}  ${String(r.pareto).padStart(6)}  ${String(r.states).padStart(6)}  ${r.dp_ms.toFixed(2).padStart(6)}  ${r.exhaustive_ms === null ? '      (skipped)' : r.exhaustive_ms.toFixed(1).padStart(14)}  ${r.mappings ?? '-'}`,
  );
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'plan-time.json'),
  JSON.stringify({ system: sys.name, matrix: 'ca-GrQc', results }, null, 2),
);
