/**
 * Guards judged on samples they never saw. The number of partitions and
 * the tree's depth are chosen by cross-validated loss (k folds over the
 * samples), not fixed; the figures reported as held-out come from a nested
 * cross-validation (the choice made again inside each outer fold, so the
 * reported samples took no part in choosing either) and, when the samples
 * come from several profiles, from leaving each profile out in turn (its
 * samples judged by guards built from the others' only). The fit itself
 * is ./fit.ts.
 */
import { Rng } from '../random.js';
import { fitGuards, scoreFit, type GuardData } from './fit.js';
import type { TreeOptions } from './tree.js';
import type { HeldOutFigures, ModelChoice } from './types.js';

export interface SelectOptions {
  /** Upper bounds of the search. */
  maxPartitions: number;
  maxDepth: number;
  folds: number;
  seed: number;
  tree: Omit<TreeOptions, 'maxDepth'>;
}

/** Deterministic folds: the samples shuffled by the seed, dealt round-robin. */
export function foldsOf(samples: readonly number[], k: number, seed: number): number[][] {
  const rng = new Rng(seed);
  const order = [...samples];
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const folds: number[][] = Array.from({ length: Math.min(k, order.length) }, () => []);
  order.forEach((s, i) => folds[i % folds.length]!.push(s));
  return folds;
}

/** Partition counts and depths tried: every count to 4, then 6, 8, 12, ...; every depth to 4, then 6, 8, ... (within the bounds). */
const steps = (max: number): number[] => {
  const out: number[] = [];
  for (let v = 1; v <= max; v = v < 4 ? v + 1 : v + (v >= 8 ? 4 : 2)) out.push(v);
  return out;
};
const grid = (o: SelectOptions): { partitions: number; depth: number }[] => [
  { partitions: 1, depth: 0 },
  ...steps(o.maxPartitions)
    .filter((p) => p > 1)
    .flatMap((partitions) => steps(o.maxDepth).map((depth) => ({ partitions, depth }))),
];

/** Cross-validated mean loss and share within the tolerance of every (partitions, depth) on a set of samples. */
function crossValidate(d: GuardData, samples: readonly number[], o: SelectOptions): ModelChoice['grid'] {
  const folds = foldsOf(samples, o.folds, o.seed);
  return grid(o).map(({ partitions, depth }) => {
    let sum = 0;
    let within = 0;
    let treeSum = 0;
    let n = 0;
    for (let f = 0; f < folds.length; f++) {
      const train = folds.flatMap((x, g) => (g === f ? [] : x));
      const fit = fitGuards(d, train, partitions, { ...o.tree, maxDepth: depth });
      const sc = scoreFit(fit, d, folds[f]!);
      sum += sc.meanLoss * folds[f]!.length;
      within += sc.within * folds[f]!.length;
      treeSum += scoreFit(fit, d, folds[f]!, false).meanLoss * folds[f]!.length;
      n += folds[f]!.length;
    }
    return {
      partitions,
      depth,
      meanLossPct: (sum / n) * 100,
      withinTolerance: within / n,
      treeMeanLossPct: (treeSum / n) * 100,
    };
  });
}

/**
 * The partitions: the fewest within 0.05 points of the lowest cross-validated loss of the runtime's pick (every
 * partition open to its cost model at every leaf, ./fit.ts). The depth, for that many partitions: the shallowest
 * within 0.05 points of the lowest cross-validated loss of the tree alone, which is what a host without the cost
 * model (the C++ dispatch header) takes, and what the runtime falls back on where the cost model cannot price.
 */
export function chooseModel(d: GuardData, samples: readonly number[], o: SelectOptions): ModelChoice {
  const g = crossValidate(d, samples, o);
  const best = Math.min(...g.map((x) => x.meanLossPct));
  const partitions = Math.min(...g.filter((x) => x.meanLossPct <= best + 0.05).map((x) => x.partitions));
  const same = g.filter((x) => x.partitions === partitions);
  const bestTree = Math.min(...same.map((x) => x.treeMeanLossPct));
  const depth = Math.min(...same.filter((x) => x.treeMeanLossPct <= bestTree + 0.05).map((x) => x.depth));
  return { partitions, depth, folds: Math.min(o.folds, samples.length), grid: g };
}

