/**
 * Per-leaf range checks (runtime/guards/checks.ts, select.ts): the row
 * layouts the skew test tries are the evenest and most skewed the shape
 * allows; a leaf's checks are what its pick needs (a listed key is one
 * whose extremes move the pick out of the tolerance, an unlisted one is
 * not, checked here against the planner on real graphs); a leaf that
 * leaves partitions open checks every key; the runtime's range check
 * takes tier 0 always and tier 1 only where the leaf lists it, and a
 * sampled input reaching a tier-0-only leaf reads no row.
 */
import { describe, expect, it } from 'vitest';
import { SampledFeatures } from '../../runtime/features/quick.js';
import { skewExtremes, withChecks } from '../../runtime/guards/checks.js';
import { planOptions, scoreChoices } from '../../runtime/guards/build.js';
import { selectPartition, inRanges, inRangesOf } from '../../runtime/guards/select.js';
import { leafAt } from '../../runtime/guards/tree.js';
import { featureView } from '../../runtime/guards/view.js';
import type { GuardNode, GuardPlan } from '../../runtime/guards/types.js';
import { bindProblem, type Binding } from '../../runtime/plan/bind.js';
import { choicesOf, objectiveValue, planPareto } from '../../runtime/plan/dp.js';
import type { SparseFeatures } from '../../runtime/plan/types.js';
import { goal } from '../helpers/goal.js';
import { gcnBinding, gcnSpec, graph, system } from './fixtures.js';

const KEYS = ['A.rowLenCv', 'A.rowLenMax'];

describe('skew extremes', () => {
  it('are the evenest and the most skewed layouts of 120 entries in 100 x 50', () => {
    const f: SparseFeatures = {
      rows: 100,
      cols: 50,
      nnz: 120,
      rowLenMean: 1.2,
      rowLenMax: 7,
      rowLenCv: 1,
      emptyRowFraction: 0.3,
      top1PctNnzShare: 0.05,
    };
    const [even, skewed] = skewExtremes(f);
    expect(even).toMatchObject({ rowLenMax: 2, rowLenCv: 0, emptyRowFraction: 0, top1PctNnzShare: 0.01 });
    // Two full rows of 50 and one of 20: mean 1.2, mean square 54.
    expect(skewed.rowLenMax).toBe(50);
    expect(skewed.emptyRowFraction).toBeCloseTo(0.97, 12);
    expect(skewed.rowLenCv).toBeCloseTo(Math.sqrt(54 - 1.44) / 1.2, 12);
    expect(skewed.top1PctNnzShare).toBeCloseTo(50 / 120, 12);
    expect(skewed).toMatchObject({ rows: 100, cols: 50, nnz: 120, rowLenMean: 1.2 });
  });

  it('of an empty shape are zeros, never NaN', () => {
    const z = {
      rows: 0,
      cols: 0,
      nnz: 0,
      rowLenMean: 0,
      rowLenMax: 0,
      rowLenCv: 0,
      emptyRowFraction: 0,
      top1PctNnzShare: 0,
    };
    for (const g of skewExtremes(z)) for (const v of Object.values(g)) expect(Number.isFinite(v)).toBe(true);
  });
});

describe('a leaf checks what its pick needs', () => {
  const sys = system('paper-1g1f');
  const spec = gcnSpec();
  const popts = planOptions(sys, goal('throughput'));
  const score = (b: Binding, c: Parameters<typeof scoreChoices>[2]): { v: number; opt: number } => {
    const p = bindProblem(spec, b);
    return {
      v: scoreChoices(sys, p, c, popts),
      opt: objectiveValue(planPareto(sys, p, popts).pareto[0]!, 'throughput'),
    };
  };

  it.each(['cora.cites', 'ca-GrQc.mtx', 'bcsstk13.mtx', 'luxembourg_osm.mtx'])(
    '%s: listed keys move the pick, unlisted do not',
    (g) => {
      const b = gcnBinding(graph(g));
      const p = bindProblem(spec, b);
      const c = choicesOf(p, planPareto(sys, p, popts).pareto[0]!);
      const tree = withChecks(
        { leaf: 0 },
        {
          spec,
          sys,
          popts,
          tol: 0.05,
          partitions: [c],
          keys: KEYS,
          samples: [b],
          score: (q, x) => scoreChoices(sys, q, x, popts),
        },
      );
      const checks = (tree as Extract<GuardNode, { leaf: number }>).checks!;
      const holds = skewExtremes(b.sparse.get('A')!).map((f) => {
        const { v, opt } = score({ ...b, sparse: new Map([['A', f]]) }, c);
        return Number.isFinite(v) && v <= opt * 1.05 + 1e-12;
      });
      expect(checks).toEqual(holds.every(Boolean) ? [] : KEYS);
    },
  );

  it('a leaf that leaves partitions open checks every key', () => {
    const b = gcnBinding(graph('cora.cites'));
    const p = bindProblem(spec, b);
    const c = choicesOf(p, planPareto(sys, p, popts).pareto[0]!);
    const tree = withChecks(
      { leaf: 0, also: [1] },
      {
        spec,
        sys,
        popts,
        tol: 0.05,
        partitions: [c, c],
        keys: KEYS,
        samples: [b],
        score: (q, x) => scoreChoices(sys, q, x, popts),
      },
    );
    expect(tree).toEqual({ leaf: 0, also: [1], checks: KEYS });
  });
});

