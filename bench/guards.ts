/**
 * Cost of the runtime's per-input decision. (1) The generated gcn guards
 * alone (straight-line code from codegen/runtime, guards built from four
 * real graphs on paper-1g1f) over the feature records of the real matrices:
 * median ns per call over batches. (2) Tier 0+1 features plus the guards as
 * a share of one SpMV (wasm backend, 1 thread, f32) on every real matrix
 * with >= 10k stored entries; tier 2 (sampled) and the planner binding the
 * runtime also computes are shown beside it.
 *   npm run build && node dist/bench/guards.js
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { emitRuntimeTs } from '../codegen/runtime/emit-ts.js';
import { emitWasm, wasmManifest } from '../codegen/wasm/emit.js';
import { programHash } from '../codegen/native/hash.js';
import { compileSource } from '../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { plannedSpec } from '../codegen/implementations.js';
import { features } from '../runtime/features/index.js';
import { buildGuards, featureRecord, outOfRange, sampleBindings, sparseFeaturesOf } from '../runtime/guards/index.js';
import { toCsr } from '../runtime/io/convert.js';
import { isEdgeListPath, loadMatrix } from '../runtime/io/load.js';
import type { Binding } from '../runtime/plan/bind.js';
import { loadSystemFile } from '../runtime/system/load.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../runtime/tensor.js';
import { createWasmExecutor } from '../runtime/wasm/executor.js';
import { DEFAULT_ENERGY_SCOPE, DEFAULT_STREAM_LENGTH } from '../runtime/plan/figures.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = join(root, '..', 'shared', 'data', 'matrices');
const compileModule = (file: string) => runPipeline(compileSource(readFileSync(join(root, 'examples', file), 'utf8'), file).module!, { passes: [...DEFAULT_PIPELINE, 'lower-kernels'] });
const compile = (file: string) => compileModule(file).kernels[0]!;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const files = readdirSync(dir).filter((f) => f.endsWith('.mtx') || isEdgeListPath(f)).sort();
const mats = new Map<string, CsrMatrix>();
for (const f of files) mats.set(f, toCsr(loadMatrix(join(dir, f))));

// The generated guards of gcn, as the runtime target writes them.
const gcn = compile('gcn.dy');
const spec = plannedSpec(compileModule('gcn.dy'), 'gcn.dy', gcn.name);
const bind = (m: CsrMatrix): Binding => ({ sparse: new Map([['A', sparseFeaturesOf(m, 2)]]), dims: new Map([['n', m.rows], ['f', 64], ['h', 64], ['c', 16]]), scalars: new Map() });
const profiles = ['cora.cites', 'ca-GrQc.mtx', 'facebook_combined.txt', 'jazz.mtx'].map((f) => bind(mats.get(f)!));
const plan = buildGuards(spec, loadSystemFile(join(root, 'systems', 'paper-1g1f.json')), sampleBindings(profiles, { perProfile: 24, shapeDims: { A: ['n', 'n'] } }), { objective: 'throughput', energyScope: DEFAULT_ENERGY_SCOPE, streamLength: DEFAULT_STREAM_LENGTH });
const ts = emitRuntimeTs('gcn', 'examples/gcn.dy', programHash(compileModule('gcn.dy')), [{ kernel: gcn, spec, plan, manifest: wasmManifest(gcn, [], true) }], 'dype/runtime');
const body = /export function gcnGuard\(f: GuardFeatures\): number \{\n([\s\S]*?)\n\}\n/.exec(ts)![1]!;
const guard = new Function('f', body) as (f: Record<string, number>) => number;
const square = [...mats].filter(([, m]) => m.rows === m.cols);
const records = square.map(([, m]) => featureRecord(bind(m)));

// (1) guards alone: batches of calls cycling over the records.
const BATCH = 200_000;
let sink = 0;
const batches: number[] = [];
for (let b = 0; b < 21; b++) {
  const t0 = performance.now();
  for (let i = 0; i < BATCH; i++) sink += guard(records[i % records.length]!);
  batches.push(((performance.now() - t0) * 1e6) / BATCH);
}
const guardNs = median(batches.slice(1));
const depth = (body.match(/if \(/g) ?? []).length;

// (2) per matrix with >= 10k nnz: features + guards against one SpMV.
const spmv = compile('spmv.dy');
const { binary, manifest } = await emitWasm(spmv);
const exec = await createWasmExecutor(binary, manifest, { threads: 1 });
const timeIt = (f: () => unknown, reps: number): number => {
  f();
  const xs: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    f();
    xs.push(performance.now() - t0);
  }
  return median(xs);
};
const timePair = (a: () => unknown, b: () => unknown, reps: number): [number, number] => {
  a();
  b();
  const xa: number[] = [];
  const xb: number[] = [];
  for (let r = 0; r < reps; r++) {
    let t0 = performance.now();
    a();
    xa.push(performance.now() - t0);
    t0 = performance.now();
    b();
    xb.push(performance.now() - t0);
  }
  return [median(xa), median(xb)];
};
const rows: { matrix: string; rows: number; nnz: number; spmvUs: number; t01GuardUs: number; sharePct: number; tier2Us: number; fullDecisionUs: number }[] = [];
for (const [name, m] of mats) {
  if (m.values.length < 10_000) continue;
  const x: DenseTensor = { format: 'dense', shape: [m.cols], data: new Float64Array(m.cols).fill(1) };
  const inputs = { tensors: new Map<string, Tensor>([['A', m], ['x', x]]), scalars: new Map<string, number>() };
  const dims = new Map([['n', m.rows], ['f', 64], ['h', 64], ['c', 16]]);
  const t01f = (): void => {
    const f = features(m, 1);
    const rec: Record<string, number> = { 'A.rows': f.rows, 'A.cols': f.cols, 'A.nnz': f.nnz, 'A.density': f.density, 'A.rowLenMean': f.rowLenMean, 'A.rowLenMax': f.rowLenMax, 'A.rowLenCv': f.rowLenCv, 'A.emptyRowFraction': f.emptyRowFraction, 'A.top1PctNnzShare': f.top1PctNnzShare, 'dim.n': dims.get('n')!, 'dim.f': 64, 'dim.h': 64, 'dim.c': 16 };
    sink += guard(rec);
  };
  // SpMV and the features are timed alternately, so that load from other processes hits both alike.
  const [spmvMs, t01] = timePair(() => exec.execute(inputs), t01f, 41);
  const t2 = timeIt(() => features(m, 2), 21);
  // What the runtime does per new input: planner features (tiers 0-2), record, guards, range check.
  const full = timeIt(() => {
    const b: Binding = { sparse: new Map([['A', sparseFeaturesOf(m, 2)]]), dims, scalars: new Map() };
    const rec = featureRecord(b);
    sink += guard(rec) + outOfRange(plan.ranges, (k) => rec[k]).length;
  }, 21);
  rows.push({ matrix: name, rows: m.rows, nnz: m.values.length, spmvUs: spmvMs * 1e3, t01GuardUs: t01 * 1e3, sharePct: (t01 / spmvMs) * 100, tier2Us: t2 * 1e3, fullDecisionUs: full * 1e3 });
}
exec.close();

console.log(`guards alone (gcn, ${plan.partitions.length} partitions, ${depth} tests in the code): median ${guardNs.toFixed(1)} ns per call over ${records.length} feature records (sink ${sink % 7})`);
console.log('');
console.log('matrix                       rows      nnz   SpMV us  t0+1+guard us  share %  tier0-2 us  runtime decision us');
for (const r of rows)
  console.log(`${r.matrix.padEnd(24)} ${String(r.rows).padStart(8)} ${String(r.nnz).padStart(9)} ${r.spmvUs.toFixed(1).padStart(9)} ${r.t01GuardUs.toFixed(1).padStart(14)} ${r.sharePct.toFixed(2).padStart(8)} ${r.tier2Us.toFixed(1).padStart(11)} ${r.fullDecisionUs.toFixed(1).padStart(20)}`);
const shares = rows.map((r) => r.sharePct);
console.log(`\nshare of one SpMV: median ${median(shares).toFixed(2)}%, max ${Math.max(...shares).toFixed(2)}% over ${rows.length} matrices`);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'guards.json'), JSON.stringify({ guardNsMedian: guardNs, guardTests: depth, partitions: plan.partitions.length, records: records.length, matrices: rows }, null, 2));
