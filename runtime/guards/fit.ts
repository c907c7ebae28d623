/**
 * One fit of the guards on a subset of the samples: the partitions (a
 * greedy set cover over the DP optima of those samples), the decision tree
 * over their features, and the fallback order per partition; and the loss
 * such a fit's pick has on any sample, as the runtime would take it (a pick
 * that cannot run falls to its first fallback that can). The builder fits
 * on all samples; cross-validation (./validate.ts) fits on folds and scores
 * the samples each fit never saw.
 */
import type { Tier } from './features.js';
import { fitTree, type TreeOptions } from './tree.js';
import type { GuardNode } from './types.js';

/** Loss of a partition on a sample it cannot run: large but finite for the tree's sums. */
export const INFEASIBLE_LOSS = 1e3;

export interface GuardData {
  /** loss[c][s]: candidate mapping c on sample s, as a fraction over the sample's own DP optimum. */
  loss: number[][];
  /** The candidate that is sample s's own DP optimum. */
  optOf: number[];
  keys: { key: string; tier: Tier }[];
  /** x[s][k]: feature k of sample s (NaN when the sample lacks it). */
  x: number[][];
  /** A partition covers a sample when its loss is at most this. */
  tol: number;
  /** Features whose range the runtime checks (indices into keys), with the range declared for each, if any: an input outside the training samples' ranges is re-planned. */
  rangeKeys: { k: number; declared?: [number, number] }[];
}

export interface Fitted {
  /** Candidate index of each partition. */
  chosen: number[];
  tree: GuardNode;
  /** Per partition, the other partitions best first (indices into chosen). */
  fallbacks: number[][];
}

/** Greedy set cover: each step takes the candidate covering most uncovered samples (then the lowest total loss). */
function cover(d: GuardData, train: readonly number[], maxPartitions: number): number[] {
  const cands = [...new Set(train.map((s) => d.optOf[s]!))].sort((a, b) => a - b);
  const total = new Map(cands.map((c) => [c, train.reduce((a, s) => a + d.loss[c]![s]!, 0)]));
  const chosen: number[] = [];
  const uncovered = new Set(train);
  while (chosen.length < maxPartitions && uncovered.size > 0) {
    let best = -1;
    let bestCover = 0;
    for (const c of cands) {
      if (chosen.includes(c)) continue;
      let n = 0;
      for (const s of uncovered) if (d.loss[c]![s]! <= d.tol) n++;
      if (n > bestCover || (n === bestCover && n > 0 && total.get(c)! < total.get(best)!)) {
        best = c;
        bestCover = n;
      }
    }
    if (best < 0) break;
    chosen.push(best);
    for (const s of [...uncovered]) if (d.loss[best]![s]! <= d.tol) uncovered.delete(s);
  }
  if (chosen.length === 0) chosen.push(cands.reduce((a, c) => (total.get(c)! < total.get(a)! ? c : a)));
  return chosen;
}

/**
 * Leaves every partition open at every leaf, for the runtime to weigh with
 * the cost model: first the leaf's own, then those clearly best for some of
 * its training samples (most such samples first), then the rest. The tree
 * cannot draw every boundary between partitions (they lie along products of
 * features, work against bandwidth, which axis-aligned tests approximate
 * poorly), the cost model can. Leaving open only the partitions clearly best
 * on a leaf's training samples (at most four) missed held-out samples that
 * another kept partition serves: on gcn for paper-2g2f (throughput, six
 * sampling seeds) 80-93% of held-out samples within the 5% tolerance and
 * 1.1-4.6% mean loss, against 94-98% and 0.3-1.2% with every partition open
 * (docs/RUNTIME.md). The price is the runtime pricing each partition on a new
 * pattern (at most maxPartitions, 8 by default).
 */
function addCandidates(tree: GuardNode, d: GuardData, train: readonly number[], chosen: readonly number[]): GuardNode {
  const at = new Map<GuardNode, number[]>();
  for (const s of train) {
    const n = nodeFor(tree, d, s);
    at.set(n, [...(at.get(n) ?? []), s]);
  }
  const visit = (n: GuardNode): GuardNode => {
    if (!('leaf' in n)) return { ...n, le: visit(n.le), gt: visit(n.gt) };
    const count = new Map<number, number>();
    for (const s of at.get(n) ?? []) {
      const row = chosen.map((c) => d.loss[c]![s]!);
      const best = row.reduce((b, x, p) => (x < row[b]! ? p : b), 0);
      if (best !== n.leaf && row[best]! < row[n.leaf]! - 1e-3) count.set(best, (count.get(best) ?? 0) + 1);
    }
    const clearly = [...count].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([p]) => p);
    const rest = chosen.map((_, p) => p).filter((p) => p !== n.leaf && !count.has(p));
    const also = [...clearly, ...rest];
    return also.length > 0 ? { leaf: n.leaf, also } : { leaf: n.leaf };
  };
  return visit(tree);
}

