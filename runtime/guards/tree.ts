/**
 * A small cost-sensitive decision tree (CART-like): each node splits the
 * samples on one feature threshold so that the summed loss of the best
 * partition on each side is lowest. Cheap tiers win: a tier-1 split is taken
 * only when it beats the best tier-0 split by a margin, a tier-2 split only
 * when it also changes the decision (its sides pick different partitions).
 */
import type { Tier } from './features.js';
import type { GuardNode } from './types.js';

export interface TreeData {
  keys: { key: string; tier: Tier }[];
  /** x[s][k]: feature k of sample s (NaN when the sample lacks it). */
  x: number[][];
  /** loss[s][p]: loss of partition p on sample s (fraction over the optimum). */
  loss: number[][];
}

export interface TreeOptions {
  maxDepth?: number;
  minLeaf?: number;
  /** Mean loss (fraction) per sample a costlier tier must save to be preferred (default 0.005). */
  tierMargin?: number;
}

interface Split {
  k: number;
  threshold: number;
  cost: number;
  le: number[];
  gt: number[];
}

function bestLeaf(idx: readonly number[], loss: number[][], parts: number): { p: number; cost: number } {
  let best = { p: 0, cost: Infinity };
  for (let p = 0; p < parts; p++) {
    let c = 0;
    for (const s of idx) c += loss[s]![p]!;
    if (c < best.cost - 1e-12) best = { p, cost: c };
  }
  return best;
}

/** xs: the node's samples with a finite feature k, in ascending order of it. */
function bestSplitOn(
  k: number,
  xs: readonly number[],
  idx: readonly number[],
  d: TreeData,
  parts: number,
  minLeaf: number,
): Split | undefined {
  if (xs.length < 2 * minLeaf) return undefined;
  const total = new Array<number>(parts).fill(0);
  for (const s of xs) for (let p = 0; p < parts; p++) total[p]! += d.loss[s]![p]!;
  const left = new Array<number>(parts).fill(0);
  let best: { at: number; cost: number } | undefined;
  for (let i = 0; i < xs.length - 1; i++) {
    const s = xs[i]!;
    for (let p = 0; p < parts; p++) left[p]! += d.loss[s]![p]!;
    if (i + 1 < minLeaf || xs.length - i - 1 < minLeaf) continue;
    if (d.x[xs[i + 1]!]![k]! === d.x[s]![k]!) continue;
    let l = Infinity;
    let r = Infinity;
    for (let p = 0; p < parts; p++) {
      l = Math.min(l, left[p]!);
      r = Math.min(r, total[p]! - left[p]!);
    }
    if (!best || l + r < best.cost - 1e-12) best = { at: i, cost: l + r };
  }
  if (!best) return undefined;
  const lo = d.x[xs[best.at]!]![k]!;
  const hi = d.x[xs[best.at + 1]!]![k]!;
  const threshold = (lo + hi) / 2;
  // Samples lacking the feature go to the > side (walkTree does the same).
  const le = idx.filter((s) => d.x[s]![k]! <= threshold);
  const gt = idx.filter((s) => !(d.x[s]![k]! <= threshold));
  return { k, threshold, cost: best.cost, le, gt };
}

/**
 * The split on feature k that best separates the samples' own best
 * partitions (weighted Gini impurity of their argmin labels), when it
 * lowers the impurity: the split a loss-sum criterion cannot see, where
 * neither side's best partition changes yet but a split below will (the
 * XOR case). Ties and minLeaf as bestSplitOn.
 */
function purestSplitOn(
  k: number,
  xs: readonly number[],
  idx: readonly number[],
  d: TreeData,
  label: readonly number[],
  parts: number,
  minLeaf: number,
): (Split & { impurity: number }) | undefined {
  if (xs.length < 2 * minLeaf) return undefined;
  const total = new Array<number>(parts).fill(0);
  for (const s of xs) total[label[s]!]!++;
  const gini = (c: readonly number[], n: number): number => (n === 0 ? 0 : n - c.reduce((a, x) => a + (x * x) / n, 0));
  const base = gini(total, xs.length);
  const left = new Array<number>(parts).fill(0);
  let best: { at: number; imp: number } | undefined;
  for (let i = 0; i < xs.length - 1; i++) {
    left[label[xs[i]!]!]!++;
    if (i + 1 < minLeaf || xs.length - i - 1 < minLeaf) continue;
    if (d.x[xs[i + 1]!]![k]! === d.x[xs[i]!]![k]!) continue;
    const imp =
      gini(left, i + 1) +
      gini(
        total.map((t, p) => t - left[p]!),
        xs.length - i - 1,
      );
    if (!best || imp < best.imp - 1e-12) best = { at: i, imp };
  }
  if (!best || best.imp >= base - 1e-12) return undefined;
  const threshold = (d.x[xs[best.at]!]![k]! + d.x[xs[best.at + 1]!]![k]!) / 2;
  const le = idx.filter((s) => d.x[s]![k]! <= threshold);
  const gt = idx.filter((s) => !(d.x[s]![k]! <= threshold));
  return { k, threshold, cost: NaN, le, gt, impurity: best.imp };
}

/**
 * Grows the tree: at each node the split that lowers the summed loss most
 * (cheap tiers first, as above); where none does, the split that best
 * separates the samples' own best partitions, cheapest tier first. Then
 * pruned bottom-up: a subtree that does not beat its node as one leaf by the
 * margin becomes that leaf, so the impurity splits stay only where the
 * splits below them pay.
 */
