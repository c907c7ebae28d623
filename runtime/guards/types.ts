/**
 * Guards: a small decision tree over data features that picks one of a few
 * precompiled partitions (stage choices) for each input. Plain data, so a
 * generated runtime can embed it and plan.json can record it.
 */
import type { Binding } from '../plan/bind.js';
import type { StageChoice } from '../plan/dp.js';
import type { EnergyScope, StreamLength } from '../plan/figures.js';
import type { Objective } from '../plan/types.js';
import type { DeviceKind } from '../system/types.js';

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
  /**
   * A partition; `also`: other partitions the runtime weighs with the cost model for inputs reaching this leaf, the
   * leaf's own first. `checks`: the tier-1 range keys checked for inputs reaching this leaf (tier-0 keys always are):
   * those whose feasible extremes move this leaf's pick out of the loss tolerance (./checks.ts), so a leaf whose pick
   * holds whatever the rows look like reads no row. Absent (plans written before it was recorded): every range key.
   */
  | { leaf: number; also?: number[]; checks?: string[] }
  | { feature: string /* e.g. "A.rowLenCv" */; tier: 0 | 1 | 2; threshold: number; le: GuardNode; gt: GuardNode };

export interface GuardPlan {
  objective: Objective;
  /** How the partitions' figures were counted; a re-plan at run time counts the same way. */
  energyScope: EnergyScope;
  streamLength: StreamLength;
  /**
   * The device kinds the partitions may use: those the project's compiled targets serve (wasm the CPU, cuda the GPU,
   * hls the FPGA), so a run never picks a stage nothing in the project can execute. A re-plan keeps to them too.
   * Absent: every kind of the system.
   */
  kinds?: DeviceKind[];
  partitions: GuardPartition[];
  tree: GuardNode;
  /** Share of training samples where the runtime's pick (the tree's leaf, weighed with its candidates by the cost model) is as good as the best of the chosen partitions. */
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
  /** Share of training samples whose pick (after fallbacks) is within the tolerance of their own DP optimum. */
  trainingWithinTolerance: number;
  /** How the number of partitions and the tree depth were chosen (cross-validated loss over the samples). */
  model: ModelChoice;
  /** The guards judged on samples they never saw (runtime/guards/validate.ts); absent only when the builder was told not to judge (`judge: false`: dype eval, which judges the guards on its own held-out cases). */
  heldOut?: HeldOutFigures;
}

export interface ModelChoice {
  partitions: number;
  depth: number;
  folds: number;
  /** Every (partitions, depth) tried, with its cross-validated figures. */
  grid: { partitions: number; depth: number; meanLossPct: number; withinTolerance: number; treeMeanLossPct: number }[];
}

export interface HeldOutFigures {
  /** Outer folds of the nested cross-validation over the samples. */
  folds: number;
  /** Mean loss of the pick against each held-out sample's DP optimum, percent (over the samples some partition serves). */
  meanLossPct: number;
  /** Share of held-out samples whose pick is within the tolerance. */
  withinTolerance: number;
  /** Held-out samples no partition of their fold's guards can run. */
  unserved: number;
  /** Held-out samples outside their fold's ranges: the runtime re-plans those with the DP (no loss, a planning run's time). */
  replanned: number;
  /** The tree's pick alone (no cost-model weighing at the leaves, no re-plan): what a host without dype's cost model, such as the C++ dispatch header, gets. */
  treeOnly: { meanLossPct: number; withinTolerance: number };
  /** Each profile's samples judged by guards built from the other profiles' only (two or more profiles). */
  byProfile?: {
    profile: number;
    samples: number;
    meanLossPct: number;
    withinTolerance: number;
    unserved: number;
    replanned: number;
    treeOnly: { meanLossPct: number; withinTolerance: number };
  }[];
}

export interface GuardDecision {
  partition: GuardPartition;
  /** The partitions the leaf leaves open for the cost model to weigh, the tree's pick first (just it when the leaf has no others). */
  candidates: GuardPartition[];
  /** Tests taken, e.g. `A.nnz <= 12000 (7412)`. */
  path: string[];
  inRange: boolean;
  /** Why the input is outside the ranges, one line per feature. */
  outOfRange: string[];
}
