/**
 * The compiled guard step (runtime/guards/step.ts) against the generic
 * walk and range check it replaces on the runtime's per-input path (leafAt,
 * inRangesOf): the same leaf and the same in-range verdict on features at,
 * just past and far from every threshold and range bound, with dims and
 * sparse inputs missing, and on sampled features of real graphs (which it
 * reads through their getters); a plan with a value the code cannot hold
 * is refused.
 */
import { describe, expect, it } from 'vitest';
import { SampledFeatures } from '../../runtime/features/quick.js';
import { inRangesOf } from '../../runtime/guards/select.js';
import { guardStep, guardStepSource, leavesOf } from '../../runtime/guards/step.js';
import { leafAt } from '../../runtime/guards/tree.js';
import { featureValue } from '../../runtime/guards/features.js';
import type { GuardNode, GuardPlan } from '../../runtime/guards/types.js';
import type { Binding } from '../../runtime/plan/bind.js';
import type { SparseFeatures } from '../../runtime/plan/types.js';
import { graph } from './fixtures.js';

const base: SparseFeatures = {
  rows: 1000,
  cols: 1000,
  nnz: 8000,
  rowLenMean: 8,
  rowLenMax: 40,
  rowLenCv: 0.5,
  emptyRowFraction: 0,
  top1PctNnzShare: 0.02,
  localityScore: 0.4,
};

/** A plan over A's tier-0 and tier-1 features, a density test, a dim and a scalar, with per-leaf checks and an open leaf. */
const tree: GuardNode = {
  feature: 'A.rows',
  tier: 0,
  threshold: 3000,
  le: {
    feature: 'A.rowLenMax',
    tier: 1,
    threshold: 40,
    le: { leaf: 0, checks: ['A.rowLenCv'] },
    gt: {
      feature: 'dim.f',
      tier: 0,
      threshold: 64,
      le: { leaf: 1, also: [2], checks: ['A.rowLenCv', 'A.rowLenMax'] },
      gt: { leaf: 2, checks: [] },
    },
  },
  gt: {
    feature: 'A.density',
    tier: 0,
    threshold: 1e-4,
    le: { leaf: 2 },
    gt: { feature: 'scalar.alpha', tier: 0, threshold: -0.5, le: { leaf: 1 }, gt: { leaf: 0 } },
  },
};
const plan = {
  tree,
  ranges: {
    'A.rows': [100, 20000],
    'A.nnz': [500, 400000],
    'A.rowLenCv': [0.1, 3],
    'A.rowLenMax': [4, 2000],
    'dim.f': [16, 256],
  },
} as unknown as GuardPlan;

const bind = (
  f: SparseFeatures | undefined,
  dims: Record<string, number>,
  scalars: Record<string, number> = {},
): Binding => ({
  sparse: new Map(f ? [['A', f]] : []),
  dims: new Map(Object.entries(dims)),
  scalars: new Map(Object.entries(scalars)),
});

/** What the runtime's generic path decides: the leaf's ordinal, negated (-1 - ordinal) out of range. */
function generic(b: Binding): number {
  const leaf = leafAt(tree, (k) => featureValue(b, k));
  const at = leavesOf(tree).indexOf(leaf);
  return inRangesOf(plan.ranges, b, leaf.checks) ? at : -1 - at;
}

describe('the compiled guard step', () => {
  it('numbers the leaves left to right', () => {
    expect(leavesOf(tree).map((l) => l.leaf)).toEqual([0, 1, 2, 2, 1, 0]);
  });

  it('reaches the same leaf and range verdict as the tree walk and the range check, at and around every bound', () => {
    const step = guardStep(plan);
    const near = (x: number): number[] => [x, x * (1 + 1e-6) + 1e-9, x * (1 - 1e-6) - 1e-9, x * 0.5, x * 2];
    let checked = 0;
    const outcomes = new Set<number>();
    for (const rows of [...near(3000), ...near(100), ...near(20000)])
      for (const rowLenMax of [...near(40), ...near(4), ...near(2000)])
        for (const rowLenCv of [...near(0.1), ...near(3), 1])
          for (const dims of [{ f: 64 }, { f: 65 }, { f: 8 }, { f: 300 }, {}] as Record<string, number>[])
            for (const scalars of [{ alpha: -0.5 }, { alpha: 0 }, {}] as Record<string, number>[]) {
              // Square, and wide enough that the density test goes to its <= side.
              for (const cols of [rows, 200_000]) {
                const b = bind({ ...base, rows, cols, nnz: rows * 8, rowLenMax, rowLenCv }, dims, scalars);
                const r = step(b);
                expect(r, JSON.stringify({ rows, cols, rowLenMax, rowLenCv, dims, scalars })).toBe(generic(b));
                outcomes.add(r);
                checked++;
              }
            }
    expect(checked).toBeGreaterThan(10_000);
    // Every leaf is reached, in range and out of it.
    for (let i = 0; i < 6; i++) {
      expect(outcomes.has(i), `leaf ${i} in range`).toBe(true);
      expect(outcomes.has(-1 - i), `leaf ${i} out of range`).toBe(true);
    }
  });

  it('sends a missing input or dim to the > side and passes its range, as the tree walk does', () => {
    const step = guardStep(plan);
    for (const b of [bind(undefined, { f: 64 }), bind(base, {}), bind(undefined, {})]) expect(step(b)).toBe(generic(b));
    // No A: A.rows is missing, so the > side; the density test too; alpha missing: > side again.
    expect(step(bind(undefined, {}))).toBe(5);
  });

  it('reads sampled features through their getters, and no row where the leaf checks tier 0 only', () => {
    const step = guardStep(plan);
    for (const file of ['cage8.mtx', 'ca-GrQc.mtx', 'bcsstk13.mtx', 'whitaker3.mtx', 'luxembourg_osm.mtx']) {
      const g = graph(file);
      for (const f of [16, 64, 128]) {
        const b = bind(new SampledFeatures(g), { f }, { alpha: 1 });
        expect(step(b), file).toBe(generic(bind(new SampledFeatures(g), { f }, { alpha: 1 })));
      }
    }
    // luxembourg_osm (114,599 rows) goes right at A.rows, then the density test: tier 0 only, no row read.
    const lux = new SampledFeatures(graph('luxembourg_osm.mtx'));
    step(bind(lux, { f: 64 }, { alpha: 1 }));
    expect(lux.rowStatsTaken).toBe(false);
  });

  it('writes thresholds and bounds as literals and refuses NaN and unknown features', () => {
    const src = guardStepSource(plan);
    expect(src).toContain('<= 3000');
    expect(src).toContain('b.sparse.get("A")');
    expect(() => guardStep({ ...plan, tree: { ...tree, threshold: NaN } } as GuardPlan)).toThrow(/NaN/);
    expect(() => guardStep({ ...plan, tree: { ...tree, feature: 'A.nosuch' } } as GuardPlan)).toThrow(
      /no feature A.nosuch/,
    );
    // Infinite range ends are kept (a plan built from one profile may have open ends).
    const open = { ...plan, ranges: { 'A.rows': [0, Infinity] } } as unknown as GuardPlan;
    expect(guardStep(open)(bind(base, { f: 64 }))).toBe(0);
    expect(guardStep(open)(bind({ ...base, rows: 2 ** 31 - 1 }, { f: 64 }))).toBe(3);
    expect(guardStep(open)(bind({ ...base, rows: -1 }, { f: 64 }))).toBe(-1);
  });
});