export function fitTree(d: TreeData, parts: number, o: TreeOptions = {}): GuardNode {
  const maxDepth = o.maxDepth ?? 4;
  const minLeaf = o.minLeaf ?? 2;
  const marginPer = o.tierMargin ?? 0.005;
  const label = d.loss.map((row) => row.reduce((b, x, p) => (x < row[b]! - 1e-12 ? p : b), 0));
  // Every feature's samples sorted once; a node takes its own from them in order (no sort per node).
  const order = d.keys.map((_, k) =>
    d.x
      .map((_, s) => s)
      .filter((s) => Number.isFinite(d.x[s]![k]!))
      .sort((a, b) => d.x[a]![k]! - d.x[b]![k]!),
  );
  const mask = new Uint8Array(d.x.length);
  const grow = (idx: number[], depth: number): { node: GuardNode; cost: number } => {
    const leaf = bestLeaf(idx, d.loss, parts);
    const asLeaf = { node: { leaf: leaf.p }, cost: leaf.cost };
    if (depth >= maxDepth || idx.length < 2 * minLeaf || leaf.cost <= 1e-12) return asLeaf;
    for (const s of idx) mask[s] = 1;
    const sorted = order.map((o) => o.filter((s) => mask[s] === 1));
    for (const s of idx) mask[s] = 0;
    const margin = marginPer * idx.length;
    let pick: Split | undefined;
    let bar = leaf.cost - margin;
    for (const tier of [0, 1, 2] as const) {
      let tierBest: Split | undefined;
      d.keys.forEach(({ tier: t }, k) => {
        if (t !== tier) return;
        const sp = bestSplitOn(k, sorted[k]!, idx, d, parts, minLeaf);
        if (sp && (!tierBest || sp.cost < tierBest.cost - 1e-12)) tierBest = sp;
      });
      if (!tierBest || tierBest.cost >= bar) continue;
      if (tier === 2 && bestLeaf(tierBest.le, d.loss, parts).p === bestLeaf(tierBest.gt, d.loss, parts).p) continue;
      pick = tierBest;
      // A costlier tier must beat this split by the margin too.
      bar = tierBest.cost - margin;
    }
    if (!pick)
      for (const tier of [0, 1, 2] as const) {
        let tierBest: (Split & { impurity: number }) | undefined;
        d.keys.forEach(({ tier: t }, k) => {
          if (t !== tier) return;
          const sp = purestSplitOn(k, sorted[k]!, idx, d, label, parts, minLeaf);
          if (sp && (!tierBest || sp.impurity < tierBest.impurity - 1e-12)) tierBest = sp;
        });
        if (tierBest) {
          pick = tierBest;
          break;
        }
      }
    if (!pick) return asLeaf;
    const le = grow(pick.le, depth + 1);
    const gt = grow(pick.gt, depth + 1);
    if (le.cost + gt.cost > leaf.cost - margin) return asLeaf;
    if ('leaf' in le.node && 'leaf' in gt.node && le.node.leaf === gt.node.leaf)
      return { node: le.node, cost: le.cost + gt.cost };
    const key = d.keys[pick.k]!;
    return {
      node: { feature: key.key, tier: key.tier, threshold: pick.threshold, le: le.node, gt: gt.node },
      cost: le.cost + gt.cost,
    };
  };
  return grow(
    d.x.map((_, s) => s),
    0,
  ).node;
}

/** The leaf node a feature getter reaches (walkTree without the path's messages: what a per-input check needs). */
export function leafAt(
  tree: GuardNode,
  get: (key: string) => number | undefined,
): Extract<GuardNode, { leaf: number }> {
  let n = tree;
  while (!('leaf' in n)) {
    const v = get(n.feature);
    n = v !== undefined && v <= n.threshold ? n.le : n.gt;
  }
  return n;
}

/** Walks the tree for one feature getter; the path lists each test with the value seen. */
export function walkTree(
  tree: GuardNode,
  get: (key: string) => number | undefined,
): { leaf: number; also?: number[]; checks?: string[]; path: string[] } {
  const path: string[] = [];
  let n = tree;
  while (!('leaf' in n)) {
    const v = get(n.feature);
    // A feature the input lacks goes to the > side, as samples lacking it did when the tree was fitted.
    const le = v !== undefined && v <= n.threshold;
    path.push(`${n.feature} ${le ? '<=' : '>'} ${fmt(n.threshold)} (${v === undefined ? 'n/a' : fmt(v)})`);
    n = le ? n.le : n.gt;
  }
  return { leaf: n.leaf, ...(n.also ? { also: n.also } : {}), ...(n.checks ? { checks: n.checks } : {}), path };
}

export function fmt(x: number): string {
  if (Number.isInteger(x)) return String(x);
  const a = Math.abs(x);
  return a >= 1e4 || a < 1e-3 ? x.toExponential(3) : String(Number(x.toPrecision(4)));
}

/** Features the tree tests, with their tiers. */
export function treeFeatures(t: GuardNode, out = new Map<string, 0 | 1 | 2>()): Map<string, 0 | 1 | 2> {
  if ('leaf' in t) return out;
  out.set(t.feature, t.tier);
  treeFeatures(t.le, out);
  treeFeatures(t.gt, out);
  return out;
}

export function treeDepth(t: GuardNode): number {
  return 'leaf' in t ? 0 : 1 + Math.max(treeDepth(t.le), treeDepth(t.gt));
}
