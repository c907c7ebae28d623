/**
 * The workloads of the suite: the example programs (GCN, attention,
 * PageRank, SSSP, SpMV, SpMM) and the chain programs under eval/programs,
 * compiled once to the planner's PlanSpec, with the dims and scalars each
 * needs besides its sparse input.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileSource } from '../frontend/compile.js';
import { formatDiagnostics } from '../ir/diagnostics.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { plannedSpec } from '../codegen/implementations.js';
import type { PlanSpec } from '../runtime/plan/types.js';
import { repoRoot } from './paths.js';

export interface Workload {
  name: string;
  /** Source file relative to the repository root. */
  file: string;
  spec: PlanSpec;
  /** The sparse parameter the input matrix binds. */
  matrix: string;
  /** Square matrices only (the kernel's matrix is [n, n]). */
  square: boolean;
  /** Dims no matrix binds (feature widths), and scalar parameters. */
  dims: Record<string, number>;
  scalars: Record<string, number>;
  /** Trips each convergence loop (by repeat id) is costed at: the experiment fixes them. */
  trips: Record<string, number>;
}

interface WorkloadDef {
  name: string;
  file: string;
  square: boolean;
  dims: Record<string, number>;
  scalars?: Record<string, number>;
  trips?: Record<string, number>;
}

/** Widths in the range of the paper's GNN and attention workloads. */
const DEFS: readonly WorkloadDef[] = [
  { name: 'gcn', file: 'examples/gcn.dy', square: true, dims: { f: 256, h: 128, c: 16 } },
  { name: 'attention', file: 'examples/attention.dy', square: true, dims: { d: 64 } },
  // The examples loop until converged; the experiment runs them a fixed 20 and 16 trips, as it always has.
  {
    name: 'pagerank',
    file: 'examples/pagerank.dy',
    square: true,
    dims: {},
    scalars: { d: 0.85 },
    trips: { op1: 20 },
  },
  { name: 'sssp', file: 'examples/sssp.dy', square: true, dims: {}, trips: { op1: 16 } },
  { name: 'spmv-chain', file: 'eval/programs/spmv-chain.dy', square: true, dims: {} },
  { name: 'spmm-chain', file: 'eval/programs/spmm-chain.dy', square: true, dims: { f: 64 } },
];

export const WORKLOAD_NAMES: readonly string[] = DEFS.map((d) => d.name);

export function compileSpec(path: string): PlanSpec {
  const src = readFileSync(path, 'utf8');
  const r = compileSource(src, path);
  if (!r.module) throw new Error(formatDiagnostics(r.diagnostics, src));
  const m = runPipeline(r.module, { passes: DEFAULT_PIPELINE });
  const k = m.kernels[0];
  if (!k) throw new Error(`${path}: no kernel`);
  return plannedSpec(m, path, k.name);
}

let cache: Workload[] | undefined;

export function workloads(): Workload[] {
  if (cache) return cache;
  const root = repoRoot();
  cache = DEFS.map((d) => {
    const spec = compileSpec(join(root, d.file));
    const sparse = spec.params.filter((p) => p.sparse);
    if (sparse.length !== 1)
      throw new Error(`${d.file}: the suite expects one sparse parameter, found ${sparse.length}`);
    for (const id of Object.keys(d.trips ?? {}))
      if (!spec.ops.some((o) => o.group?.id === id && o.group.until))
        throw new Error(`${d.file}: the suite fixes the trips of ${id}, which is no convergence loop`);
    return {
      name: d.name,
      file: d.file,
      spec,
      matrix: sparse[0]!.name,
      square: d.square,
      dims: d.dims,
      scalars: d.scalars ?? {},
      trips: d.trips ?? {},
    };
  });
  return cache;
}
