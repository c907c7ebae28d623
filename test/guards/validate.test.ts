/**
 * Guards judged on samples they never saw (runtime/guards/validate.ts) and
 * the fit they judge (runtime/guards/fit.ts), on synthetic loss tables
 * whose right answers are known: a model that carries no information is
 * chosen small, a real boundary is found, held-out figures differ from
 * training ones where the tree memorises, and held-out samples outside the
 * training ranges count as re-planned.
 */
import { describe, expect, it } from 'vitest';
import { fitGuards, INFEASIBLE_LOSS, pickLoss, scoreFit, type GuardData } from '../../runtime/guards/fit.js';
import { chooseModel, foldsOf, heldOut, type SelectOptions } from '../../runtime/guards/validate.js';
import { Rng } from '../../runtime/random.js';

const SEL: SelectOptions = { maxPartitions: 4, maxDepth: 4, folds: 5, seed: 1, tree: {} };

/** Three candidates; sample s has feature x[s] (tier 0) and noise (tier 1); loss given per sample by `lossOf`. */
function data(
  n: number,
  lossOf: (x: number, s: number) => number[],
  rangeKeys: GuardData['rangeKeys'] = [],
): GuardData {
  const rng = new Rng(5);
  const x = Array.from({ length: n }, (_, s) => [s / n, rng.next()]);
  const rows = x.map(([v], s) => lossOf(v!, s));
  const loss = rows[0]!.map((_, c) => rows.map((r) => r[c]!));
  return {
    loss,
    optOf: rows.map((r) => r.indexOf(Math.min(...r))),
    keys: [
      { key: 'A.nnz', tier: 0 },
      { key: 'A.rowLenCv', tier: 1 },
    ],
    x,
    tol: 0.05,
    rangeKeys,
  };
}

const all = (n: number): number[] => Array.from({ length: n }, (_, s) => s);

describe('the folds', () => {
  it('deal every sample to exactly one fold, the same for a seed', () => {
    const f = foldsOf(all(23), 5, 3);
    expect(f).toHaveLength(5);
    expect(f.flat().sort((a, b) => a - b)).toEqual(all(23));
    expect(foldsOf(all(23), 5, 3)).toEqual(f);
    expect(foldsOf(all(23), 5, 4)).not.toEqual(f);
  });
});

describe('choosing the partitions and the depth by cross-validated loss', () => {
  it('takes one partition when one candidate is everyone\u2019s optimum', () => {
    const d = data(60, () => [0, 0.3, 0.6]);
    const m = chooseModel(d, all(60), SEL);
    expect([m.partitions, m.depth]).toEqual([1, 0]);
    expect(m.grid[0]).toMatchObject({ partitions: 1, depth: 0, meanLossPct: 0, withinTolerance: 1 });
  });

  it('finds a real boundary: two partitions split on the feature that separates them, no loss held out', () => {
    const d = data(80, (x) => (x < 0.5 ? [0, 0.4, 1] : [0.4, 0, 1]));
    const m = chooseModel(d, all(80), SEL);
    expect(m.partitions).toBe(2);
    expect(m.depth).toBe(1);
    const fit = fitGuards(d, all(80), m.partitions, { maxDepth: m.depth });
    expect(fit.tree).toMatchObject({ feature: 'A.nnz', tier: 0 });
    const h = heldOut(d, all(80), [], SEL);
    // The threshold learnt without a fold's samples can fall beside the boundary: at most a sample or two per fold.
    expect(h.withinTolerance).toBeGreaterThanOrEqual(0.95);
    expect(h.meanLossPct).toBeLessThan(2);
  });

  it('reports held-out loss above the training loss where the best partition is noise, and picks a small model there', () => {
    // Each sample's optimum is a coin toss the features cannot predict: a deep tree memorises the training samples.
    const rng = new Rng(9);
    const coin = Array.from({ length: 100 }, () => rng.next() < 0.5);
    const d = data(100, (_, s) => (coin[s] ? [0, 0.3, 1] : [0.3, 0, 1]));
    const deep = fitGuards(d, all(100), 2, { maxDepth: 6, minLeaf: 1 });
    const training = scoreFit(deep, d, all(100), false).meanLoss;
    const h = heldOut(d, all(100), [], SEL);
    expect(h.treeOnly.meanLossPct / 100).toBeGreaterThan(training + 0.05);
    const m = chooseModel(d, all(100), SEL);
    expect(m.depth).toBeLessThanOrEqual(1);
  });
});

describe('what the runtime takes at a leaf', () => {
  it('the cost model\u2019s best of the leaf\u2019s candidates, else the first fallback that can run', () => {
    const d = data(4, () => [0.2, 0.1, INFEASIBLE_LOSS]);
    const fit = {
      chosen: [0, 1, 2],
      tree: { leaf: 2, also: [0, 1] },
      fallbacks: [
        [1, 2],
        [0, 2],
        [1, 0],
      ],
    };
    expect(pickLoss(fit, d, 0)).toEqual({ loss: 0.1, unserved: false });
    // The tree alone: partition 2 cannot run the sample, its first fallback (1) can.
    expect(pickLoss(fit, d, 0, false)).toEqual({ loss: 0.1, unserved: false });
    const none = data(4, () => [INFEASIBLE_LOSS, INFEASIBLE_LOSS, INFEASIBLE_LOSS]);
    expect(pickLoss(fit, none, 0)).toEqual({ loss: INFEASIBLE_LOSS, unserved: true });
  });

  it('gives a leaf the partitions that are clearly best for some of its training samples', () => {
    // Three regimes along a product of two features the tree is barred from splitting (depth 0): the leaf keeps all three open.
    const d = data(30, (x) => (x < 0.33 ? [0, 0.2, 0.4] : x < 0.66 ? [0.2, 0, 0.4] : [0.4, 0.2, 0]));
    const fit = fitGuards(d, all(30), 3, { maxDepth: 0 });
    expect('leaf' in fit.tree && [fit.tree.leaf, ...(fit.tree.also ?? [])].sort()).toEqual([0, 1, 2]);
    expect(scoreFit(fit, d, all(30)).meanLoss).toBe(0);
    expect(scoreFit(fit, d, all(30), false).meanLoss).toBeGreaterThan(0.1);
  });
});

describe('held-out samples outside the training ranges', () => {
  it('are re-planned (no loss), counted apart, when their profile is left out', () => {
    // Profile 1's samples all lie above profile 0's range of the checked feature.
    const d = data(40, (x) => (x < 0.5 ? [0, 0.5, 1] : [0.5, 0, 1]), [{ k: 0 }]);
    const profile = all(40).map((s) => (s < 20 ? 0 : 1));
    const h = heldOut(d, all(40), profile, SEL);
    const p1 = h.byProfile!.find((p) => p.profile === 1)!;
    expect(p1).toMatchObject({ samples: 20, replanned: 20, meanLossPct: 0, withinTolerance: 1 });
    // The tree alone does not re-plan: built from profile 0 only, it picks profile 0's partition and loses 50%.
    expect(p1.treeOnly.meanLossPct).toBeCloseTo(50, 6);
  });
});
