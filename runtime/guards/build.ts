/**
 * The guard builder: the DP's best mapping for every sample, a greedy set
 * cover choosing K of those mappings (partitions) so that each sample has
 * one within the loss tolerance, a decision tree over the features picking
 * among them, and per partition a ranked fallback list (./fit.ts); K and the
 * tree's depth chosen by cross-validated loss, and the result judged on
 * held-out samples (./validate.ts).
 */
import type { Binding } from '../plan/bind.js';
import { bindProblem } from '../plan/bind.js';
import { choicesOf, choicePricer, objectiveValue, planPareto, type PlanOptions, type StageChoice } from '../plan/dp.js';
import type { PlanGoal } from '../plan/figures.js';
import type { Mapping, PlanProblem, PlanSpec } from '../plan/types.js';
import type { DeviceKind, SystemSpec } from '../system/types.js';
import { featureKeys, featureValue, RANGE_KEYS_TIER1, tierOf } from './features.js';
import { fitGuards, INFEASIBLE_LOSS, scoreFit, type GuardData } from './fit.js';
import { withChecks } from './checks.js';
import { walkTree, type TreeOptions } from './tree.js';
import { chooseModel, heldOut, type SelectOptions } from './validate.js';
import type { GuardPartition, GuardPlan } from './types.js';

/** The goal (objective, energy scope, stream length) the partitions are chosen for, recorded in the plan. */
export interface BuildOptions extends TreeOptions, PlanGoal {
  /** At most this many partitions (default 8); how many, and the tree's depth (at most maxDepth, default 6), are chosen by cross-validated loss. */
  maxPartitions?: number;
  /** A partition covers a sample when within this fraction of its optimum (default 0.05). */
  lossTolerance?: number;
  powerCapW?: number;
  /** Seed of the cross-validation folds. */
  seed?: number;
  /** Ranges the samples were drawn across: the recorded ranges cover them whole, not just the points drawn. */
  declaredRanges?: Record<string, [number, number]>;
  /** Judge the guards on held-out samples (nested cross-validation, each profile left out; default true): most of the build's time. */
  judge?: boolean;
  /** Plan on these device kinds alone (recorded as the guards' `kinds`). */
  kinds?: readonly DeviceKind[];
}

/** Whether the runtime checks an input's feature against the guards' range: tier 0, and the tier-1 features that move the cost models most. */
function rangeChecked(key: string): boolean {
  const tier = tierOf(key);
  return tier === 0 || (tier === 1 && RANGE_KEYS_TIER1.has(key.slice(key.lastIndexOf('.') + 1)));
}

export function choiceKey(c: readonly StageChoice[]): string {
  return c.map((s) => `${s.start}-${s.end}@${s.device}x${s.count}`).join('|');
}

export function partitionLabel(spec: PlanSpec, c: readonly StageChoice[]): string {
  return c
    .map(
      (s) =>
        `${s.device} x${s.count} [${spec.ops
          .slice(s.start, s.end)
          .map((o) => o.result)
          .join(', ')}]`,
    )
    .join(' | ');
}

/** The planner's options for a goal (a guard plan records its own) on a system, under its constraints. */
export function planOptions(
  sys: SystemSpec,
  goal: PlanGoal & { kinds?: readonly DeviceKind[] | undefined },
  powerCapW?: number,
): PlanOptions {
  const cap = powerCapW ?? sys.constraints.powerCapW;
  return {
    objective: goal.objective,
    energyScope: goal.energyScope,
    streamLength: goal.streamLength,
    ...(goal.kinds !== undefined ? { kinds: goal.kinds } : {}),
    ...(cap !== undefined ? { powerCapW: cap } : {}),
    ...(sys.constraints.latencyBoundMs !== undefined ? { latencyBoundMs: sys.constraints.latencyBoundMs } : {}),
  };
}

/** The objective value of fixed choices on a problem, Infinity when they cannot run there (or break the power cap). */
export function scoreChoices(sys: SystemSpec, p: PlanProblem, c: readonly StageChoice[], opts: PlanOptions): number {
  return scoreMapping(choicePricer(sys, p, opts).figures(c), opts);
}

/** The objective value of a mapping, Infinity when there is none or it breaks the power cap or latency bound. */
export function scoreMapping(
  m: Pick<Mapping, 'powerW' | 'latencyMs' | 'perInputMs' | 'energyJ'> | undefined,
  opts: PlanOptions,
): number {
  if (!m) return Infinity;
  if (opts.powerCapW !== undefined && m.powerW > opts.powerCapW) return Infinity;
  if (opts.latencyBoundMs !== undefined && m.latencyMs > opts.latencyBoundMs) return Infinity;
  return objectiveValue(m, opts.objective);
}

