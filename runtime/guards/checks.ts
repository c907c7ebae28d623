/**
 * Which tier-1 ranges each leaf must check. Tier-0 features (shapes, nnz,
 * dims) cost nothing to read; the row statistics cost a sample of the rows
 * (runtime/features/quick.ts), which on a small matrix is more than a few
 * percent of one SpMV. A leaf whose pick stays within the loss tolerance of
 * the DP's optimum however the rows of a sparse input are laid out, from
 * evenly (every row the mean length) to as skewed as the shape allows (one
 * row holding as much as it can), needs no tier-1 range check: an input
 * outside the profiles' row statistics would get the same partition from a
 * re-plan, within the tolerance. Tested on the leaf's own training samples
 * (a few, spread over them), with the skew pushed to both ends at once
 * because row-length statistics move together. A leaf that leaves several
 * partitions open reads every feature for the cost model anyway, so it
 * checks them all.
 */
import { bindProblem, type Binding } from '../plan/bind.js';
import { objectiveValue, planPareto, type PlanOptions, type StageChoice } from '../plan/dp.js';
import type { PlanProblem, PlanSpec, SparseFeatures } from '../plan/types.js';
import type { SystemSpec } from '../system/types.js';
import { copyFeatures, featureValue } from './features.js';
import type { GuardNode } from './types.js';

/** Training samples of a leaf the skew test is run on, at most (spread over the leaf's samples). */
export const CHECK_SAMPLES = 3;

/** The evenest and the most skewed row layouts of a sparse input's shape and entry count. */
export function skewExtremes(f: SparseFeatures): [SparseFeatures, SparseFeatures] {
  const { rows, cols, nnz } = f;
  const mean = rows > 0 ? nnz / rows : 0;
  const even: SparseFeatures = {
    ...copyFeatures(f),
    rowLenMax: Math.ceil(mean),
    rowLenCv: 0,
    emptyRowFraction: nnz >= rows || rows === 0 ? 0 : 1 - nnz / rows,
    top1PctNnzShare: rows > 0 ? Math.min(1, Math.max(1, Math.ceil(rows / 100)) / rows) : 0,
  };
  // As skewed as the shape allows: full rows of `cols` entries first, the remainder in one more row.
  const full = cols > 0 ? Math.floor(nnz / cols) : 0;
  const long = Math.min(cols, nnz);
  const used = full + (nnz - full * cols > 0 ? 1 : 0);
  const sq = rows > 0 ? (full * cols * cols + (nnz - full * cols) ** 2) / rows : 0;
  const skewed: SparseFeatures = {
    ...copyFeatures(f),
    rowLenMax: long,
    rowLenCv: mean > 0 ? Math.sqrt(Math.max(0, sq - mean * mean)) / mean : 0,
    emptyRowFraction: rows > 0 ? 1 - Math.min(rows, used) / rows : 0,
    top1PctNnzShare: nnz > 0 ? Math.min(1, (Math.max(1, Math.ceil(rows / 100)) * long) / nnz) : 0,
  };
  return [even, skewed];
}

export interface CheckInputs {
  spec: PlanSpec;
  sys: SystemSpec;
  popts: PlanOptions;
  tol: number;
  /** The partitions' stage choices, by partition index (the tree's leaf numbers). */
  partitions: readonly (readonly StageChoice[])[];
  /** The tier-1 keys the guards have ranges for (e.g. `A.rowLenCv`). */
  keys: readonly string[];
  /** The training samples. */
  samples: readonly Binding[];
  /** The objective value of fixed choices on a problem, Infinity where they cannot run (build.ts scoreChoices). */
  score: (p: PlanProblem, c: readonly StageChoice[]) => number;
}

type Leaf = Extract<GuardNode, { leaf: number }>;

/** The leaf a binding reaches (walkTree's rule: a feature the binding lacks goes to the > side). */
function leafOf(tree: GuardNode, b: Binding): Leaf {
  let n = tree;
  while (!('leaf' in n)) {
    const v = featureValue(b, n.feature);
    n = v !== undefined && v <= n.threshold ? n.le : n.gt;
  }
  return n;
}

/** Whether partition `c` stays within the tolerance of the optimum on binding b (false where it cannot run). */
function holds(i: CheckInputs, b: Binding, c: readonly StageChoice[]): boolean {
  const p = bindProblem(i.spec, b);
  const best = planPareto(i.sys, p, i.popts).pareto[0];
  if (!best) return true; // nothing can run it: a re-plan would fail the same way
  const opt = objectiveValue(best, i.popts.objective);
  const v = i.score(p, c);
  return Number.isFinite(v) && v <= opt * (1 + i.tol) + 1e-12;
}

/** The tier-1 keys of sparse input `name` a leaf must check, given its samples. */
function keysNeeded(i: CheckInputs, c: readonly StageChoice[], samples: readonly Binding[], name: string): boolean {
  const step = Math.max(1, Math.floor(samples.length / CHECK_SAMPLES));
  for (let s = 0; s < samples.length; s += step) {
    const b = samples[s]!;
    const f = b.sparse.get(name);
    if (!f) continue;
    for (const g of skewExtremes(f)) {
      const sparse = new Map(b.sparse);
      sparse.set(name, g);
      if (!holds(i, { ...b, sparse }, c)) return true;
    }
  }
  return false;
}

/** The tree with each leaf's `checks` filled in. */
export function withChecks(tree: GuardNode, i: CheckInputs): GuardNode {
  const byInput = new Map<string, string[]>();
  for (const k of i.keys) {
    const name = k.slice(0, k.lastIndexOf('.'));
    byInput.set(name, [...(byInput.get(name) ?? []), k]);
  }
  const at = new Map<Leaf, Binding[]>();
  for (const b of i.samples) {
    const l = leafOf(tree, b);
    at.set(l, [...(at.get(l) ?? []), b]);
  }
  const visit = (n: GuardNode): GuardNode => {
    if (!('leaf' in n)) return { ...n, le: visit(n.le), gt: visit(n.gt) };
    const samples = at.get(n) ?? [];
    const checks =
      n.also || samples.length === 0
        ? [...i.keys]
        : [...byInput].flatMap(([name, ks]) => (keysNeeded(i, i.partitions[n.leaf]!, samples, name) ? ks : []));
    return { ...n, checks: checks.sort() };
  };
  return visit(tree);
}
