/**
 * Binds a PlanSpec's symbolic work to one input: feature symbols (nnz(A),
 * rows(A), cols(A)) from the sparse inputs' features, dims from the bound
 * shapes, repeat trip counts from literals or scalar parameters (for a
 * convergence loop, the trips observed on this input or a prior).
 */
import { compilePoly } from './sym.js';
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

/**
 * A factor of a cost expression resolved once: a dim (`dim`), or a feature of a sparse input (`sparse`, `field`),
 * with its exponent and its text for the error. One shape for every factor, read by name: a runtime binds the same
 * few expressions for every new pattern, and looking each factor's text up in a map and reading the feature by a
 * computed key took about 7 us of a gcn problem's binding (docs/PERFORMANCE.md).
 */
interface Factor {
  name: string;
  e: number;
  dim: string | undefined;
  sparse: string;
  field: 'nnz' | 'rows' | 'cols';
}
type Resolved = readonly { coef: number; factors: readonly Factor[] }[];
const resolved = new Map<string, Resolved>();

function resolve(text: string): Resolved {
  let r = resolved.get(text);
  if (!r) {
    r = compilePoly(text).map((t) => ({
      coef: t.coef,
      factors: t.factors.map(([name, e]): Factor => {
        const m = /^(nnz|rows|cols)\(([A-Za-z_][A-Za-z0-9_]*)\)$/.exec(name);
        return m
          ? { name, e, dim: undefined, sparse: m[2]!, field: m[1] as Factor['field'] }
          : { name, e, dim: name, sparse: '', field: 'nnz' };
      }),
    }));
    resolved.set(text, r);
  }
  return r;
}

/** evaluateCompiled (./sym.ts) over resolved factors: the same products and sums in the same order. */
function evaluate(c: Resolved, dims: Binding['dims'], sparse: Binding['sparse']): number {
  let total = 0;
  for (let i = 0; i < c.length; i++) {
    const t = c[i]!;
    let v = t.coef;
    for (let j = 0; j < t.factors.length; j++) {
      const f = t.factors[j]!;
      let x: number | undefined;
      if (f.dim !== undefined) x = dims.get(f.dim);
      else {
        const s = sparse.get(f.sparse);
        x = s === undefined ? undefined : f.field === 'nnz' ? s.nnz : f.field === 'rows' ? s.rows : s.cols;
      }
      if (x === undefined) throw new Error(`cost expression needs '${f.name}', which is not bound`);
      v *= f.e === 1 ? x : Math.pow(x, f.e);
    }
    total += v;
  }
  return total;
}

/** An expression's value on a binding; the message's subject is put together only on an error (a runtime binds every new pattern). */
function ev(text: string, dims: Binding['dims'], sparse: Binding['sparse'], of: string, what: string): number {
  try {
    return evaluate(resolve(text), dims, sparse);
  } catch (e) {
    throw new Error(`${of}${what}: ${(e as Error).message}`);
  }
}

function bindOp(o: PlanSpec['ops'][number], b: Binding): PlanOp {
  // The binding's maps read once per op, not per factor: bindings come from several places (a runtime's inputs,
  // the guards' samples), and a read of the binding's fields per factor met all their shapes.
  const { dims, sparse } = b;
  let trips = 1;
  const regionTrips = (g: NonNullable<typeof o.group>): number => {
    const t = g.trips;
    let n = typeof t === 'number' ? t : (b.scalars.get(t) ?? NaN);
    if (!Number.isFinite(n)) throw new Error(`repeat count '${String(t)}' of ${o.id} is not given`);
    if (g.until) n = Math.min(n, b.trips?.get(g.id) ?? expectedTrips(n, b.sparse));
    return n;
  };
  if (o.group) trips = regionTrips(o.group);
  if (o.enclosing) for (const g of o.enclosing) trips *= regionTrips(g);
  // Built field by field: V8 spreads such records an order of magnitude slower, and a runtime binds every new pattern.
  const op: PlanOp = {
    id: o.id,
    kind: o.kind,
    result: o.result,
    dtype: o.dtype,
    reads: o.reads,
    items: ev(o.items, dims, sparse, o.id, ' items'),
    flops: ev(o.flops, dims, sparse, o.id, ' flops'),
    bytes: ev(o.bytes, dims, sparse, o.id, ' bytes'),
    gathers: ev(o.gathers, dims, sparse, o.id, ' gathers'),
    loops: ev(o.loops, dims, sparse, o.id, ' loops'),
    columns: ev(o.columns, dims, sparse, o.id, ' columns'),
    resultBytes: ev(o.resultBytes, dims, sparse, o.id, ' result size'),
    trips,
    impls: o.impls,
  };
  const feat = o.sparse === undefined ? undefined : sparse.get(o.sparse);
  if (feat) op.sparse = feat;
  if (o.group) op.group = o.enclosing?.[0]?.id ?? o.group.id;
  return op;
}

export function bindProblem(spec: PlanSpec, b: Binding): PlanProblem {
  const ops: PlanOp[] = [];
  for (const o of spec.ops) ops.push(bindOp(o, b));
  const paramBytes = new Map<string, number>();
  for (const p of spec.params) paramBytes.set(p.name, ev(p.bytes, b.dims, b.sparse, 'size of ', p.name));
  const sparseParams = new Set<string>();
  for (const p of spec.params) if (p.sparse) sparseParams.add(p.name);
  return { kernel: spec.kernel, paramBytes, sparseParams, results: spec.results, ops };
}
