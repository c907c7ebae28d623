/**
 * The runtime's model memo (runtime/engine/memo.ts) keeps a pattern's bound problem from its first input and the
 * partitions' mappings on it from its second: in a stream of new patterns, figures kept per pattern only fed V8's
 * collections (docs/PERFORMANCE.md). A pattern seen once keeps its mappings for its own input (the last problem).
 * Another features record with the same values finds the problem by value (runtime/engine/problem-key.ts): every
 * feature, dim, scalar and trip count, and their names, tell problems apart.
 */
import { describe, expect, it } from 'vitest';
import { MEMO_PROBLEMS, ModelMemo } from '../../runtime/engine/memo.js';
import { eagerSignature, FEATURE_FIELDS, sameKey, valueKey } from '../../runtime/engine/problem-key.js';
import { SampledFeatures } from '../../runtime/features/quick.js';
import { copyFeatures, sparseFeaturesOf } from '../../runtime/guards/features.js';
import { planOptions } from '../../runtime/guards/build.js';
import { planPareto, choicesOf } from '../../runtime/plan/dp.js';
import type { Binding } from '../../runtime/plan/bind.js';
import type { PlanProblem, PlanSpec, SparseFeatures } from '../../runtime/plan/types.js';
import { STEADY } from '../helpers/goal.js';
import { gcnSpec, graph, system } from './fixtures.js';

const sys = system('paper-1g1f');
const spec = gcnSpec();
const popts = planOptions(sys, { objective: 'throughput', ...STEADY });
const bindingOf = (file: string): Binding => {
  const g = graph(file);
  const f = sparseFeaturesOf(g, 2);
  return {
    sparse: new Map([['A', f]]),
    dims: new Map([
      ['n', g.rows],
      ['f', 64],
      ['h', 64],
      ['c', 16],
    ]),
    scalars: new Map(),
  };
};

describe('the model memo', () => {
  it('keeps a pattern’s mappings from its second input on, and the last problem’s for its own input', () => {
    const memo = new ModelMemo(sys, spec, popts);
    const a = bindingOf('ca-GrQc.mtx');
    const b = bindingOf('jazz.mtx');
    const p = memo.problem(a);
    const best = planPareto(sys, p, popts).pareto[0]!;
    const part = { key: 'best', choices: choicesOf(p, best) };
    const m1 = memo.mapping(p, part)!;
    expect(m1.periodMs).toBeCloseTo(best.periodMs, 9);
    // The same input asks again: the last problem's mapping.
    expect(memo.mapping(p, part)).toBe(m1);
    // Another pattern priced in between: the first one's mapping is priced again, to the same figures.
    const q = memo.problem(b);
    memo.mapping(q, { key: 'best', choices: choicesOf(q, planPareto(sys, q, popts).pareto[0]!) });
    const m2 = memo.mapping(p, part)!;
    expect(m2).not.toBe(m1);
    expect(m2).toEqual(m1);
    // The first pattern's second input: the same problem, and its mappings kept from now on.
    expect(memo.problem(a)).toBe(p);
    const m3 = memo.mapping(p, part)!;
    memo.mapping(q, { key: 'best', choices: choicesOf(q, planPareto(sys, q, popts).pareto[0]!) });
    expect(memo.mapping(p, part)).toBe(m3);
  });
});

/** gcn's binding of graph `file` with its features as the runtime takes them (sampled, read lazily), a new record each call. */
const sampledBinding = (file: string, sparse?: (f: SparseFeatures) => SparseFeatures): Binding => {
  const g = graph(file);
  const f = new SampledFeatures({ ...g, rowPtr: g.rowPtr.subarray(0) });
  return { ...bindingOf(file), sparse: new Map([['A', sparse ? sparse(f) : f]]) };
};

/** A plain record of every field of f, with `field` set to `to` (undefined: left out). */
const withField = (f: SparseFeatures, field: keyof SparseFeatures, to: number | undefined): SparseFeatures => {
  const c: Record<string, number> = {};
  for (const k of FEATURE_FIELDS) {
    const v = k === field ? to : f[k];
    if (v !== undefined) c[k] = v;
  }
  return c as unknown as SparseFeatures;
};