export function buildGuards(
  spec: PlanSpec,
  sys: SystemSpec,
  samples: readonly (Binding & { profile?: number })[],
  opts: BuildOptions,
): GuardPlan {
  const tol = opts.lossTolerance ?? 0.05;
  const popts = planOptions(sys, opts, opts.powerCapW);
  const kept: { b: Binding; p: PlanProblem; opt: number; profile: number | undefined }[] = [];
  const cands = new Map<string, StageChoice[]>();
  const optKey: string[] = [];
  let infeasible = 0;
  for (const b of samples) {
    const p = bindProblem(spec, b);
    const best = planPareto(sys, p, popts).pareto[0];
    if (!best) {
      infeasible++;
      continue;
    }
    kept.push({ b, p, opt: objectiveValue(best, opts.objective), profile: b.profile });
    const c = choicesOf(p, best);
    const key = choiceKey(c);
    cands.set(key, c);
    optKey.push(key);
  }
  if (kept.length === 0)
    throw new Error(
      `no mapping of kernel ${spec.kernel} is feasible on ${sys.name}${opts.kinds ? ` (on its ${opts.kinds.join(', ')} devices alone)` : ''} for any of the ${samples.length} samples`,
    );
  const candKeys = [...cands.keys()];
  const cand = [...cands.values()];
  const d: GuardData = {
    // loss[c][s]
    loss: cand.map((c) =>
      kept.map(({ p, opt }) => {
        const v = scoreChoices(sys, p, c, popts);
        return Number.isFinite(v) ? (opt > 0 ? v / opt - 1 : v > 0 ? INFEASIBLE_LOSS : 0) : INFEASIBLE_LOSS;
      }),
    ),
    optOf: optKey.map((k) => candKeys.indexOf(k)),
    keys: featureKeys(kept[0]!.b).filter(
      ({ key }) => kept.every(({ b }) => featureValue(b, key) !== undefined) || tierOf(key) === 2,
    ),
    x: [],
    tol,
    rangeKeys: [],
  };
  d.x = kept.map(({ b }) => d.keys.map(({ key }) => featureValue(b, key) ?? NaN));
  d.rangeKeys = d.keys.flatMap(({ key }, k) =>
    rangeChecked(key) ? [{ k, ...(opts.declaredRanges?.[key] ? { declared: opts.declaredRanges[key] } : {}) }] : [],
  );
  const all = kept.map((_, s) => s);
  // How many partitions and how deep a tree: chosen by cross-validated loss, within the caller's bounds.
  const sel: SelectOptions = {
    maxPartitions: Math.max(1, opts.maxPartitions ?? 8),
    maxDepth: opts.maxDepth ?? 6,
    folds: 5,
    seed: opts.seed ?? 11,
    tree: {
      ...(opts.minLeaf !== undefined ? { minLeaf: opts.minLeaf } : {}),
      ...(opts.tierMargin !== undefined ? { tierMargin: opts.tierMargin } : {}),
    },
  };
  const model = chooseModel(d, all, sel);
  const fit = fitGuards(d, all, model.partitions, { ...sel.tree, maxDepth: model.depth });
  const { chosen } = fit;
  const tree = withChecks(fit.tree, {
    spec,
    sys,
    popts,
    tol,
    partitions: chosen.map((c) => cand[c]!),
    keys: d.rangeKeys.map(({ k }) => d.keys[k]!.key).filter((key) => tierOf(key) !== 0),
    samples: kept.map(({ b }) => b),
    score: (p, c) => scoreChoices(sys, p, c, popts),
  });
  // Training figures: the tree's pick against the best chosen partition, and against each sample's own optimum.
  let good = 0;
  for (const s of all) {
    const row = chosen.map((c) => d.loss[c]![s]!);
    const { leaf, also } = walkTree(tree, (k) => featureValue(kept[s]!.b, k));
    // What the runtime takes: the cost model's best of the leaf's candidates.
    if (Math.min(...[leaf, ...(also ?? [])].map((p) => row[p]!)) <= Math.min(...row) + 1e-9) good++;
  }
  const training = scoreFit(fit, d, all);
  const coverage = all.filter((s) => chosen.some((c) => d.loss[c]![s]! <= tol)).length / kept.length;
  const partitions: GuardPartition[] = chosen.map((c, id) => ({
    id,
    choices: cand[c]!,
    label: partitionLabel(spec, cand[c]!),
    fallbacks: fit.fallbacks[id]!,
  }));
  const ranges: Record<string, [number, number]> = {};
  for (const { key } of d.keys) {
    if (!rangeChecked(key)) continue;
    const vs = kept.map(({ b }) => featureValue(b, key)!);
    const r = opts.declaredRanges?.[key];
    ranges[key] = [Math.min(...vs, ...(r ? [r[0]] : [])), Math.max(...vs, ...(r ? [r[1]] : []))];
  }
  return {
    objective: opts.objective,
    energyScope: opts.energyScope,
    streamLength: opts.streamLength,
    ...(opts.kinds !== undefined ? { kinds: [...opts.kinds] } : {}),
    partitions,
    tree,
    trainingAccuracy: good / kept.length,
    meanLossPct: training.meanLoss * 100,
    ranges,
    samples: kept.length,
    lossTolerance: tol,
    coverage,
    infeasibleSamples: infeasible,
    trainingWithinTolerance: training.within,
    model,
    ...(opts.judge === false
      ? {}
      : {
          heldOut: heldOut(
            d,
            all,
            kept.map((k) => k.profile),
            sel,
          ),
        }),
  };
}

/** Guards that always pick one fixed partition (a runtime pinned to a mapping): no samples, nothing chosen or held out. */
export function fixedGuards(goal: PlanGoal, choices: StageChoice[], label: string): GuardPlan {
  return {
    objective: goal.objective,
    energyScope: goal.energyScope,
    streamLength: goal.streamLength,
    partitions: [{ id: 0, choices, label, fallbacks: [] }],
    tree: { leaf: 0 },
    trainingAccuracy: 1,
    meanLossPct: 0,
    ranges: {},
    samples: 0,
    lossTolerance: 0,
    coverage: 1,
    infeasibleSamples: 0,
    trainingWithinTolerance: 1,
    model: { partitions: 1, depth: 0, folds: 0, grid: [] },
    heldOut: {
      folds: 0,
      meanLossPct: 0,
      withinTolerance: 1,
      unserved: 0,
      replanned: 0,
      treeOnly: { meanLossPct: 0, withinTolerance: 1 },
    },
  };
}
