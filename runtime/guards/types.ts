/**
 * Guards: a small decision tree over data features that picks one of a few
 * precompiled partitions (stage choices) for each input. Plain data, so a
 * generated runtime can embed it and plan.json can record it.
 */
import type { Binding } from '../plan/bind.js';
import type { StageChoice } from '../plan/dp.js';
import type { EnergyScope, StreamLength } from '../plan/figures.js';
import type { Objective } from '../plan/types.js';

export type { Binding, StageChoice, Objective };

export interface GuardPartition {
  id: number;
  choices: StageChoice[];
  /** Human-readable: `gpu x1 [T1, H1] | fpga x1 [T2, Y]`. */
  label: string;
  /** Other partitions' ids, best first, for when this one cannot run. */
  fallbacks: number[];
}

export type GuardNode =
  | { leaf: number }
  | { feature: string /* e.g. "A.rowLenCv" */; tier: 0 | 1 | 2; threshold: number; le: GuardNode; gt: GuardNode };

export interface GuardPlan {
  objective: Objective;
  /** How the partitions' figures were counted; a re-plan at run time counts the same way. */
  energyScope: EnergyScope;
  streamLength: StreamLength;
  partitions: GuardPartition[];
  tree: GuardNode;
  /** Share of training samples where the tree picks a partition as good as the best of the chosen ones. */
  trainingAccuracy: number;
  /** Mean loss of the tree's pick against each sample's own DP optimum, percent. */
  meanLossPct: number;
  /** Feature ranges the guards were built for; outside them the runtime re-plans. */
  ranges: Record<string, [number, number]>;
  samples: number;
  /** Loss tolerance the partitions cover the samples within (fraction). */
  lossTolerance: number;
  /** Share of samples some chosen partition covers within the tolerance. */
  coverage: number;
  /** Samples dropped because no mapping was feasible for them. */
  infeasibleSamples: number;
}

export interface GuardDecision {
  partition: GuardPartition;
  /** Tests taken, e.g. `A.nnz <= 12000 (7412)`. */
  path: string[];
  inRange: boolean;
  /** Why the input is outside the ranges, one line per feature. */
  outOfRange: string[];
}