/** The held-out samples outside the ranges of a training set (the runtime re-plans those with the DP). */
function outside(d: GuardData, train: readonly number[], test: readonly number[]): Set<number> {
  const out = new Set<number>();
  for (const { k, declared } of d.rangeKeys) {
    let lo = declared?.[0] ?? Infinity;
    let hi = declared?.[1] ?? -Infinity;
    for (const s of train) {
      const v = d.x[s]![k]!;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    for (const s of test) {
      const v = d.x[s]![k]!;
      if (v < lo - Math.abs(lo) * 1e-9 || v > hi + Math.abs(hi) * 1e-9) out.add(s);
    }
  }
  return out;
}

interface Judged {
  /** Loss sums over the samples served: the runtime's pick (out of range: the DP's, no loss), and the tree's alone. */
  sum: number;
  treeSum: number;
  within: number;
  treeWithin: number;
  unserved: number;
  replanned: number;
  n: number;
}

/**
 * Held-out figures: nested k-fold (the model chosen on each outer training
 * set by an inner cross-validation) and, with two or more profiles, each
 * profile left out.
 */
export function heldOut(
  d: GuardData,
  samples: readonly number[],
  profileOf: readonly (number | undefined)[],
  o: SelectOptions,
): HeldOutFigures {
  const judge = (train: readonly number[], test: readonly number[]): Judged => {
    const m = chooseModel(d, train, { ...o, folds: Math.min(o.folds, 3) });
    const fit = fitGuards(d, train, m.partitions, { ...o.tree, maxDepth: m.depth });
    const away = outside(d, train, test);
    const inside = test.filter((s) => !away.has(s));
    const sc = scoreFit(fit, d, inside);
    const tree = scoreFit(fit, d, test, false);
    return {
      sum: sc.meanLoss * (inside.length - sc.unserved),
      treeSum: tree.meanLoss * (test.length - tree.unserved),
      within: sc.within * inside.length + away.size,
      treeWithin: tree.within * test.length,
      unserved: sc.unserved,
      replanned: away.size,
      n: test.length,
    };
  };
  const add = (a: Judged, b: Judged): Judged => ({
    sum: a.sum + b.sum,
    treeSum: a.treeSum + b.treeSum,
    within: a.within + b.within,
    treeWithin: a.treeWithin + b.treeWithin,
    unserved: a.unserved + b.unserved,
    replanned: a.replanned + b.replanned,
    n: a.n + b.n,
  });
  const zero: Judged = { sum: 0, treeSum: 0, within: 0, treeWithin: 0, unserved: 0, replanned: 0, n: 0 };
  const pct = (sum: number, n: number): number => (n > 0 ? (sum / n) * 100 : 0);
  const outer = foldsOf(samples, o.folds, o.seed + 1);
  let t = zero;
  for (let f = 0; f < outer.length; f++)
    t = add(
      t,
      judge(
        outer.flatMap((x, g) => (g === f ? [] : x)),
        outer[f]!,
      ),
    );
  const figures: HeldOutFigures = {
    folds: outer.length,
    meanLossPct: pct(t.sum, t.n - t.unserved),
    withinTolerance: t.n > 0 ? t.within / t.n : 1,
    unserved: t.unserved,
    replanned: t.replanned,
    treeOnly: { meanLossPct: pct(t.treeSum, t.n - t.unserved), withinTolerance: t.n > 0 ? t.treeWithin / t.n : 1 },
  };
  const profiles = [...new Set(samples.map((s) => profileOf[s]).filter((p): p is number => p !== undefined))].sort(
    (a, b) => a - b,
  );
  if (profiles.length >= 2 && samples.every((s) => profileOf[s] !== undefined)) {
    figures.byProfile = profiles.map((p) => {
      const test = samples.filter((s) => profileOf[s] === p);
      const r = judge(
        samples.filter((s) => profileOf[s] !== p),
        test,
      );
      return {
        profile: p,
        samples: r.n,
        meanLossPct: pct(r.sum, r.n - r.unserved),
        withinTolerance: r.within / r.n,
        unserved: r.unserved,
        replanned: r.replanned,
        treeOnly: { meanLossPct: pct(r.treeSum, r.n - r.unserved), withinTolerance: r.treeWithin / r.n },
      };
    });
  }
  return figures;
}