describe('the model memo by value', () => {
  it('finds a problem from another record of the same features: bound from plain copies from the second record on', () => {
    const memo = new ModelMemo(sys, spec, popts);
    const first = memo.problem(sampledBinding('bcsstk13.mtx'));
    // The second record: its signature was met, no problem holds its values yet, so one is bound from copies.
    const second = memo.problem(sampledBinding('bcsstk13.mtx'));
    expect(second).not.toBe(first);
    // The same figures: the first's features read field by field (a sampled record's are getters).
    const plainOps = (q: typeof first) => q.ops.map((o) => ({ ...o, sparse: o.sparse && copyFeatures(o.sparse) }));
    expect(plainOps(second)).toEqual(plainOps(first));
    expect({ ...second, ops: [] }).toEqual({ ...first, ops: [] });
    for (const op of second.ops)
      if (op.sparse) {
        // A plain record: it holds no matrix, so the problem kept by value keeps none alive.
        expect(op.sparse).not.toBeInstanceOf(SampledFeatures);
        expect(Object.getPrototypeOf(op.sparse)).toBe(Object.prototype);
      }
    const third = memo.problem(sampledBinding('bcsstk13.mtx'));
    expect(third).toBe(second);
    // Other patterns between, fewer than the memo keeps: still found.
    for (const g of ['jazz.mtx', 'olm1000.mtx', 'west0479.mtx']) memo.problem(sampledBinding(g));
    expect(memo.problem(sampledBinding('bcsstk13.mtx'))).toBe(second);
    // Found by value, its mappings are kept when another pattern is priced between.
    const part = { key: 'best', choices: choicesOf(second, planPareto(sys, second, popts).pareto[0]!) };
    const m = memo.mapping(second, part);
    const q = memo.problem(sampledBinding('jazz.mtx'));
    memo.mapping(q, { key: 'best', choices: choicesOf(q, planPareto(sys, q, popts).pareto[0]!) });
    expect(memo.mapping(second, part)).toBe(m);
  });

  it('keeps at most MEMO_PROBLEMS problems by value', () => {
    const memo = new ModelMemo(sys, spec, popts);
    const n = (k: number): Binding => ({
      ...bindingOf('jazz.mtx'),
      dims: new Map([...bindingOf('jazz.mtx').dims, ['f', k]]),
    });
    // Each dims twice: the second time bound from copies and kept by value.
    const kept: PlanProblem[] = [];
    for (let k = 1; k <= MEMO_PROBLEMS + 1; k++) {
      memo.problem(n(k));
      kept.push(memo.problem(n(k)));
    }
    // The last ones are found by value; the first was dropped: met again, it is bound afresh.
    expect(memo.problem(n(MEMO_PROBLEMS + 1))).toBe(kept[MEMO_PROBLEMS]);
    expect(memo.problem(n(2))).toBe(kept[1]);
    memo.problem(n(1));
    const again = memo.problem(n(1));
    expect(again).not.toBe(kept[0]);
    expect(memo.problem(n(1))).toBe(again);
  });

  it('tells apart bindings that differ in any one feature, dim, scalar, trip count or name', () => {
    const base = sampledBinding('bcsstk13.mtx');
    const f = base.sparse.get('A')!;
    const key = valueKey(base);
    const changed: [string, Binding][] = [];
    for (const k of FEATURE_FIELDS) {
      const v = f[k]!;
      changed.push([`${k} changed`, { ...base, sparse: new Map([['A', withField(f, k, v === 0 ? 1 : v * 1.5)]]) }]);
      if (k === 'localityScore' || k === 'rowLenChangeFraction' || k === 'bandwidthEstimateNorm')
        changed.push([`${k} absent`, { ...base, sparse: new Map([['A', withField(f, k, undefined)]]) }]);
    }
    changed.push(['a dim changed', { ...base, dims: new Map([...base.dims, ['h', 65]]) }]);
    changed.push([
      'a dim renamed',
      { ...base, dims: new Map([...base.dims].map(([d, v]) => [d === 'h' ? 'h2' : d, v] as const)) },
    ]);
    changed.push(['a scalar', { ...base, scalars: new Map([['alpha', 0.5]]) }]);
    changed.push(['trips', { ...base, trips: new Map([['r0', 3]]) }]);
    changed.push(['the sparse input renamed', { ...base, sparse: new Map([['B', f]]) }]);
    for (const [what, b] of changed) expect([what, sameKey(key, valueKey(b))]).toEqual([what, false]);
    // The same values in another record, plain or sampled, are the same key and the same signature.
    const plain = { ...base, sparse: new Map([['A', withField(f, 'rows', f.rows)]]) };
    expect(sameKey(key, valueKey(plain))).toBe(true);
    expect(sameKey(key, valueKey(sampledBinding('bcsstk13.mtx')))).toBe(true);
    expect(eagerSignature(plain)).toBe(eagerSignature(base));
    // The memo too: a changed locality (outside the signature) is another problem.
    const memo = new ModelMemo(sys, spec, popts);
    memo.problem(base);
    const p = memo.problem(plain);
    expect(memo.problem({ ...plain })).toBe(p);
    const other = { ...base, sparse: new Map([['A', withField(f, 'localityScore', f.localityScore! / 2)]]) };
    expect(memo.problem(other)).not.toBe(p);
    // The same record with observed trips is another problem, by its record or without a sparse input.
    expect(memo.problem({ ...base, trips: new Map([['r0', 3]]) })).not.toBe(memo.problem(base));
    // A kernel without a sparse input (its ops' work in dims only) is keyed by its dims, scalars and trips.
    const denseSpec: PlanSpec = {
      ...spec,
      params: [{ name: 'X', sparse: false, bytes: '4*n' }],
      ops: [{ ...spec.ops[0]!, items: 'n', flops: '2*n', bytes: '8*n', gathers: '0', resultBytes: '4*n' }],
    };
    const denseMemo = new ModelMemo(sys, denseSpec, popts);
    const dense: Binding = { sparse: new Map(), dims: base.dims, scalars: base.scalars };
    expect(denseMemo.problem({ ...dense })).toBe(denseMemo.problem(dense));
    expect(denseMemo.problem({ ...dense, trips: new Map([['r0', 3]]) })).not.toBe(denseMemo.problem(dense));
  });
});
