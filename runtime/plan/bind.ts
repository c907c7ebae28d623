/**
 * Binds a PlanSpec's symbolic work to one input: feature symbols (nnz(A),
 * rows(A), cols(A)) from the sparse inputs' features, dims from the bound
 * shapes, repeat trip counts from literals or scalar parameters (for a
 * convergence loop, the trips observed on this input or a prior).
 */
import { compilePoly, evaluateCompiled } from './sym.js';
import type { PlanOp, PlanProblem, PlanSpec, SparseFeatures } from './types.js';

export interface Binding {
  /** Features of each sparse parameter. */
  sparse: ReadonlyMap<string, SparseFeatures>;
  dims: ReadonlyMap<string, number>;
  scalars: ReadonlyMap<string, number>;
  /** Trips a convergence loop (by repeat id) was observed to run on this input; absent: the prior. */
  trips?: ReadonlyMap<string, number>;
}

/**
 * The trips a convergence loop is costed at before any run is observed: the
 * square root of the largest row count among the sparse inputs (the hop
 * diameter of a mesh-like graph grows about so; a power iteration needs tens
 * of trips), at least 1 and at most the loop's maximum. A prior, not a
 * measurement: `dype run` re-plans with the trips it observed.
 */
export function expectedTrips(max: number, sparse: ReadonlyMap<string, SparseFeatures>): number {
  let rows = 0;
  for (const f of sparse.values()) rows = Math.max(rows, f.rows);
  return Math.min(max, Math.max(1, Math.ceil(Math.sqrt(rows))));
}

/** A factor of a cost expression: a feature of a sparse input, or a dim. */
type Factor = { sparse: string; field: 'nnz' | 'rows' | 'cols' } | { dim: string };
const factors = new Map<string, Factor>();
const factorOf = (f: string): Factor => {
  let x = factors.get(f);
  if (!x) {
    const m = /^(nnz|rows|cols)\(([A-Za-z_][A-Za-z0-9_]*)\)$/.exec(f);
    factors.set(f, (x = m ? { sparse: m[2]!, field: m[1] as 'nnz' | 'rows' | 'cols' } : { dim: f }));
  }
  return x;
};

export function bindProblem(spec: PlanSpec, b: Binding): PlanProblem {
  const lookup = (f: string): number | undefined => {
    const x = factorOf(f);
    if ('dim' in x) return b.dims.get(x.dim);
    return b.sparse.get(x.sparse)?.[x.field];
  };
  // The message's subject is put together only on an error: a runtime binds every new pattern.
  const ev = (text: string, of: string, what: string): number => {
    try {
      return evaluateCompiled(compilePoly(text), lookup);
    } catch (e) {
      throw new Error(`${of}${what}: ${(e as Error).message}`);
    }
  };
  const ops = spec.ops.map((o) => {
    let trips = 1;
    if (o.group) {
      const t = o.group.trips;
      trips = typeof t === 'number' ? t : (b.scalars.get(t) ?? NaN);
      if (!Number.isFinite(trips)) throw new Error(`repeat count '${String(t)}' of ${o.id} is not given`);
      if (o.group.until) trips = Math.min(trips, b.trips?.get(o.group.id) ?? expectedTrips(trips, b.sparse));
    }
    // Built field by field: V8 spreads such records an order of magnitude slower, and a runtime binds every new pattern.
    const op: PlanOp = {
      id: o.id,
      kind: o.kind,
      result: o.result,
      dtype: o.dtype,
      reads: o.reads,
      items: ev(o.items, o.id, ' items'),
      flops: ev(o.flops, o.id, ' flops'),
      bytes: ev(o.bytes, o.id, ' bytes'),
      gathers: ev(o.gathers, o.id, ' gathers'),
      resultBytes: ev(o.resultBytes, o.id, ' result size'),
      trips,
      impls: o.impls,
    };
    const feat = o.sparse === undefined ? undefined : b.sparse.get(o.sparse);
    if (feat) op.sparse = feat;
    if (o.group) op.group = o.group.id;
    return op;
  });
  return {
    kernel: spec.kernel,
    paramBytes: new Map(spec.params.map((p) => [p.name, ev(p.bytes, 'size of ', p.name)])),
    sparseParams: new Set(spec.params.filter((p) => p.sparse).map((p) => p.name)),
    results: spec.results,
    ops,
  };
}
