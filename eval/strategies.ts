/**
 * The strategies compared on each case, each returning a planner Mapping
 * that the simulation then scores:
 * - dype: guards built (runtime/guards) from the training inputs' profiles
 *   (other folds: never the case's own input) pick a partition; its
 *   fallbacks are tried in order when it cannot run, and an input outside
 *   the guards' ranges is re-planned, as the runtime does;
 * - dype-online: a fresh DP plan with the input's exact features;
 * - static: one mapping chosen on the training inputs (runtime/plan/baselines);
 * - gpu-only: the best mapping on the GPUs alone;
 * - online-no-split: a diagnostic, the planner's best unsplit mapping;
 * - heft: HEFT list scheduling; under a power cap, on the subset of devices
 *   within the cap whose HEFT schedule is best (HEFT itself ignores power).
 */
import { buildGuards, selectPartition, type GuardPlan } from '../runtime/guards/index.js';
import { heftWithinCap, singleKind, staticChoice, withinCap } from '../runtime/plan/baselines.js';
import type { Binding } from '../runtime/plan/bind.js';
import { evaluateChoices, objectiveValue, planPareto, type PlanOptions, type StageChoice } from '../runtime/plan/dp.js';
import type { PlanGoal } from '../runtime/plan/figures.js';
import type { Mapping, Objective, PlanProblem } from '../runtime/plan/types.js';
import type { SystemSpec } from '../runtime/system/types.js';

/**
 * `online-no-split` is a diagnostic, not a contender: the planner's best
 * mapping among those that split no stage over several instances, to
 * measure how much of the loss the planner's split cost explains.
 */
export const STRATEGIES = ['dype', 'dype-online', 'static', 'gpu-only', 'heft', 'online-no-split'] as const;
export type Strategy = (typeof STRATEGIES)[number];

export interface StrategyPick {
  mapping: Mapping | undefined;
  /** How the pick was made: guard path, fallback, re-plan, or why there is none. */
  note: string;
  /** dype only: the partition id the guards chose. */
  partition?: number;
}

export function planOpts(sys: SystemSpec, goal: PlanGoal): PlanOptions {
  const cap = sys.constraints.powerCapW;
  return {
    objective: goal.objective,
    energyScope: goal.energyScope,
    streamLength: goal.streamLength,
    ...(cap !== undefined ? { powerCapW: cap } : {}),
  };
}

export function applyChoices(
  sys: SystemSpec,
  p: PlanProblem,
  c: readonly StageChoice[],
  goal: PlanGoal,
): Mapping | undefined {
  return withinCap(sys, evaluateChoices(sys, p, c, goal));
}

export function online(sys: SystemSpec, p: PlanProblem, goal: PlanGoal): Mapping | undefined {
  return planPareto(sys, p, planOpts(sys, goal)).pareto[0];
}

/** The planner's best (by its own figures) among mappings whose stages each use one instance. */
export function onlineNoSplit(candidates: readonly Mapping[], objective: Objective): StrategyPick {
  let best: Mapping | undefined;
  for (const m of candidates)
    if (
      m.stages.every((s) => s.count === 1) &&
      (!best || objectiveValue(m, objective) < objectiveValue(best, objective))
    )
      best = m;
  return best
    ? { mapping: best, note: 'planner, no split stage' }
    : { mapping: undefined, note: 'no unsplit mapping is feasible' };
}

export function trainGuards(
  sys: SystemSpec,
  spec: Parameters<typeof buildGuards>[0],
  training: readonly Binding[],
  goal: PlanGoal,
): GuardPlan {
  const cap = sys.constraints.powerCapW;
  // judge: false: the eval judges the guards on its own held-out cases; nested cross-validation here would only cost time.
  return buildGuards(spec, sys, training, {
    objective: goal.objective,
    energyScope: goal.energyScope,
    streamLength: goal.streamLength,
    judge: false,
    ...(cap !== undefined ? { powerCapW: cap } : {}),
  });
}

export function dypePick(sys: SystemSpec, p: PlanProblem, b: Binding, guards: GuardPlan, goal: PlanGoal): StrategyPick {
  const d = selectPartition(guards, b);
  if (!d.inRange) {
    const m = online(sys, p, goal);
    return {
      mapping: m,
      note: `re-planned: outside the guards' ranges (${d.outOfRange.join('; ')})`,
      partition: d.partition.id,
    };
  }
  if (d.candidates.length > 1) {
    // As the runtime does (runtime/engine/choose.ts): the cost model weighs the partitions the leaf leaves open.
    let best: { m: Mapping; id: number; v: number } | undefined;
    for (const part of d.candidates) {
      const m = applyChoices(sys, p, part.choices, goal);
      const v = m ? objectiveValue(m, goal.objective) : Infinity;
      if (m && (!best || v < best.v)) best = { m, id: part.id, v };
    }
    if (best)
      return {
        mapping: best.m,
        note: `guards: ${[...d.path, `cost model: partition ${best.id} of ${d.candidates.map((c) => c.id).join(', ')}`].join(', ')}`,
        partition: best.id,
      };
  }
  const order = [d.partition.id, ...d.partition.fallbacks];
  for (const id of order) {
    const part = guards.partitions.find((x) => x.id === id);
    if (!part) continue;
    const m = applyChoices(sys, p, part.choices, goal);
    if (m)
      return {
        mapping: m,
        note:
          id === d.partition.id
            ? `guards: ${d.path.join(', ') || 'single partition'}`
            : `fallback ${id} (partition ${d.partition.id} cannot run)`,
        partition: d.partition.id,
      };
  }
  return {
    mapping: online(sys, p, goal),
    note: 're-planned: no partition can run this input',
    partition: d.partition.id,
  };
}

export function trainStatic(
  sys: SystemSpec,
  training: readonly PlanProblem[],
  goal: PlanGoal,
): StageChoice[] | undefined {
  return staticChoice(sys, training, planOpts(sys, goal));
}

export function gpuOnlyPick(sys: SystemSpec, p: PlanProblem, goal: PlanGoal): StrategyPick {
  const m = withinCap(sys, singleKind(sys, p, 'gpu', planOpts(sys, goal)));
  return m ? { mapping: m, note: 'gpu-only' } : { mapping: undefined, note: 'no GPU mapping is feasible' };
}

export function heftPick(sys: SystemSpec, p: PlanProblem, goal: PlanGoal): StrategyPick {
  return heftWithinCap(sys, p, planOpts(sys, goal));
}
