/**
 * Binds a PlanSpec's symbolic work to one input: feature symbols (nnz(A),
 * rows(A), cols(A)) from the sparse inputs' features, dims from the bound
 * shapes, repeat trip counts from literals or scalar parameters.
 */
import { parsePoly } from './sym.js';
import type { PlanProblem, PlanSpec, SparseFeatures } from './types.js';

export interface Binding {
  /** Features of each sparse parameter. */
  sparse: ReadonlyMap<string, SparseFeatures>;
  dims: ReadonlyMap<string, number>;
  scalars: ReadonlyMap<string, number>;
}

export function bindProblem(spec: PlanSpec, b: Binding): PlanProblem {
  const lookup = (f: string): number | undefined => {
    const m = /^(nnz|rows|cols)\(([A-Za-z_][A-Za-z0-9_]*)\)$/.exec(f);
    if (m) {
      const feat = b.sparse.get(m[2]!);
      return feat === undefined ? undefined : m[1] === 'nnz' ? feat.nnz : m[1] === 'rows' ? feat.rows : feat.cols;
    }
    return b.dims.get(f);
  };
  const ev = (text: string, what: string): number => {
    try {
      return parsePoly(text).evaluate(lookup);
    } catch (e) {
      throw new Error(`${what}: ${(e as Error).message}`);
    }
  };
  const ops = spec.ops.map((o) => {
    let trips = 1;
    if (o.group) {
      const t = o.group.trips;
      trips = typeof t === 'number' ? t : b.scalars.get(t) ?? NaN;
      if (!Number.isFinite(trips)) throw new Error(`repeat count '${String(t)}' of ${o.id} is not given`);
    }
    const base = {
      id: o.id,
      kind: o.kind,
      result: o.result,
      dtype: o.dtype,
      reads: o.reads,
      items: ev(o.items, `${o.id} items`),
      flops: ev(o.flops, `${o.id} flops`),
      bytes: ev(o.bytes, `${o.id} bytes`),
      gathers: ev(o.gathers, `${o.id} gathers`),
      resultBytes: ev(o.resultBytes, `${o.id} result size`),
      trips,
      impls: o.impls,
    };
    const feat = o.sparse === undefined ? undefined : b.sparse.get(o.sparse);
    return { ...base, ...(feat ? { sparse: feat } : {}), ...(o.group ? { group: o.group.id } : {}) };
  });
  return {
    kernel: spec.kernel,
    paramBytes: new Map(spec.params.map((p) => [p.name, ev(p.bytes, `size of ${p.name}`)])),
    sparseParams: new Set(spec.params.filter((p) => p.sparse).map((p) => p.name)),
    results: spec.results,
    ops,
  };
}
