/**
 * The guard builder: the DP's best mapping for every sample, a greedy set
 * cover choosing at most K of those mappings (partitions) so that each
 * sample has one within the loss tolerance, a decision tree over the
 * features picking among them, and per partition a ranked fallback list.
 */
import type { Binding } from '../plan/bind.js';
import { bindProblem } from '../plan/bind.js';
import { choicesOf, evaluateChoices, objectiveValue, planPareto, type PlanOptions, type StageChoice } from '../plan/dp.js';
import type { PlanGoal } from '../plan/figures.js';
import type { Mapping, PlanProblem, PlanSpec } from '../plan/types.js';
import type { SystemSpec } from '../system/types.js';
import { featureKeys, featureValue, RANGE_KEYS_TIER1, tierOf } from './features.js';
import { fitTree, walkTree, type TreeOptions } from './tree.js';
import type { GuardPartition, GuardPlan } from './types.js';

/** The goal (objective, energy scope, stream length) the partitions are chosen for, recorded in the plan. */
export interface BuildOptions extends TreeOptions, PlanGoal {
  /** At most this many partitions (default 4). */
  maxPartitions?: number;
  /** A partition covers a sample when within this fraction of its optimum (default 0.05). */
  lossTolerance?: number;
  powerCapW?: number;
  /** Reserved for sampling inside the builder; the samples given are used as they are. */
  seed?: number;
  /** Ranges the samples were drawn across: the recorded ranges cover them whole, not just the points drawn. */
  declaredRanges?: Record<string, [number, number]>;
}

/** Loss of a partition on a sample no mapping is feasible for, or that it cannot run: large but finite for the tree's sums. */
const INFEASIBLE_LOSS = 1e3;

export function choiceKey(c: readonly StageChoice[]): string {
  return c.map((s) => `${s.start}-${s.end}@${s.device}x${s.count}`).join('|');
}

export function partitionLabel(spec: PlanSpec, c: readonly StageChoice[]): string {
  return c.map((s) => `${s.device} x${s.count} [${spec.ops.slice(s.start, s.end).map((o) => o.result).join(', ')}]`).join(' | ');
}

/** The planner's options for a goal (a guard plan records its own) on a system, under its constraints. */
export function planOptions(sys: SystemSpec, goal: PlanGoal, powerCapW?: number): PlanOptions {
  const cap = powerCapW ?? sys.constraints.powerCapW;
  return {
    objective: goal.objective,
    energyScope: goal.energyScope,
    streamLength: goal.streamLength,
    ...(cap !== undefined ? { powerCapW: cap } : {}),
    ...(sys.constraints.latencyBoundMs !== undefined ? { latencyBoundMs: sys.constraints.latencyBoundMs } : {}),
  };
}

/** The objective value of fixed choices on a problem, Infinity when they cannot run there (or break the power cap). */
export function scoreChoices(sys: SystemSpec, p: PlanProblem, c: readonly StageChoice[], opts: PlanOptions): number {
  return scoreMapping(evaluateChoices(sys, p, c, opts), opts);
}

/** The objective value of a mapping, Infinity when there is none or it breaks the power cap or latency bound. */
export function scoreMapping(m: Mapping | undefined, opts: PlanOptions): number {
  if (!m) return Infinity;
  if (opts.powerCapW !== undefined && m.powerW > opts.powerCapW) return Infinity;
  if (opts.latencyBoundMs !== undefined && m.latencyMs > opts.latencyBoundMs) return Infinity;
  return objectiveValue(m, opts.objective);
}

