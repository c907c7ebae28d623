/** What a generated runtime embeds and what its API returns. */
import type { ValueDtype } from '../dtype.js';
import type { StageBackends, StageRun } from '../exec/index.js';
import type { TraceRecorder } from './trace.js';
import type { GuardPlans } from '../guards/objectives.js';
import type { StageChoice } from '../plan/dp.js';
import type { Mapping, Objective, PlanSpec } from '../plan/types.js';
import type { PolicyOptions } from '../policy/policy.js';
import type { SwitchCost } from '../policy/cost.js';
import type { SystemSpec } from '../system/types.js';
import type { Tensor } from '../tensor.js';
import type { WasmManifest } from '../wasm/manifest.js';
import type { HistoryLog } from '../history/log.js';

/** A kernel parameter as the runtime checks inputs against it. */
export interface RuntimeParam {
  name: string;
  kind: 'sparse' | 'dense' | 'scalar';
  /** Dim names or literal sizes. */
  shape: (string | number)[];
  /**
   * The element type: a scalar's value is checked against it (DY3042 for one the type does not hold: every backend
   * stores it in the type). createGuardedRuntime takes it from the config's manifest, what the backends run.
   */
  dtype?: ValueDtype;
}

/** The flat features guards read (`A.nnz`, `dim.f`). */
export type GuardFeatures = Readonly<Record<string, number>>;

export interface RuntimeConfig {
  program: string;
  /** Hash of the program's loop IR: native libraries must carry the same (runtime/native). */
  programHash: string;
  kernel: string;
  /** The kernel's buffers, sizes and program order (the wasm manifest): what every backend runs. */
  manifest: WasmManifest;
  spec: PlanSpec;
  /** The objective the runtime starts with (the compile's --objective); `setObjective` changes it. */
  objective: Objective;
  /**
   * The guard plan of each objective, as buildGuards made it (its own
   * partition ids); at least the initial objective's. All count figures the
   * same way (energy scope, stream length).
   */
  guards: GuardPlans;
  params: RuntimeParam[];
  /**
   * The generated straight-line guards of each objective with guards: the
   * partition for a feature record, as its id in the table of every
   * objective's partitions (runtime/guards/objectives.ts partitionTable;
   * treeGuards computes the same from the trees).
   */
  guard: Partial<Record<Objective, (f: GuardFeatures) => number>>;
}

/** How many of the latest decisions a runtime keeps in stats().log unless told (RuntimeOptions.keepLog). */
export const DEFAULT_KEEP_LOG = 1000;

export interface RuntimeOptions {
  system: SystemSpec;
  /** The objective to start with (default the config's, the compile's --objective); as setObjective before the first input. */
  objective?: Objective;
  /** The backend of each device kind partitions may use (openProject builds them for a compiled project). */
  backends: StageBackends;
  policy?: PolicyOptions;
  /** Stages, transfers and switches on the runtime's clock, per device. */
  trace?: TraceRecorder;
  /** Called with every decision (the last `keepLog` of them are also kept in stats().log). */
  log?: (e: DecisionLogEntry) => void;
  /**
   * How many of the latest decisions stats().log keeps (default DEFAULT_KEEP_LOG, 1,000; 0 keeps none): a runtime
   * serving inputs for days kept every entry, about 1-3 KB each. The counts of stats() cover every input either way.
   */
  keepLog?: number;
  /** Appends every op run (implementation, device, work, features, measured ms) to a per-machine history (`dype calibrate --history` fits it). */
  history?: HistoryLog;
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

/** The outcome of streaming a sequence of inputs. */
export interface StreamResult<O = Map<string, Tensor>> {
  results: RunResult<O>[];
  /** The model clock's makespan of the sequence (stages of successive inputs overlap). */
  makespanMs: number;
  /** Measured wall time of the whole stream, and the sum of its stages' measured times (what it would take one after another). */
  wallMs: number;
  stageSumMs: number;
}

export interface DecisionLogEntry {
  seq: number;
  /** The objective whose guards (or re-plan) picked for this input, and in whose units the switch was weighed. */
  objective: Objective;
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
  /**
   * Measured wall time of this input's decision, ms: binding the inputs, the features the guards read, the guards,
   * the cost model's weighing of a leaf's open partitions, a re-plan, fallbacks and the switching policy (not the
   * run). `decisionReused`: the choice kept for the same pattern, dims and scalars was taken (no feature read, no
   * guard run); false for a new pattern, and for a re-planned one's second input (its choice is kept from then on).
   */
  decisionMs: number;
  decisionReused: boolean;
  predicted: Predicted;
  /** What ran: per stage the ops, instances, backend, measured ms and bytes moved in and sent home. */
  stages: { ops: string[]; devices: string[]; backend: string; ms: number; bytesIn: number; bytesOut: number }[];
}

export interface RunResult<O = Map<string, Tensor>> {
  outputs: O;
  partition: PartitionRef;
  switched: boolean;
  reason: string;
  path: string[];
  predicted: Predicted;
  /** Measured wall time of running the input's stages (transfers, kernels, results home). */
  wallMs: number;
  /** What ran: per stage the backend, devices and measured time and bytes. */
  stages: StageRun[];
  /** The cost model's mapping for this input on the running partition: per stage the implementations chosen and the predicted times. */
  mapping: Mapping;
  /** Start and end on the runtime's model clock (the cost model's stage times; pipelined inputs overlap). */
  startMs: number;
  endMs: number;
  log: DecisionLogEntry;
}

export interface Explanation {
  /** The objective that decides (the runtime's current one). */
  objective: Objective;
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
  /** The current objective, and the runs each objective decided. */
  objective: Objective;
  byObjective: Partial<Record<Objective, number>>;
  /** Measured milliseconds and stage runs per backend. */
  byBackend: Record<string, { stages: number; ms: number }>;
  switches: number;
  replans: number;
  fallbacks: number;
  /** Inputs whose kept choice was reused (DecisionLogEntry.decisionReused), and every decision's measured time summed, ms. */
  decisionsReused: number;
  decisionMs: number;
  byPartition: Record<string, number>;
  /** Where the model clock stands after the last input (the cost model's stage times and switches): modelled. */
  clockMs: number;
  /** Measured wall time of every input's stages (RunResult.wallMs summed). */
  wallMs: number;
  /** The switches' cost (drain, migration, bitstream loads) as the policy priced it: modelled. */
  switchCostMs: number;
  /** The latest decisions, oldest first: at most RuntimeOptions.keepLog of them. */
  log: DecisionLogEntry[];
}