describe('the range check at a leaf', () => {
  const plan = {
    partitions: [0, 1, 2].map((id) => ({ id, choices: [], label: `p${id}`, fallbacks: [] })),
    tree: {
      feature: 'A.rows',
      tier: 0,
      threshold: 100,
      le: { leaf: 0, checks: [] },
      gt: { feature: 'A.rows', tier: 0, threshold: 500, le: { leaf: 1, checks: ['A.rowLenCv'] }, gt: { leaf: 2 } },
    },
    ranges: { 'A.rows': [0, 1000], 'A.rowLenCv': [0, 1] },
  } as unknown as GuardPlan;
  const at = (rows: number, cv: number): Binding => ({
    sparse: new Map([
      [
        'A',
        {
          rows,
          cols: rows,
          nnz: rows,
          rowLenMean: 1,
          rowLenMax: 1,
          rowLenCv: cv,
          emptyRowFraction: 0,
          top1PctNnzShare: 0.01,
        },
      ],
    ]),
    dims: new Map(),
    scalars: new Map(),
  });

  it('takes tier 0 always, tier 1 where the leaf lists it, every key where the leaf has no list', () => {
    expect(selectPartition(plan, at(50, 5)).inRange).toBe(true);
    expect(selectPartition(plan, at(300, 5)).outOfRange).toEqual(["A.rowLenCv = 5 is above the guards' range [0, 1]"]);
    expect(selectPartition(plan, at(300, 0.5)).inRange).toBe(true);
    expect(selectPartition(plan, at(700, 5)).outOfRange).toEqual(["A.rowLenCv = 5 is above the guards' range [0, 1]"]);
    expect(selectPartition(plan, at(5000, 0.5)).outOfRange).toEqual([
      "A.rows = 5000 is above the guards' range [0, 1000]",
    ]);
  });

  it('the compiled check on a binding agrees with the check through a getter, at every leaf and edge', () => {
    const leaves: (readonly string[] | undefined)[] = [[], ['A.rowLenCv'], undefined];
    for (const rows of [0, 50, 300, 1000, 1000.5, 5000])
      for (const cv of [-1, 0, 0.5, 1, 1 + 1e-6, 5, NaN])
        for (const checks of leaves) {
          const b = at(rows, cv);
          const rec = featureView({ sparse: ['A'], dims: [], scalars: [] })(b);
          expect(inRangesOf(plan.ranges, b, checks), `rows ${rows}, cv ${cv}, checks ${checks?.join()}`).toBe(
            inRanges(plan.ranges, (k) => rec[k], checks),
          );
        }
    // A dim and a scalar range, and a key the binding lacks (skipped, as featureValue gives undefined).
    const ranges = { 'dim.n': [1, 10], 'scalar.alpha': [0, 1], 'B.rows': [0, 0] } as GuardPlan['ranges'];
    const with_ = (n: number, alpha: number): Binding => ({
      sparse: new Map(),
      dims: new Map([['n', n]]),
      scalars: new Map([['alpha', alpha]]),
    });
    expect(inRangesOf(ranges, with_(5, 0.5))).toBe(true);
    expect(inRangesOf(ranges, with_(11, 0.5))).toBe(false);
    expect(inRangesOf(ranges, with_(5, 2))).toBe(false);
  });

  it('a sampled input reaching a tier-0-only leaf reads no row; one reaching a tier-1 check does', () => {
    const view = featureView({ sparse: ['A'], dims: [], scalars: [] });
    for (const [g, read] of [
      ['karate.mtx', false], // 34 rows: leaf 0, tier 0 only
      ['jazz.mtx', true], // 198 rows: leaf 1, checks A.rowLenCv
    ] as const) {
      const f = new SampledFeatures(graph(g));
      const rec = view({ sparse: new Map([['A', f]]), dims: new Map(), scalars: new Map() });
      const leaf = leafAt(plan.tree, (k) => rec[k]);
      inRanges(plan.ranges, (k) => rec[k], leaf.checks);
      expect(f.rowStatsTaken).toBe(read);
      // The compiled check reads as little.
      const h = new SampledFeatures(graph(g));
      inRangesOf(plan.ranges, { sparse: new Map([['A', h]]), dims: new Map(), scalars: new Map() }, leaf.checks);
      expect(h.rowStatsTaken).toBe(read);
    }
  });
});