export function fitGuards(d: GuardData, train: readonly number[], maxPartitions: number, tree: TreeOptions): Fitted {
  const chosen = cover(d, train, maxPartitions);
  const lossT = train.map((s) => chosen.map((c) => d.loss[c]![s]!));
  const t = addCandidates(
    fitTree({ keys: d.keys, x: train.map((s) => d.x[s]!), loss: lossT }, chosen.length, tree),
    d,
    train,
    chosen,
  );
  const leafOf = train.map((s) => leafFor(t, d, s));
  const fallbacks = chosen.map((_, id) => {
    // The other partitions by mean loss over the samples this one is picked for (all samples when none).
    const mine = train.flatMap((_, i) => (leafOf[i] === id ? [i] : []));
    const over = mine.length > 0 ? mine : train.map((_, i) => i);
    return chosen
      .map((_, j) => j)
      .filter((j) => j !== id)
      .map((j) => ({ j, m: over.reduce((a, i) => a + lossT[i]![j]!, 0) / over.length }))
      .sort((a, b) => a.m - b.m || a.j - b.j)
      .map((f) => f.j);
  });
  return { chosen, tree: t, fallbacks };
}

const keyIndex = new WeakMap<GuardData, Map<string, number>>();

/** The leaf sample s reaches (walkTree's rule: a feature the sample lacks goes to the > side). */
function nodeFor(tree: GuardNode, d: GuardData, s: number): Extract<GuardNode, { leaf: number }> {
  let idx = keyIndex.get(d);
  if (!idx) keyIndex.set(d, (idx = new Map(d.keys.map(({ key }, k) => [key, k]))));
  let n = tree;
  while (!('leaf' in n)) {
    const k = idx.get(n.feature);
    const v = k === undefined ? NaN : d.x[s]![k]!;
    n = v <= n.threshold ? n.le : n.gt;
  }
  return n;
}

const leafFor = (tree: GuardNode, d: GuardData, s: number): number => nodeFor(tree, d, s).leaf;

/**
 * The loss of a fit's pick on sample s as the runtime takes it: the tree's
 * partition, or its first fallback that can run the sample; `unserved` when
 * none of the partitions can.
 */
export function pickLoss(f: Fitted, d: GuardData, s: number, withModel = true): { loss: number; unserved: boolean } {
  const node = nodeFor(f.tree, d, s);
  const leaf = node.leaf;
  if (withModel && node.also) {
    // The cost model weighs the leaf's candidates: the lowest objective value is the lowest loss.
    const l = Math.min(...[leaf, ...node.also].map((p) => d.loss[f.chosen[p]!]![s]!));
    if (l < INFEASIBLE_LOSS) return { loss: l, unserved: false };
  }
  for (const p of [leaf, ...f.fallbacks[leaf]!]) {
    const l = d.loss[f.chosen[p]!]![s]!;
    if (l < INFEASIBLE_LOSS) return { loss: l, unserved: false };
  }
  return { loss: INFEASIBLE_LOSS, unserved: true };
}

/** Mean loss (over the samples some partition serves) and the share within the tolerance (of all), over a set of samples. */
export function scoreFit(
  f: Fitted,
  d: GuardData,
  samples: readonly number[],
  withModel = true,
): { meanLoss: number; within: number; unserved: number } {
  let sum = 0;
  let n = 0;
  let within = 0;
  let unserved = 0;
  for (const s of samples) {
    const p = pickLoss(f, d, s, withModel);
    if (p.unserved) {
      unserved++;
      continue;
    }
    sum += p.loss;
    n++;
    if (p.loss <= d.tol + 1e-9) within++;
  }
  return { meanLoss: n > 0 ? sum / n : 0, within: samples.length > 0 ? within / samples.length : 1, unserved };
}