export function buildGuards(spec: PlanSpec, sys: SystemSpec, samples: readonly Binding[], opts: BuildOptions): GuardPlan {
  const K = Math.max(1, opts.maxPartitions ?? 4);
  const tol = opts.lossTolerance ?? 0.05;
  const popts = planOptions(sys, opts, opts.powerCapW);
  const kept: { b: Binding; p: PlanProblem; opt: number }[] = [];
  const cands = new Map<string, StageChoice[]>();
  let infeasible = 0;
  for (const b of samples) {
    const p = bindProblem(spec, b);
    const best = planPareto(sys, p, popts).pareto[0];
    if (!best) {
      infeasible++;
      continue;
    }
    kept.push({ b, p, opt: objectiveValue(best, opts.objective) });
    const c = choicesOf(p, best);
    cands.set(choiceKey(c), c);
  }
  if (kept.length === 0) throw new Error(`no mapping of kernel ${spec.kernel} is feasible on ${sys.name} for any of the ${samples.length} samples`);
  const cand = [...cands.values()];
  // loss[c][s]
  const loss = cand.map((c) =>
    kept.map(({ p, opt }) => {
      const v = scoreChoices(sys, p, c, popts);
      return Number.isFinite(v) ? (opt > 0 ? v / opt - 1 : v > 0 ? INFEASIBLE_LOSS : 0) : INFEASIBLE_LOSS;
    }),
  );
  // Greedy set cover: each step takes the candidate covering most uncovered samples (then the lowest total loss).
  const chosen: number[] = [];
  const uncovered = new Set(kept.map((_, s) => s));
  const total = loss.map((row) => row.reduce((a, x) => a + x, 0));
  while (chosen.length < K && uncovered.size > 0) {
    let best = -1;
    let bestCover = 0;
    cand.forEach((_, c) => {
      if (chosen.includes(c)) return;
      let cover = 0;
      for (const s of uncovered) if (loss[c]![s]! <= tol) cover++;
      if (cover > bestCover || (cover === bestCover && cover > 0 && total[c]! < total[best]!)) {
        best = c;
        bestCover = cover;
      }
    });
    if (best < 0) break;
    chosen.push(best);
    for (const s of [...uncovered]) if (loss[best]![s]! <= tol) uncovered.delete(s);
  }
  if (chosen.length === 0) chosen.push(total.indexOf(Math.min(...total)));
  const coverage = 1 - uncovered.size / kept.length;
  // The tree's data: per sample, the loss of each chosen partition.
  const keys = featureKeys(kept[0]!.b).filter(({ key }) => kept.every(({ b }) => featureValue(b, key) !== undefined) || tierOf(key) === 2);
  const x = kept.map(({ b }) => keys.map(({ key }) => featureValue(b, key) ?? NaN));
  const lossT = kept.map((_, s) => chosen.map((c) => loss[c]![s]!));
  const tree = fitTree({ keys, x, loss: lossT }, chosen.length, opts);
  let good = 0;
  let lossSum = 0;
  const picks = kept.map(({ b }, s) => {
    const { leaf } = walkTree(tree, (k) => featureValue(b, k));
    const l = lossT[s]![leaf]!;
    if (l <= Math.min(...lossT[s]!) + 1e-9) good++;
    lossSum += l;
    return leaf;
  });
  const partitions: GuardPartition[] = chosen.map((c, id) => {
    // Fallbacks: the other partitions by mean loss over the samples this one is picked for (all samples when none).
    const mine = picks.flatMap((p, s) => (p === id ? [s] : []));
    const over = mine.length > 0 ? mine : kept.map((_, s) => s);
    const fallbacks = chosen
      .map((_, j) => j)
      .filter((j) => j !== id)
      .map((j) => ({ j, m: over.reduce((a, s) => a + lossT[s]![j]!, 0) / over.length }))
      .sort((a, b) => a.m - b.m || a.j - b.j)
      .map((f) => f.j);
    return { id, choices: cand[c]!, label: partitionLabel(spec, cand[c]!), fallbacks };
  });
  const ranges: Record<string, [number, number]> = {};
  for (const { key, tier } of keys) {
    if (tier === 2 || (tier === 1 && !RANGE_KEYS_TIER1.has(key.slice(key.lastIndexOf('.') + 1)))) continue;
    const vs = kept.map(({ b }) => featureValue(b, key)!);
    const d = opts.declaredRanges?.[key];
    ranges[key] = [Math.min(...vs, ...(d ? [d[0]] : [])), Math.max(...vs, ...(d ? [d[1]] : []))];
  }
  return {
    objective: opts.objective,
    energyScope: opts.energyScope,
    streamLength: opts.streamLength,
    partitions,
    tree,
    trainingAccuracy: good / kept.length,
    meanLossPct: (lossSum / kept.length) * 100,
    ranges,
    samples: kept.length,
    lossTolerance: tol,
    coverage,
    infeasibleSamples: infeasible,
  };
}
