/** What a generated runtime embeds and what its API returns. */
import type { BackendSet } from '../backends/types.js';
import type { TraceRecorder } from '../backends/trace.js';
import type { GuardPlan } from '../guards/types.js';
import type { StageChoice } from '../plan/dp.js';
import type { PlanSpec } from '../plan/types.js';
import type { PolicyOptions } from '../policy/policy.js';
import type { SwitchCost } from '../policy/cost.js';
import type { SystemSpec } from '../system/types.js';
import type { Tensor } from '../tensor.js';

/** A kernel parameter as the runtime checks inputs against it. */
export interface RuntimeParam {
  name: string;
  kind: 'sparse' | 'dense' | 'scalar';
  /** Dim names or literal sizes. */
  shape: (string | number)[];
}

/** The flat features guards read (`A.nnz`, `dim.f`). */
export type GuardFeatures = Readonly<Record<string, number>>;

export interface RuntimeConfig {
  program: string;
  kernel: string;
  spec: PlanSpec;
  guards: GuardPlan;
  params: RuntimeParam[];
  /** The generated straight-line guards: the partition id for a feature record. */
  guard: (f: GuardFeatures) => number;
}

export interface RuntimeOptions {
  system: SystemSpec;
  backends: BackendSet;
  policy?: PolicyOptions;
  /** Stages, transfers and switches on the runtime's clock, per device. */
  trace?: TraceRecorder;
  /** Called with every decision (also kept in stats().log). */
  log?: (e: DecisionLogEntry) => void;
}

export type RuntimeInputs = Readonly<Record<string, Tensor | number>>;

export interface Predicted {
  periodMs: number;
  latencyMs: number;
  energyJ: number;
}

export interface PartitionRef {
  id: number;
  label: string;
  /** Made by a re-plan for an out-of-range input (not one of the guards' partitions). */
  replanned: boolean;
}

export interface DecisionLogEntry {
  seq: number;
  /** The caller's name for the input, if given. */
  input?: string;
  event: 'initial' | 'switch' | 'stay';
  /** The guards' pick (or the re-plan's mapping) for this input. */
  selected: PartitionRef;
  running: PartitionRef;
  previous?: PartitionRef;
  switched: boolean;
  reason: string;
  path: string[];
  inRange: boolean;
  outOfRange: string[];
  replan?: { reason: string; planMs: number };
  fallback?: string;
  gainPerRun?: number;
  expectedRuns?: number;
  units: 'ms' | 'J';
  switchCost?: SwitchCost;
  predicted: Predicted;
}

export interface RunResult<O = Map<string, Tensor>> {
  outputs: O;
  partition: PartitionRef;
  switched: boolean;
  reason: string;
  path: string[];
  predicted: Predicted;
  /** Wall time of computing the outputs on this host. */
  wallMs: number;
  /** Start and end on the runtime's clock (the cost model's for sim stages). */
  startMs: number;
  endMs: number;
  log: DecisionLogEntry;
}

export interface Explanation {
  features: Record<string, number>;
  path: string[];
  inRange: boolean;
  outOfRange: string[];
  selected: PartitionRef & { choices: StageChoice[] };
  running?: PartitionRef;
  predicted: { selected: Predicted | undefined; running: Predicted | undefined };
  wouldSwitch: boolean;
  reason: string;
}

export interface RuntimeStats {
  runs: number;
  switches: number;
  replans: number;
  fallbacks: number;
  byPartition: Record<string, number>;
  clockMs: number;
  wallMs: number;
  switchCostMs: number;
  log: DecisionLogEntry[];
}
